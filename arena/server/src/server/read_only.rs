//! The Arena RPCs that only read the store: ListMatches, GetMatchLog, StreamMatchLog.

use std::pin::Pin;

use knobel_engine::Game;
use knobel_proto::convert;
use knobel_proto::v1 as pb;
use tokio_stream::Stream;
use tonic::{Request, Response, Status};

use super::{ArenaService, LOG_CHUNK_BYTES, MAX_SENT_MESSAGE_BYTES, logs_busy, status};
use crate::disclosure::{EndedLog, check_match_id, ended_log, withheld};
use crate::store::{MatchCursor, MatchFilter, MatchStatus, MatchSummary, StoreOperation};

/// The ListMatches RPC: one page of the recorded matches, newest first.
pub(super) async fn list_matches(
    service: &ArenaService,
    request: Request<pb::ListMatchesRequest>,
) -> Result<Response<pb::ListMatchesResponse>, Status> {
    let filter = match_filter(service, request.into_inner())?;
    let (found, more) = service
        .store_for(StoreOperation::ListMatches)
        .list_matches_page(&filter)
        .await
        .map_err(status::internal)?;
    let next_page_token = match found.last() {
        Some(last) if more => service.page_tokens.encode(&MatchCursor::of(last)),
        _ => String::new(),
    };
    let matches = found.into_iter().map(wire_summary).collect();
    Ok(Response::new(pb::ListMatchesResponse {
        matches,
        next_page_token,
    }))
}

/// The filter of a ListMatchesRequest: INVALID_ARGUMENT for an unknown game or status, a
/// page token this arena did not make, or a bot name too long.
fn match_filter(
    service: &ArenaService,
    request: pb::ListMatchesRequest,
) -> Result<MatchFilter, Status> {
    let game = match request.game {
        0 => None,
        value => Some(
            convert::game_from_wire("game", value)
                .map_err(|e| Status::invalid_argument(e.to_string()))?
                .name()
                .to_owned(),
        ),
    };
    let status = match pb::MatchStatus::try_from(request.status) {
        Ok(pb::MatchStatus::Unspecified) => None,
        Ok(pb::MatchStatus::Running) => Some(MatchStatus::Running),
        Ok(pb::MatchStatus::Finished) => Some(MatchStatus::Finished),
        Ok(pb::MatchStatus::Aborted) => Some(MatchStatus::Aborted),
        Err(_) => {
            return Err(Status::invalid_argument(format!(
                "status = {} is not a known value: legal values are 0..=3",
                request.status
            )));
        }
    };
    let after = service
        .page_tokens
        .decode(&request.page_token)
        .map_err(|e| Status::invalid_argument(e.to_string()))?;
    let bot_name = match request.bot_name {
        name if name.is_empty() => None,
        name if name.len() > knobel_proto::names::MAX_NAME_BYTES => {
            return Err(Status::invalid_argument(format!(
                "bot_name is {} bytes: names are at most {} bytes (empty: every bot)",
                name.len(),
                knobel_proto::names::MAX_NAME_BYTES
            )));
        }
        name => Some(name),
    };
    // 0: the default; over the cap: clamped to it (as the proto documents).
    let limit = match request.limit {
        0 => MatchFilter::DEFAULT_LIMIT,
        limit => limit.min(MatchFilter::MAX_LIMIT),
    };
    Ok(MatchFilter {
        game,
        status,
        bot_name,
        limit,
        after,
    })
}

/// A recorded match as ListMatches lists it.
fn wire_summary(m: MatchSummary) -> pb::MatchSummary {
    pb::MatchSummary {
        match_id: m.id,
        game: m
            .game
            .parse::<Game>()
            .map_or(0, |g| pb::Game::from(g) as i32),
        preset: m.preset,
        variants: serde_json::from_str::<knobel_engine::Rules>(&m.rules_json)
            .map(|rules| rules.variants_on().into_iter().map(str::to_owned).collect())
            .unwrap_or_default(),
        seat_names: m.seat_names,
        status: wire_status(m.status) as i32,
        // The full outcome; a match recorded before the store kept outcomes has its
        // placings only.
        outcome: match (m.outcome, m.placings) {
            (Some(outcome), _) => Some(pb::Outcome::from(&outcome)),
            (None, placings) => placings.map(|placings| pb::Outcome {
                placings: placings.into_iter().map(u32::from).collect(),
                ..pb::Outcome::default()
            }),
        },
        started_unix_ms: m.started_at_ms.max(0) as u64,
        finished_unix_ms: m.finished_at_ms.map(|t| t.max(0) as u64),
    }
}

/// The GetMatchLog RPC: the log of an ended match, in one message.
pub(super) async fn get_match_log(
    service: &ArenaService,
    request: Request<pb::GetMatchLogRequest>,
) -> Result<Response<pb::MatchLogResponse>, Status> {
    let id = request.into_inner().match_id;
    let (log_json, _serving) = service.ended_log(&id).await?;
    let seat_names = service
        .store_for(StoreOperation::GetMatchLog)
        .get_match(&id)
        .await
        .map_err(status::internal)?
        .map(|record| record.summary.seat_names)
        .unwrap_or_default();
    let response = pb::MatchLogResponse {
        match_id: id,
        log_json,
        seat_names,
    };
    let size = prost::Message::encoded_len(&response);
    if size > MAX_SENT_MESSAGE_BYTES {
        return Err(Status::resource_exhausted(format!(
            "the log of match {} is {size} bytes encoded, over GetMatchLog's limit of \
             {MAX_SENT_MESSAGE_BYTES} bytes: use StreamMatchLog, which sends any log in \
             chunks",
            response.match_id
        )));
    }
    Ok(Response::new(response))
}

/// The StreamMatchLog RPC: the log of an ended match, in chunks of [`LOG_CHUNK_BYTES`].
pub(super) async fn stream_match_log(
    service: &ArenaService,
    request: Request<pb::GetMatchLogRequest>,
) -> Result<Response<LogChunks>, Status> {
    let id = request.into_inner().match_id;
    let (log, serving) = service.ended_log(&id).await?;
    let log = bytes::Bytes::from(log);
    let total_bytes = log.len() as u64;
    // Cut lazily, as the client reads: one chunk at a time is copied out of the log.
    // The log counts as in flight until the stream is done or dropped.
    let chunks = (0..log.len().div_ceil(LOG_CHUNK_BYTES).max(1)).map(move |i| {
        let _serving = &serving;
        let start = i * LOG_CHUNK_BYTES;
        let end = (start + LOG_CHUNK_BYTES).min(log.len());
        Ok(pb::MatchLogChunk {
            match_id: id.clone(),
            total_bytes,
            offset: start as u64,
            data: log.slice(start..end).to_vec(),
        })
    });
    Ok(Response::new(Box::pin(tokio_stream::iter(chunks))))
}

/// The chunks of a StreamMatchLog call.
pub(super) type LogChunks = Pin<Box<dyn Stream<Item = Result<pb::MatchLogChunk, Status>> + Send>>;

impl ArenaService {
    /// The log of the finished or aborted match `id` and its place among the logs in
    /// flight (hold it while the log is sent), or the status that says why there is none
    /// (GetMatchLog and StreamMatchLog).
    async fn ended_log(
        &self,
        id: &str,
    ) -> Result<(String, tokio::sync::OwnedSemaphorePermit), Status> {
        let (log, serving) = self.ended_log_or_record(id).await?;
        match log {
            Served::Log(log_json) => Ok((log_json, serving)),
            Served::Record { league, .. } => {
                Err(Status::failed_precondition(withheld(id, &league)))
            }
        }
    }

    /// What may be served of the ended match `id`: its full log, or only its log's public
    /// record (see [`EndedLog`]), with its place among the logs in flight.
    async fn ended_log_or_record(
        &self,
        id: &str,
    ) -> Result<(Served, tokio::sync::OwnedSemaphorePermit), Status> {
        check_match_id(id).map_err(Status::invalid_argument)?;
        let serving = self
            .logs_in_flight
            .clone()
            .try_acquire_owned()
            .map_err(|_| Status::resource_exhausted(logs_busy()))?;
        let served = match ended_log(&self.store_for(StoreOperation::GetMatchLog), id)
            .await
            .map_err(status::internal)?
        {
            EndedLog::Unknown => {
                return Err(Status::not_found(format!(
                    "no match {id:?}: see ListMatches"
                )));
            }
            EndedLog::Running => {
                return Err(Status::failed_precondition(format!(
                    "match {id} is still running: its log (with every hidden die) is available once it has ended"
                )));
            }
            EndedLog::Missing => {
                return Err(Status::not_found(format!("match {id} ended without a log")));
            }
            EndedLog::SetPlaying { league, set, left } => {
                return Err(Status::failed_precondition(format!(
                    "match {id} is of duplicate set {set} of league {league:?}, which has {left} \
                     seat orders still to play on the same dice: its record is served once they \
                     have finished"
                )));
            }
            EndedLog::Log(log_json) => Served::Log(log_json),
            EndedLog::Withheld { league, log_json } => Served::Record { league, log_json },
        };
        Ok((served, serving))
    }
}

/// What may be served of an ended match.
enum Served {
    /// Its full log.
    Log(String),
    /// Its public record only: a match of `league`, which has not ended.
    Record { league: String, log_json: String },
}

/// The GetMatchRecord RPC: the public record of an ended match.
pub(super) async fn get_match_record(
    service: &ArenaService,
    request: Request<pb::GetMatchLogRequest>,
) -> Result<Response<pb::MatchRecordResponse>, Status> {
    let id = request.into_inner().match_id;
    let (served, _serving) = service.ended_log_or_record(&id).await?;
    let (log_json, full_log_served) = match served {
        Served::Log(log_json) => (log_json, true),
        Served::Record { log_json, .. } => (log_json, false),
    };
    let record_json = knobel_engine::MatchLog::from_json(&log_json)
        .map_err(|e| {
            tracing::error!(match_id = %id, error = %e, "a stored match log does not read");
            Status::internal("internal error")
        })?
        .public_record()
        .to_json();
    let response = pb::MatchRecordResponse {
        match_id: id,
        record_json,
        full_log_served,
    };
    let size = prost::Message::encoded_len(&response);
    if size > MAX_SENT_MESSAGE_BYTES {
        return Err(Status::resource_exhausted(format!(
            "the record of match {} is {size} bytes encoded, over the limit of \
             {MAX_SENT_MESSAGE_BYTES} bytes",
            response.match_id
        )));
    }
    Ok(Response::new(response))
}

fn wire_status(status: MatchStatus) -> pb::MatchStatus {
    match status {
        MatchStatus::Running => pb::MatchStatus::Running,
        MatchStatus::Finished => pb::MatchStatus::Finished,
        MatchStatus::Aborted => pb::MatchStatus::Aborted,
    }
}

/// The chunks of an ExportLeague call.
pub(super) type ArchiveChunks =
    Pin<Box<dyn Stream<Item = Result<pb::LeagueArchiveChunk, Status>> + Send>>;

/// An archive being sent: what is read and not yet sent, and where the schedule goes on.
struct Export {
    leagues: crate::league::service::Leagues,
    league: crate::store::LeagueRecord,
    /// The next ordinal to read.
    next: u32,
    /// Text read and not yet sent.
    pending: Vec<u8>,
    /// Every line is in `pending` (or the store failed).
    done: bool,
    /// Its place among the logs in flight.
    _serving: tokio::sync::OwnedSemaphorePermit,
}

impl Export {
    /// The next chunk, reading pages of the schedule as needed; `None` after the last.
    async fn next_chunk(&mut self) -> Option<Result<pb::LeagueArchiveChunk, Status>> {
        while self.pending.len() < LOG_CHUNK_BYTES && !self.done {
            match self.leagues.archive_page(&self.league, self.next).await {
                Ok(lines) if lines.is_empty() => {
                    let end = crate::league::export::end_line(u64::from(self.next));
                    self.pending.extend_from_slice(end.as_bytes());
                    self.done = true;
                }
                Ok(lines) => {
                    self.next += lines.len() as u32;
                    lines
                        .iter()
                        .for_each(|l| self.pending.extend_from_slice(l.as_bytes()));
                }
                Err(error) => {
                    (self.done, self.pending) = (true, Vec::new());
                    return Some(Err(super::status::internal(error)));
                }
            }
        }
        if self.pending.is_empty() {
            return None;
        }
        let take = self.pending.len().min(LOG_CHUNK_BYTES);
        let data = self.pending.drain(..take).collect();
        Some(Ok(pb::LeagueArchiveChunk { data }))
    }
}

/// The ExportLeague RPC: an ended league's archive, in chunks of [`LOG_CHUNK_BYTES`].
pub(super) async fn export_league(
    service: &ArenaService,
    request: Request<pb::ExportLeagueRequest>,
) -> Result<Response<ArchiveChunks>, Status> {
    let name = request.into_inner().league;
    let (league, header) = service
        .leagues
        .archive_header(&name)
        .await
        .map_err(super::leagues::league_status)?;
    let serving = service
        .logs_in_flight
        .clone()
        .try_acquire_owned()
        .map_err(|_| Status::resource_exhausted(logs_busy()))?;
    let mut pending = header.into_bytes();
    pending.push(b'\n');
    let export = Export {
        leagues: service.leagues.clone(),
        league,
        next: 0,
        pending,
        done: false,
        _serving: serving,
    };
    let chunks = futures_util::stream::unfold(export, |mut export| async move {
        let chunk = export.next_chunk().await?;
        Some((chunk, export))
    });
    Ok(Response::new(Box::pin(chunks)))
}
