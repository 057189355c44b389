//! The referee's messages in wire form: the one place a [`ToSeat`] becomes a
//! `knobel.v1.ArenaMessage`, for a bot's own stream (`server::stream_link`) and for a seat
//! relayed to another arena (`cluster::relay`), whose referee encodes the bytes the bot
//! receives.

use std::sync::Arc;
use std::time::Duration;

use knobel_engine::Seat;
use knobel_proto::outbound::{self, OutboundMessage};
use knobel_proto::{convert, v1 as pb};

use crate::referee::{EventBatch, Problem, ToSeat};

/// The wire message of a referee's message for seat `seat` of match `match_id` (the one
/// place they are converted; a relayed seat's referee encodes it the same way): the public
/// events before it, each batch encoded once and shared by every seat, and the message.
pub(crate) fn wire_message(
    events: &[Arc<EventBatch>],
    message: Option<ToSeat>,
    match_id: &str,
    seat: Seat,
) -> OutboundMessage {
    OutboundMessage {
        events: events
            .iter()
            .map(|batch| batch.wire(outbound::encode_events))
            .collect(),
        kind: message.map(|message| wire_kind(message, match_id, seat)),
    }
}

fn wire_kind(message: ToSeat, match_id: &str, seat: Seat) -> pb::arena_message::Kind {
    match message {
        ToSeat::Start { info, seat } => {
            let time_control = pb::TimeControl {
                decision_ms: wire_ms(info.time_control.decision),
                time_bank_ms: wire_ms(info.time_control.time_bank),
            };
            pb::arena_message::Kind::MatchStart(convert::match_start(
                &info.match_id,
                &info.preset,
                &info.rules,
                &info.seat_names,
                seat,
                time_control,
            ))
        }
        ToSeat::Request(request) => {
            pb::arena_message::Kind::DecisionRequest(convert::decision_request_from(
                request.request_id,
                &request.observation,
                &request.legal_actions,
                request.default_action,
                wire_ms(request.deadline),
                wire_ms(request.time_bank),
            ))
        }
        ToSeat::Notice(notice) => pb::arena_message::Kind::Error(pb::ErrorEvent {
            request_id: notice.request_id,
            code: wire_code(&notice.problem) as i32,
            message: notice.message,
            applied: notice.applied.map(pb::Action::from),
            strikes: notice.strikes.into(),
            forfeited: notice.forfeited,
        }),
        ToSeat::Result { outcome } => pb::arena_message::Kind::MatchResult(convert::match_result(
            match_id,
            Some(&outcome),
            seat,
        )),
        ToSeat::Aborted { .. } => {
            pb::arena_message::Kind::MatchResult(convert::match_result(match_id, None, seat))
        }
    }
}

fn wire_code(problem: &Problem) -> pb::ErrorCode {
    match problem {
        Problem::Timeout => pb::ErrorCode::Timeout,
        Problem::IllegalAction => pb::ErrorCode::IllegalAction,
        Problem::Malformed => pb::ErrorCode::Malformed,
        Problem::StaleRequest => pb::ErrorCode::StaleRequest,
    }
}

/// A duration as the wire's `u32` milliseconds. The settings bound every time limit far
/// below `u32::MAX` ms (about 49 days; see `settings::DECISION_MS`, `TIME_BANK_MS`), so this
/// saturates only for a configuration built around them.
pub(crate) fn wire_ms(duration: Duration) -> u32 {
    u32::try_from(duration.as_millis()).unwrap_or(u32::MAX)
}
