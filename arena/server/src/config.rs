//! What `serve` is given: the lobby's, the streams', the shutdown's, the admin token's, the
//! lease's and the connections' settings. `knobel serve`'s flags build it (`settings`); the
//! server (`server::serve`) and tests take it. It sits below both, so neither imports the
//! other.

use std::time::Duration;

use crate::auth;
use crate::lobby::LobbyConfig;
use crate::net::NetLimits;

/// Settings of the server.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// How matches are formed and timed.
    pub lobby: LobbyConfig,
    /// Most Play streams one bot may have open at once.
    pub max_streams_per_bot: usize,
    /// How long running matches get on shutdown before they are aborted.
    pub shutdown_grace: Duration,
    /// The admin token guarding the `Admin` service; `None` disables it.
    pub admin_token: Option<auth::AdminToken>,
    /// How long each renewal of this arena's lease holds (see [`crate::instance`]): if the
    /// arena stops renewing it (it crashed, or is cut off from the database), other arenas
    /// on the same database abort its running matches after this long.
    pub instance_lease: Duration,
    /// Connection bounds and timeouts, streams without Hello, failed logins.
    pub net: NetLimits,
    /// Cluster mode (with a PostgreSQL store): the broker and the peer port.
    pub cluster: Option<crate::cluster::ClusterConfig>,
}

impl Default for ServerConfig {
    fn default() -> ServerConfig {
        ServerConfig {
            lobby: LobbyConfig::default(),
            max_streams_per_bot: 8,
            shutdown_grace: Duration::from_secs(5),
            admin_token: None,
            instance_lease: Duration::from_secs(30),
            net: NetLimits::default(),
            cluster: None,
        }
    }
}
