//! The gRPC server: the `knobel.v1.Arena` service, the `knobel.v1.Admin` service, health
//! and reflection.
//!
//! One `Play` stream is one seat. The connection task of a stream authenticates the bot
//! (before any seat is taken), reads its Hello, then repeatedly joins the lobby and pumps
//! messages between the bot and the referee of its current match. Engine types become wire
//! types only here, through `knobel_proto::convert` (the one wire boundary).
//!
//! This file holds [`serve`] (what runs, and the shutdown order) and the Arena service's
//! state and RPC table; `play` and `stream_link` hold the Play streams, `read_only` the
//! other Arena RPCs, `admin` the Admin service and its authentication, `status` the
//! statuses they share.

mod admin;
pub mod leagues;
mod play;
mod read_only;
mod status;
mod stream_link;
#[cfg(test)]
mod tests;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use knobel_proto::outbound::arena_server::{Arena, ArenaServer};
use knobel_proto::v1 as pb;
use knobel_proto::v1::admin_server::AdminServer;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tonic::service::interceptor::InterceptedService;
use tonic::{Request, Response, Status, Streaming};
use tracing::{info, warn};

use crate::league::scheduler::Scheduler;
use crate::league::service::{Leagues, LiveLeagues};
use crate::league::snapshot::LeagueSnapshots;
use crate::lobby::{Lobby, SeatPool};
use crate::metrics::Metrics;
use crate::net::{self, AuthThrottle, NetLimits, PeerCounter};
use crate::store::{Store, StoreError, StoreOperation};
use crate::streams::StreamRegistry;

use admin::{AdminAuth, AdminService};
use play::PlayStream;
use read_only::LogChunks;

/// Largest message the arena accepts from a bot, in bytes.
pub const MAX_MESSAGE_BYTES: usize = 64 * 1024;
/// Largest Admin request the arena reads, in bytes: a league file at its limit
/// ([`crate::league::service::MAX_CONFIG_BYTES`]) with room to spare, so that a file over
/// that limit is read and refused with INVALID_ARGUMENT naming it (only an authenticated
/// caller's request is read at all).
pub const MAX_ADMIN_MESSAGE_BYTES: usize = 1024 * 1024;
/// Largest message the arena sends, in bytes (encoded): GetMatchLog refuses a log that does
/// not fit, pointing to StreamMatchLog.
pub const MAX_SENT_MESSAGE_BYTES: usize = 4 * 1024 * 1024;
/// Largest piece of a log StreamMatchLog sends, in bytes of its JSON text.
pub const LOG_CHUNK_BYTES: usize = 1024 * 1024;
/// Most match logs served at once (a log is held whole in memory while it is sent: a
/// Zokken match of 100 000 rounds has a log of about 470 MB); more are refused with
/// RESOURCE_EXHAUSTED.
pub const MAX_LOGS_IN_FLIGHT: usize = 4;

/// Why a log cannot be served: too many are being sent.
pub fn logs_busy() -> String {
    format!(
        "{MAX_LOGS_IN_FLIGHT} match logs are being sent already, the most at once: retry in a moment"
    )
}
/// How long a new stream has to send its Hello, by default (see
/// [`NetLimits::hello_timeout`]).
pub const HELLO_TIMEOUT: Duration = Duration::from_secs(10);
/// Pings a stream may send per minute before they are refused.
pub const MAX_PINGS_PER_MINUTE: u32 = 120;

pub use crate::config::ServerConfig;

/// Why the server stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The gRPC transport failed.
    #[error("grpc server failed: {0}")]
    Transport(#[from] tonic::transport::Error),
    /// The metrics endpoint failed.
    #[error("metrics endpoint failed: {0}")]
    Metrics(#[from] std::io::Error),
    /// Cluster mode could not start.
    #[error(transparent)]
    Cluster(#[from] crate::cluster::ClusterError),
    /// The reflection service could not be built.
    #[error("cannot build the reflection service: {0}")]
    Reflection(#[from] tonic_reflection::server::Error),
    /// The arena could not register itself in the store (take its lease).
    #[error("cannot register the arena instance in the store: {0}")]
    Register(#[from] StoreError),
    /// The arena could not read (or make) the page-token key in the store.
    #[error("cannot read the page-token key from the store: {0}")]
    PageTokenKey(StoreError),
    /// A connection limit is out of its range.
    #[error(transparent)]
    Limits(#[from] crate::settings::NetLimitsError),
}

/// How long, after the running matches have ended, the arena waits on shutdown for the
/// results it could not write yet (the database being unavailable).
pub const RECORDS_DRAIN: Duration = Duration::from_secs(10);

/// Runs the arena on `listener` (and metrics on `metrics_listener`) until `shutdown`
/// resolves.
///
/// First the arena registers itself as an instance in the store (see
/// [`crate::instance`]), aborting the running matches of arenas that are gone, and keeps
/// its lease renewed while it runs. On `shutdown`: health turns NOT_SERVING at once; no new
/// match is seated and waiting bots are refused with UNAVAILABLE; running matches play on
/// (the server keeps serving their streams) for up to `config.shutdown_grace`, then the
/// rest are aborted and recorded as aborted; the results not yet written are given up to
/// [`RECORDS_DRAIN`]; then the listener closes and the lease is released.
pub async fn serve(
    config: ServerConfig,
    store: Store,
    listener: TcpListener,
    metrics_listener: Option<TcpListener>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    serve_with_web(config, store, listener, metrics_listener, None, shutdown).await
}

/// How long a stopping arena waits for the web viewer's open pages to end.
const WEB_STOP_WAIT: Duration = Duration::from_secs(5);

/// [`serve`], and the web viewer ([`crate::web`]) on `web_listener` if one is given: it
/// serves until the arena has stopped, the shutdown grace included (its live streams end
/// then).
///
/// In order: the instance registers and its heartbeat starts; the services are built
/// (`build_services`, which starts their background tasks); the web viewer, health and
/// reflection, the shutdown signal and the metrics endpoint start; the gRPC server serves
/// until the shutdown has drained the lobby (`serve_grpc`); then `stop_after_serving`
/// stops the rest.
pub async fn serve_with_web(
    config: ServerConfig,
    store: Store,
    listener: TcpListener,
    metrics_listener: Option<TcpListener>,
    web_listener: Option<TcpListener>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    config.net.validate()?;
    // Metrics are counted only where they are served.
    let metrics = if metrics_listener.is_some() {
        Metrics::new(config.lobby.time_control)
    } else {
        Metrics::disabled()
    };
    let (instance, store, page_tokens) = register(&config, store).await?;
    let (stop_heartbeat, heartbeat) = start_heartbeat(&instance, &store, &metrics);
    let (shutdown_tx, shutdown_rx) = watch::channel(false);
    let services = build_services(
        &config,
        &store,
        &metrics,
        &instance,
        page_tokens.clone(),
        &shutdown_rx,
    )
    .await?;
    // The web viewer serves through the grace (viewers see the last matches end) and stops
    // with the arena.
    let (stop_web, web_stopped) = tokio::sync::oneshot::channel::<()>();
    let web_task = web_listener.map(|listener| {
        spawn_web(
            listener,
            &store,
            &metrics,
            &services,
            page_tokens,
            web_stopped,
        )
    });
    let (health_reporter, router) = health_and_reflection(&config.net).await?;

    // One signal for everything: the caller's shutdown future flips the watch. Health
    // says NOT_SERVING first, before anything else stops.
    let signal = shutdown_rx.clone();
    // A metrics endpoint that fails (its listening socket closed) stops the arena as a
    // shutdown does, and `serve` then returns its error: an arena no one can scrape is
    // restarted rather than left running unobserved.
    let (metrics_failed, metrics_failure) = tokio::sync::oneshot::channel::<std::io::Error>();
    let metrics_error = spawn_shutdown_signal(
        shutdown,
        health_reporter.clone(),
        shutdown_tx,
        metrics_failure,
    );
    // Metrics are served until the arena has stopped.
    let metrics_task = metrics_listener
        .map(|listener| spawn_metrics_endpoint(metrics.clone(), listener, metrics_failed));
    let result = serve_grpc(router, listener, &config, services, signal).await;
    let running = Running {
        stop_heartbeat,
        heartbeat,
        metrics_task,
        stop_web,
        web_task,
    };
    stop_after_serving(running, &store, &instance).await;
    result?;
    match metrics_error.lock().expect("not poisoned").take() {
        Some(error) => Err(ServeError::Metrics(error)),
        None => Ok(()),
    }
}

/// Registers the arena as an instance in the store (see [`crate::instance`]): the
/// instance, the store owned by it and the page tokens (their key read from the store).
async fn register(
    config: &ServerConfig,
    store: Store,
) -> Result<
    (
        crate::instance::Instance,
        Store,
        crate::page_token::PageTokens,
    ),
    ServeError,
> {
    let instance = crate::instance::Instance::register(&store, config.instance_lease).await?;
    let store = store.owned_by(instance.id.clone());
    let page_tokens = crate::page_token::PageTokens::new(
        store
            .page_token_key()
            .await
            .map_err(ServeError::PageTokenKey)?,
    );
    Ok((instance, store, page_tokens))
}

/// Keeps `instance`'s lease renewed until the returned sender says stop.
fn start_heartbeat(
    instance: &crate::instance::Instance,
    store: &Store,
    metrics: &Metrics,
) -> (watch::Sender<bool>, tokio::task::JoinHandle<()>) {
    let (stop_heartbeat, heartbeat_stopped) = watch::channel(false);
    let heartbeat = tokio::spawn(instance.clone().heartbeat(
        store.clone(),
        metrics.clone(),
        heartbeat_stopped,
    ));
    (stop_heartbeat, heartbeat)
}

/// What the gRPC server serves, and what the web viewer shares with it.
struct Services {
    arena: ArenaService,
    admin: AdminService,
    admin_auth: AdminAuth,
    /// Drained on shutdown.
    lobby: Arc<Lobby>,
    leagues: Leagues,
    /// The one league snapshot the metrics and the live pages read.
    snapshots: LeagueSnapshots,
    logs_in_flight: Arc<tokio::sync::Semaphore>,
    net_metrics: net::NetMetrics,
}

/// The lobby, the streams, the leagues (their background tasks started, see
/// `start_background_tasks`) and the services.
async fn build_services(
    config: &ServerConfig,
    store: &Store,
    metrics: &Metrics,
    instance: &crate::instance::Instance,
    page_tokens: crate::page_token::PageTokens,
    shutdown_rx: &watch::Receiver<bool>,
) -> Result<Services, ServeError> {
    let streams = StreamRegistry::default();
    let lobby = Lobby::new(
        config.lobby.clone(),
        (store.clone(), streams.clone()),
        metrics.clone(),
        shutdown_rx.clone(),
    );
    // In cluster mode a failed login counts on every arena.
    let throttle = Arc::new(AuthThrottle::from_limits(&config.net));
    let (seats, cluster) = seat_pool(
        config,
        store,
        metrics,
        instance,
        (&lobby, &streams, &throttle),
        shutdown_rx,
    )
    .await?;
    let (leagues, snapshots) = start_background_tasks(
        store,
        metrics,
        instance,
        (seats, cluster.as_ref()),
        &streams,
        shutdown_rx,
    )
    .await;
    let logs_in_flight = Arc::new(tokio::sync::Semaphore::new(MAX_LOGS_IN_FLIGHT));
    let net_metrics = net::NetMetrics::new(metrics.registry());
    let admin = AdminService {
        metrics: metrics.clone(),
        store: store
            .clone()
            .counting_errors(metrics, StoreOperation::Admin),
        streams: streams.clone(),
        leagues: leagues.counting_errors(metrics, StoreOperation::Admin),
    };
    let admin_auth = AdminAuth {
        token: config.admin_token.clone(),
        throttle: throttle.clone(),
    };
    let arena = ArenaService {
        store: store.clone(),
        lobby: lobby.clone(),
        metrics: metrics.clone(),
        streams,
        max_streams_per_bot: config.max_streams_per_bot,
        cluster,
        shutdown: shutdown_rx.clone(),
        throttle,
        pending_hello: PeerCounter::with_gauge(
            config.net.max_pending_hello,
            config.net.max_pending_hello_per_peer,
            Some(net_metrics.pending_hello.clone()),
        ),
        hello_timeout: config.net.hello_timeout,
        logs_in_flight: logs_in_flight.clone(),
        leagues: leagues.counting_errors(metrics, StoreOperation::Standings),
        page_tokens,
    };
    Ok(Services {
        arena,
        admin,
        admin_auth,
        lobby,
        leagues,
        snapshots,
        logs_in_flight,
        net_metrics,
    })
}

/// The seats league matches are played with: this arena's lobby or, in cluster mode (which
/// needs PostgreSQL), the lobby and the streams waiting on the other arenas; and the
/// cluster joined, in cluster mode. The cluster's presence tells the other arenas the open
/// `streams` of this arena's bots, and the failed logins of `throttle` count on every arena.
async fn seat_pool(
    config: &ServerConfig,
    store: &Store,
    metrics: &Metrics,
    instance: &crate::instance::Instance,
    (lobby, streams, throttle): (&Arc<Lobby>, &StreamRegistry, &Arc<AuthThrottle>),
    shutdown_rx: &watch::Receiver<bool>,
) -> Result<(Arc<dyn SeatPool>, Option<Arc<crate::cluster::Cluster>>), ServeError> {
    let Some(cluster) = &config.cluster else {
        return Ok((lobby.clone(), None));
    };
    let backend = store.backend_name();
    if backend != "postgres" {
        return Err(crate::cluster::ClusterError::NotPostgres { backend }.into());
    }
    let joined = crate::cluster::Cluster::join(
        cluster,
        instance.id.to_string(),
        (lobby.clone(), streams.clone(), throttle.clone()),
        crate::cluster::ClusterMetrics::new(metrics.registry()),
        (shutdown_rx.clone(), config.shutdown_grace),
    )
    .await?;
    let pool = crate::cluster::ClusterPool::new(lobby.clone(), joined.clone());
    Ok((pool, Some(joined)))
}

/// Starts the background tasks of a serving arena, in this order: the revocation watch,
/// the league scheduler, and (with metrics, after the registered bots' series) the
/// league series' refresh from the league snapshot. Gives the leagues and the snapshot. In
/// cluster mode a league started through this arena is told to the others, and theirs to
/// this arena's scheduler.
async fn start_background_tasks(
    store: &Store,
    metrics: &Metrics,
    instance: &crate::instance::Instance,
    (seats, cluster): (Arc<dyn SeatPool>, Option<&Arc<crate::cluster::Cluster>>),
    streams: &StreamRegistry,
    shutdown_rx: &watch::Receiver<bool>,
) -> (Leagues, LeagueSnapshots) {
    // Bots revoked by another process (`knobel bot revoke`) lose their streams within
    // `streams::REVOKE_POLL`.
    tokio::spawn(
        streams.clone().watch_revocations(
            store
                .clone()
                .counting_errors(metrics, StoreOperation::Revocations),
            shutdown_rx.clone(),
        ),
    );
    // Leagues: the scheduler plays their matches among the connected bots.
    // Each path below has a store handle of its own that counts its failures.
    let scheduler = Scheduler::new(
        store
            .clone()
            .counting_errors(metrics, StoreOperation::LeagueScheduler),
        seats,
        Some(instance.id.to_string()),
    );
    tokio::spawn(scheduler.clone().run(shutdown_rx.clone()));
    if metrics.enabled() {
        register_bot_series(store, metrics).await;
    }
    let live: Arc<dyn LiveLeagues> = match cluster {
        Some(cluster) => cluster.share_league_starts(scheduler).await,
        None => scheduler,
    };
    let leagues = Leagues::new(store.clone(), live);
    let snapshots =
        LeagueSnapshots::new(leagues.counting_errors(metrics, StoreOperation::LeagueSnapshot));
    if metrics.enabled() {
        tokio::spawn(crate::metrics::leagues::refresh(
            metrics.clone(),
            snapshots.clone(),
            shutdown_rx.clone(),
        ));
    }
    (leagues, snapshots)
}

/// Registered bots have their series from start-up, in registration order.
async fn register_bot_series(store: &Store, metrics: &Metrics) {
    match store.list_bots().await {
        Ok(bots) => bots
            .iter()
            .filter(|bot| bot.revoked_at_ms.is_none())
            .for_each(|bot| metrics.bot_registered(&bot.name)),
        Err(error) => {
            warn!(%error, "cannot list the bots for the metrics: their series appear as they connect")
        }
    }
}

/// Serves the web viewer on `listener`, reading through handles of its own that count
/// their failures, until `stopped` fires (or its sender is dropped).
fn spawn_web(
    listener: TcpListener,
    store: &Store,
    metrics: &Metrics,
    services: &Services,
    page_tokens: crate::page_token::PageTokens,
    stopped: tokio::sync::oneshot::Receiver<()>,
) -> tokio::task::JoinHandle<()> {
    let web = crate::web::Web::new(
        store.clone().counting_errors(metrics, StoreOperation::Web),
        services
            .leagues
            .counting_errors(metrics, StoreOperation::Web),
        services.snapshots.clone(),
        services.logs_in_flight.clone(),
        page_tokens,
    );
    tokio::spawn(async move {
        let stopped = async move {
            let _ = stopped.await;
        };
        if let Err(error) = crate::web::serve(web, listener, stopped).await {
            warn!(error = %error, "the web viewer failed");
        }
    })
}

/// Serves the metrics on `listener` until the task is aborted; an error goes to `failed`.
fn spawn_metrics_endpoint(
    metrics: Metrics,
    listener: TcpListener,
    failed: tokio::sync::oneshot::Sender<std::io::Error>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        if let Err(error) = metrics.serve(listener, std::future::pending::<()>()).await {
            let _ = failed.send(error);
        }
    })
}

/// Health (the Arena service SERVING at once) and reflection, both versions, on a gRPC
/// server with the keepalive of `net`: the router the Arena and Admin services join.
async fn health_and_reflection(
    net: &NetLimits,
) -> Result<
    (
        tonic_health::server::HealthReporter,
        tonic::transport::server::Router,
    ),
    ServeError,
> {
    let (health_reporter, health_service) = tonic_health::server::health_reporter();
    health_reporter
        .set_serving::<ArenaServer<ArenaService>>()
        .await;
    let reflection_v1 = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(knobel_proto::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .build_v1()?;
    let reflection_v1alpha = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(knobel_proto::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .build_v1alpha()?;
    let router = tonic::transport::Server::builder()
        .http2_keepalive_interval(Some(net.keepalive_interval))
        .http2_keepalive_timeout(Some(net.keepalive_timeout))
        .add_service(health_service)
        .add_service(reflection_v1)
        .add_service(reflection_v1alpha);
    Ok((health_reporter, router))
}

/// The task that turns the caller's `shutdown` (or a failure of the metrics endpoint,
/// which it keeps in the returned slot) into the one shutdown signal: health says
/// NOT_SERVING first, then the watch flips.
fn spawn_shutdown_signal(
    shutdown: impl Future<Output = ()> + Send + 'static,
    reporter: tonic_health::server::HealthReporter,
    shutdown_tx: watch::Sender<bool>,
    metrics_failure: tokio::sync::oneshot::Receiver<std::io::Error>,
) -> Arc<std::sync::Mutex<Option<std::io::Error>>> {
    let metrics_error = Arc::new(std::sync::Mutex::new(None));
    let failed_with = metrics_error.clone();
    tokio::spawn(async move {
        tokio::select! {
            () = shutdown => {}
            Ok(error) = metrics_failure => {
                tracing::error!(%error, "the metrics endpoint failed: the arena shuts down");
                *failed_with.lock().expect("not poisoned") = Some(error);
            }
        }
        reporter
            .set_not_serving::<ArenaServer<ArenaService>>()
            .await;
        reporter
            .set_service_status("", tonic_health::ServingStatus::NotServing)
            .await;
        let _ = shutdown_tx.send(true);
    });
    metrics_error
}

/// Serves the Arena and Admin services on `router` until `signal` says shutdown and the
/// lobby has drained (the running matches within the grace, then the records).
async fn serve_grpc(
    router: tonic::transport::server::Router,
    listener: TcpListener,
    config: &ServerConfig,
    services: Services,
    mut signal: watch::Receiver<bool>,
) -> Result<(), tonic::transport::Error> {
    let drain_lobby = services.lobby;
    let grace = config.shutdown_grace;
    let arena = ArenaServer::new(services.arena)
        .max_decoding_message_size(MAX_MESSAGE_BYTES)
        .max_encoding_message_size(MAX_SENT_MESSAGE_BYTES);
    // Every Admin call is authenticated before its method runs (what
    // `AdminServer::with_interceptor` does, on the server with its message limit).
    let admin = InterceptedService::new(
        AdminServer::new(services.admin).max_decoding_message_size(MAX_ADMIN_MESSAGE_BYTES),
        services.admin_auth,
    );
    // Connections within the bounds, closed when silent (see `net`); `net` sets
    // TCP_NODELAY, or Nagle's algorithm holds small messages back for the bot's delayed
    // ACK (~40 ms).
    let incoming = net::incoming(listener, &config.net, services.net_metrics);
    router
        .add_service(arena)
        .add_service(admin)
        .serve_with_incoming_shutdown(incoming, async move {
            crate::shutdown::requested(&mut signal).await;
            info!(
                grace_secs = grace.as_secs_f64(),
                "shutting down: no new matches; running matches may finish within the grace"
            );
            // The server keeps serving the running matches' streams meanwhile.
            drain_lobby.drain(grace, RECORDS_DRAIN).await;
        })
        .await
}

/// What still runs when the gRPC server has returned.
struct Running {
    stop_heartbeat: watch::Sender<bool>,
    heartbeat: tokio::task::JoinHandle<()>,
    metrics_task: Option<tokio::task::JoinHandle<()>>,
    stop_web: tokio::sync::oneshot::Sender<()>,
    web_task: Option<tokio::task::JoinHandle<()>>,
}

/// The shutdown steps after the gRPC server has returned, in order: the heartbeat stops,
/// the lease is released, the metrics endpoint stops, then the web viewer (waited for up to
/// [`WEB_STOP_WAIT`]).
async fn stop_after_serving(running: Running, store: &Store, instance: &crate::instance::Instance) {
    let _ = running.stop_heartbeat.send(true);
    let _ = running.heartbeat.await;
    match store.release_lease(&instance.id).await {
        Ok(_) => info!(instance = %instance.id, "the arena's lease is released"),
        Err(error) => {
            warn!(instance = %instance.id, error = %error, "cannot release the arena's lease: it runs out by itself")
        }
    }
    if let Some(task) = running.metrics_task {
        task.abort();
    }
    let _ = running.stop_web.send(());
    if let Some(mut task) = running.web_task {
        // Its live pages end at once; a page still being read is not waited for long.
        if tokio::time::timeout(WEB_STOP_WAIT, &mut task)
            .await
            .is_err()
        {
            task.abort();
        }
    }
    info!("arena stopped");
}

/// The `knobel.v1.Arena` service.
struct ArenaService {
    store: Store,
    lobby: Arc<Lobby>,
    metrics: Metrics,
    /// Open Play streams per bot id.
    streams: StreamRegistry,
    max_streams_per_bot: usize,
    /// The cluster, in cluster mode: a bot's streams on other arenas count against
    /// `max_streams_per_bot` too.
    cluster: Option<Arc<crate::cluster::Cluster>>,
    shutdown: watch::Receiver<bool>,
    /// Failed logins per peer address.
    throttle: Arc<AuthThrottle>,
    /// Streams that have not sent their Hello yet, in all and per peer address.
    pending_hello: PeerCounter,
    hello_timeout: Duration,
    /// Match logs being served (GetMatchLog, StreamMatchLog): each is held whole in memory
    /// while it is sent, so at most [`MAX_LOGS_IN_FLIGHT`] at once.
    logs_in_flight: Arc<tokio::sync::Semaphore>,
    /// Leagues' progress and standings.
    leagues: Leagues,
    /// ListMatches's page tokens.
    page_tokens: crate::page_token::PageTokens,
}

impl ArenaService {
    /// The store, counting its failures because the database is unavailable in the metrics
    /// as `operation` (the one way store errors are counted: [`Store::counting_errors`]).
    fn store_for(&self, operation: StoreOperation) -> Store {
        self.store.clone().counting_errors(&self.metrics, operation)
    }
}

/// The RPC table: Play is in [`play`], the other RPCs, which only read, in [`read_only`].
#[tonic::async_trait]
impl Arena for ArenaService {
    type PlayStream = PlayStream;

    async fn play(
        &self,
        request: Request<Streaming<pb::BotMessage>>,
    ) -> Result<Response<PlayStream>, Status> {
        play::play(self, request).await
    }

    async fn list_matches(
        &self,
        request: Request<pb::ListMatchesRequest>,
    ) -> Result<Response<pb::ListMatchesResponse>, Status> {
        read_only::list_matches(self, request).await
    }

    async fn get_match_log(
        &self,
        request: Request<pb::GetMatchLogRequest>,
    ) -> Result<Response<pb::MatchLogResponse>, Status> {
        read_only::get_match_log(self, request).await
    }

    async fn get_match_record(
        &self,
        request: Request<pb::GetMatchLogRequest>,
    ) -> Result<Response<pb::MatchRecordResponse>, Status> {
        read_only::get_match_record(self, request).await
    }

    type ExportLeagueStream = read_only::ArchiveChunks;

    async fn export_league(
        &self,
        request: Request<pb::ExportLeagueRequest>,
    ) -> Result<Response<Self::ExportLeagueStream>, Status> {
        read_only::export_league(self, request).await
    }

    type StreamMatchLogStream = LogChunks;

    async fn stream_match_log(
        &self,
        request: Request<pb::GetMatchLogRequest>,
    ) -> Result<Response<LogChunks>, Status> {
        read_only::stream_match_log(self, request).await
    }

    async fn get_standings(
        &self,
        request: Request<pb::GetStandingsRequest>,
    ) -> Result<Response<pb::GetStandingsResponse>, Status> {
        let name = request.into_inner().league;
        let view = self
            .leagues
            .standings(&name)
            .await
            .map_err(leagues::league_status)?;
        Ok(Response::new(leagues::wire_standings(
            leagues::wire_info(&view.info),
            &view.played.standings,
        )))
    }

    async fn list_leagues(
        &self,
        _request: Request<pb::ListLeaguesRequest>,
    ) -> Result<Response<pb::ListLeaguesResponse>, Status> {
        let leagues = self.leagues.leagues().await.map_err(status::internal)?;
        Ok(Response::new(pb::ListLeaguesResponse {
            leagues: leagues.iter().map(leagues::wire_info).collect(),
        }))
    }
}
