//! Wire to engine for events: [`pb::Event`] to [`Event`], one arm per event kind.

use knobel_engine::{Action, Event, Placings};

use super::super::validate::{
    ACTION_KINDS, dice_from_wire, dice_view_from_wire, required, u8_from, u8_vec,
};
use super::super::{WireError, mask_from_wire, seat_from_wire, seats_from_wire};
use super::{forfeit_from_wire, forfeit_values, req_hand};
use crate::v1 as pb;

impl TryFrom<&pb::Event> for Event {
    type Error = WireError;
    // Long: one arm per event kind, each checking its fields; the whole wire-to-engine
    // mapping reads in one place.
    fn try_from(event: &pb::Event) -> Result<Event, WireError> {
        use pb::event::Kind;
        let seat = seat_from_wire;
        Ok(
            match required(&event.kind, "event", "set one of the event kinds")? {
                Kind::OpeningThrow(e) => Event::OpeningThrow {
                    seat: seat("opening_throw.seat", e.seat)?,
                    attempt: u8_from("opening_throw.attempt", e.attempt)?,
                    dice: dice_from_wire("opening_throw.dice", &e.dice)?,
                },
                Kind::StarterChosen(e) => Event::StarterChosen {
                    seat: seat("starter_chosen.seat", e.seat)?,
                },
                Kind::HalfStarted(e) => Event::HalfStarted {
                    half: u8_from("half_started.half", e.half)?,
                    seats: seats_from_wire("half_started.seats", &e.seats)?,
                    starter: seat("half_started.starter", e.starter)?,
                },
                Kind::RoundStarted(e) => Event::RoundStarted {
                    round: e.round,
                    replay: u8_from("round_started.replay", e.replay)?,
                    seats: seats_from_wire("round_started.seats", &e.seats)?,
                    starter: e
                        .starter
                        .map(|s| seat("round_started.starter", s))
                        .transpose()?,
                },
                Kind::Thrown(e) => Event::Thrown {
                    seat: seat("thrown.seat", e.seat)?,
                    throw: u8_from("thrown.throw_number", e.throw_number)?,
                    rolled: mask_from_wire("thrown.rolled", "roll", &e.rolled)?,
                    dice: dice_view_from_wire("thrown.dice", &e.dice)?,
                },
                Kind::Turned(e) => Event::Turned {
                    seat: seat("turned.seat", e.seat)?,
                    dice: mask_from_wire("turned.dice", "turn", &e.dice)?,
                },
                Kind::Rerolled(e) => Event::Rerolled {
                    seat: seat("rerolled.seat", e.seat)?,
                    dice: mask_from_wire("rerolled.dice", "reroll", &e.dice)?,
                },
                Kind::Stopped(e) => Event::Stopped {
                    seat: seat("stopped.seat", e.seat)?,
                    throws: u8_from("stopped.throws", e.throws)?,
                },
                Kind::ThrowLimitSet(e) => Event::ThrowLimitSet {
                    throws: u8_from("throw_limit_set.throws", e.throws)?,
                },
                Kind::Revealed(e) => Event::Revealed {
                    seat: seat("revealed.seat", e.seat)?,
                    dice: dice_from_wire("revealed.dice", &e.dice)?,
                    hand: req_hand("revealed.hand", &e.hand)?,
                },
                Kind::RoundDecided(e) => Event::RoundDecided {
                    winner: seat("round_decided.winner", e.winner)?,
                    loser: seat("round_decided.loser", e.loser)?,
                    value: u8_from("round_decided.value", e.value)?,
                },
                Kind::TokensMoved(e) => Event::TokensMoved {
                    from: e
                        .from_seat
                        .map(|s| seat("tokens_moved.from_seat", s))
                        .transpose()?,
                    to: seat("tokens_moved.to_seat", e.to_seat)?,
                    count: u8_from("tokens_moved.count", e.count)?,
                },
                Kind::SeatOut(e) => Event::SeatOut {
                    seat: seat("seat_out.seat", e.seat)?,
                },
                Kind::Sjok1(e) => Event::Sjok1 {
                    seat: seat("sjok1.seat", e.seat)?,
                    removed: u8_from("sjok1.removed", e.removed)?,
                },
                Kind::HalfLost(e) => Event::HalfLost {
                    half: u8_from("half_lost.half", e.half)?,
                    seat: seat("half_lost.seat", e.seat)?,
                },
                Kind::Ante(e) => Event::Ante {
                    seat: seat("ante.seat", e.seat)?,
                    chips: e.chips,
                },
                Kind::RerollChosen(e) => Event::RerollChosen {
                    seat: seat("reroll_chosen.seat", e.seat)?,
                    dice: mask_from_wire("reroll_chosen.dice", "reroll", &e.dice)?,
                },
                Kind::Betting(e) => Event::Betting {
                    seat: seat("betting.seat", e.seat)?,
                    action: Action::try_from(required(&e.action, "betting.action", ACTION_KINDS)?)?,
                    chips: e.chips,
                },
                Kind::TieReplay(e) => Event::TieReplay {
                    seats: seats_from_wire("tie_replay.seats", &e.seats)?,
                    replay: u8_from("tie_replay.replay", e.replay)?,
                },
                Kind::PotWon(e) => Event::PotWon {
                    seat: seat("pot_won.seat", e.seat)?,
                    chips: e.chips,
                },
                Kind::MatchOver(e) => Event::MatchOver {
                    placings: Placings::from_slice(&u8_vec("match_over.placings", &e.placings)?),
                },
                Kind::Forfeited(e) => Event::Forfeited {
                    seat: seat("forfeited.seat", e.seat)?,
                    reason: forfeit_from_wire("forfeited.reason", e.reason)?.ok_or(
                        WireError::UnknownEnum {
                            field: "forfeited.reason",
                            value: e.reason,
                            legal: forfeit_values(),
                        },
                    )?,
                },
            },
        )
    }
}

impl TryFrom<pb::Event> for Event {
    type Error = WireError;
    fn try_from(event: pb::Event) -> Result<Event, WireError> {
        Event::try_from(&event)
    }
}
