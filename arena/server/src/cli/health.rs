//! `knobel health`: the gRPC health check of a running arena, for container health checks
//! (the runtime image has no other gRPC client).

use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::Args;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;

/// `knobel health` flags.
#[derive(Args, Debug)]
pub struct HealthArgs {
    /// The arena's gRPC address (`--server` is an older name for it).
    #[arg(long = "arena", alias = "server", env = "KNOBEL_SERVER", default_value = super::league::DEFAULT_ARENA)]
    pub server: String,
    /// The service to ask about; empty: the arena as a whole.
    #[arg(long, default_value = "")]
    pub service: String,
    /// How long to wait for the answer, in milliseconds (1..=60000).
    #[arg(long, default_value_t = 2000, value_parser = clap::value_parser!(u64).range(1..=60_000))]
    pub timeout_ms: u64,
}

/// Asks the health service; `Ok` only if it says SERVING.
pub async fn run(args: HealthArgs) -> Result<()> {
    let timeout = Duration::from_millis(args.timeout_ms);
    let channel = knobel_bots::endpoint(&args.server)
        .with_context(|| format!("bad server address {:?}", args.server))?
        .connect_timeout(timeout)
        .timeout(timeout)
        .connect()
        .await
        .with_context(|| format!("cannot connect to {}", args.server))?;
    let status = HealthClient::new(channel)
        .check(HealthCheckRequest {
            service: args.service.clone(),
        })
        .await
        .map_err(super::league::call)
        .with_context(|| format!("health check of {} failed", args.server))?
        .into_inner()
        .status();
    if status != ServingStatus::Serving {
        bail!("{} answers {}", args.server, status.as_str_name());
    }
    println!("{}: SERVING", args.server);
    Ok(())
}
