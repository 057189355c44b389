//! The `knobel.v1.Admin` service (bot registration for the arena's organiser) and
//! [`AdminAuth`], the interceptor that authenticates every Admin call before its method runs.

use std::sync::Arc;

use knobel_proto::v1 as pb;
use knobel_proto::v1::admin_server::Admin;
use tonic::service::Interceptor;
use tonic::{Request, Response, Status};
use tracing::info;

use super::leagues::{league_status, wire_info};
use super::status::{bearer_token_of, check_throttle, internal, peer_of};
use crate::auth;
use crate::league::service::Leagues;
use crate::net::AuthThrottle;
use crate::store::{Store, StoreError};
use crate::streams::StreamRegistry;

/// The `knobel.v1.Admin` service: bot registration for the arena's organiser. Its calls
/// reach it only through [`AdminAuth`].
pub(super) struct AdminService {
    /// A registered bot gets its metric series at once.
    pub(super) metrics: crate::metrics::Metrics,
    pub(super) store: Store,
    /// To end a revoked bot's streams at once.
    pub(super) streams: StreamRegistry,
    /// League operations.
    pub(super) leagues: Leagues,
}

/// Authenticates an Admin call: refuses it if admin operations are disabled, if its peer's
/// failed logins are over the throttle, or if it does not present the admin token (a wrong
/// token counts as a failed login).
#[derive(Clone)]
pub(super) struct AdminAuth {
    /// The admin token; `None` disables the Admin service.
    pub(super) token: Option<auth::AdminToken>,
    /// Failed logins per peer address (shared with the Arena service).
    pub(super) throttle: Arc<AuthThrottle>,
}

impl Interceptor for AdminAuth {
    fn call(&mut self, request: Request<()>) -> Result<Request<()>, Status> {
        let Some(admin) = &self.token else {
            return Err(Status::permission_denied(
                "admin operations are disabled: start the arena with KNOBEL_ADMIN_TOKEN set",
            ));
        };
        let peer = peer_of(&request);
        check_throttle(&self.throttle, peer)?;
        match bearer_token_of(&request) {
            Some(token) if admin.verifies(token) => Ok(request),
            presented => {
                if presented.is_some() {
                    self.throttle.failed(peer);
                }
                Err(Status::unauthenticated(
                    "missing or wrong admin token: send `authorization: Bearer <admin token>`",
                ))
            }
        }
    }
}

fn bot_info(bot: crate::store::BotRecord) -> pb::BotInfo {
    pb::BotInfo {
        name: bot.name,
        created_unix_ms: bot.created_at_ms.max(0) as u64,
        revoked_unix_ms: bot.revoked_at_ms.map(|t| t.max(0) as u64),
    }
}

#[tonic::async_trait]
impl Admin for AdminService {
    async fn add_bot(
        &self,
        request: Request<pb::AddBotRequest>,
    ) -> Result<Response<pb::AddBotResponse>, Status> {
        let name = request.into_inner().name;
        auth::check_bot_name(&name).map_err(|e| Status::invalid_argument(e.to_string()))?;
        let token = auth::generate_token();
        let bot = match self.store.add_bot(&name, &auth::hash_token(&token)).await {
            Ok(bot) => bot,
            Err(error @ StoreError::NameTaken { .. }) => {
                return Err(Status::already_exists(error.to_string()));
            }
            Err(error) => return Err(internal(error)),
        };
        info!(bot = %bot.name, "bot registered");
        self.metrics.bot_registered(&bot.name);
        Ok(Response::new(pb::AddBotResponse {
            bot: Some(bot_info(bot)),
            token,
        }))
    }

    async fn revoke_bot(
        &self,
        request: Request<pb::RevokeBotRequest>,
    ) -> Result<Response<pb::RevokeBotResponse>, Status> {
        let name = request.into_inner().name;
        let revoked = self.store.revoke_bot(&name).await.map_err(internal)?;
        if revoked {
            // Its open streams end now (its running seats forfeit).
            let bot = self.store.bot_by_name(&name).await.map_err(internal)?;
            let bot_id = bot.map(|bot| bot.id);
            let streams = bot_id.map_or(0, |id| self.streams.revoke(id));
            info!(bot = %name, bot_id, streams, "bot revoked");
        }
        Ok(Response::new(pb::RevokeBotResponse { revoked }))
    }

    async fn list_bots(
        &self,
        _request: Request<pb::ListBotsRequest>,
    ) -> Result<Response<pb::ListBotsResponse>, Status> {
        let bots = self.store.list_bots().await.map_err(internal)?;
        Ok(Response::new(pb::ListBotsResponse {
            bots: bots.into_iter().map(bot_info).collect(),
        }))
    }

    async fn create_league(
        &self,
        request: Request<pb::CreateLeagueRequest>,
    ) -> Result<Response<pb::LeagueResponse>, Status> {
        let league = self
            .leagues
            .create(&request.into_inner().config_toml)
            .await
            .map_err(league_status)?;
        Ok(Response::new(pb::LeagueResponse {
            league: Some(wire_info(&league)),
        }))
    }

    async fn start_league(
        &self,
        request: Request<pb::LeagueRequest>,
    ) -> Result<Response<pb::LeagueResponse>, Status> {
        let league = self
            .leagues
            .start(&request.into_inner().name)
            .await
            .map_err(league_status)?;
        Ok(Response::new(pb::LeagueResponse {
            league: Some(wire_info(&league)),
        }))
    }

    async fn pause_league(
        &self,
        request: Request<pb::LeagueRequest>,
    ) -> Result<Response<pb::LeagueResponse>, Status> {
        let league = self
            .leagues
            .pause(&request.into_inner().name)
            .await
            .map_err(league_status)?;
        Ok(Response::new(pb::LeagueResponse {
            league: Some(wire_info(&league)),
        }))
    }

    async fn cancel_league(
        &self,
        request: Request<pb::LeagueRequest>,
    ) -> Result<Response<pb::LeagueResponse>, Status> {
        let league = self
            .leagues
            .cancel(&request.into_inner().name)
            .await
            .map_err(league_status)?;
        Ok(Response::new(pb::LeagueResponse {
            league: Some(wire_info(&league)),
        }))
    }
}
