//! Engine to wire for events: [`Event`] to [`pb::Event`], one arm per event kind.

use knobel_engine::{Event, Seat};

use super::{dice_to_wire, dice_view_to_wire, mask_to_wire, seats_to_wire};
use crate::v1 as pb;

impl From<Event> for pb::Event {
    // Long: one arm per event kind; the whole engine-to-wire mapping reads in one place.
    fn from(event: Event) -> pb::Event {
        use pb::event::Kind;
        let seat = |s: Seat| u32::from(s.0);
        let kind = match event {
            Event::OpeningThrow {
                seat: s,
                attempt,
                dice,
            } => Kind::OpeningThrow(pb::OpeningThrow {
                seat: seat(s),
                attempt: attempt.into(),
                dice: dice_to_wire(dice),
            }),
            Event::StarterChosen { seat: s } => {
                Kind::StarterChosen(pb::StarterChosen { seat: seat(s) })
            }
            Event::HalfStarted {
                half,
                seats,
                starter,
            } => Kind::HalfStarted(pb::HalfStarted {
                half: half.into(),
                seats: seats_to_wire(seats),
                starter: seat(starter),
            }),
            Event::RoundStarted {
                round,
                replay,
                seats,
                starter,
            } => Kind::RoundStarted(pb::RoundStarted {
                round,
                replay: replay.into(),
                seats: seats_to_wire(seats),
                starter: starter.map(seat),
            }),
            Event::Thrown {
                seat: s,
                throw,
                rolled,
                dice,
            } => Kind::Thrown(pb::Thrown {
                seat: seat(s),
                throw_number: throw.into(),
                rolled: mask_to_wire(rolled),
                dice: dice_view_to_wire(dice),
            }),
            Event::Turned { seat: s, dice } => Kind::Turned(pb::Turned {
                seat: seat(s),
                dice: mask_to_wire(dice),
            }),
            Event::Rerolled { seat: s, dice } => Kind::Rerolled(pb::Rerolled {
                seat: seat(s),
                dice: mask_to_wire(dice),
            }),
            Event::Stopped { seat: s, throws } => Kind::Stopped(pb::Stopped {
                seat: seat(s),
                throws: throws.into(),
            }),
            Event::ThrowLimitSet { throws } => Kind::ThrowLimitSet(pb::ThrowLimitSet {
                throws: throws.into(),
            }),
            Event::Revealed {
                seat: s,
                dice,
                hand,
            } => Kind::Revealed(pb::Revealed {
                seat: seat(s),
                dice: dice_to_wire(dice),
                hand: Some(hand.into()),
            }),
            Event::RoundDecided {
                winner,
                loser,
                value,
            } => Kind::RoundDecided(pb::RoundDecided {
                winner: seat(winner),
                loser: seat(loser),
                value: value.into(),
            }),
            Event::TokensMoved { from, to, count } => Kind::TokensMoved(pb::TokensMoved {
                from_seat: from.map(seat),
                to_seat: seat(to),
                count: count.into(),
            }),
            Event::SeatOut { seat: s } => Kind::SeatOut(pb::SeatOut { seat: seat(s) }),
            Event::Sjok1 { seat: s, removed } => Kind::Sjok1(pb::Sjok1 {
                seat: seat(s),
                removed: removed.into(),
            }),
            Event::HalfLost { half, seat: s } => Kind::HalfLost(pb::HalfLost {
                half: half.into(),
                seat: seat(s),
            }),
            Event::Ante { seat: s, chips } => Kind::Ante(pb::Ante {
                seat: seat(s),
                chips,
            }),
            Event::RerollChosen { seat: s, dice } => Kind::RerollChosen(pb::RerollChosen {
                seat: seat(s),
                dice: mask_to_wire(dice),
            }),
            Event::Betting {
                seat: s,
                action,
                chips,
            } => Kind::Betting(pb::Betting {
                seat: seat(s),
                action: Some(action.into()),
                chips,
            }),
            Event::TieReplay { seats, replay } => Kind::TieReplay(pb::TieReplay {
                seats: seats_to_wire(seats),
                replay: replay.into(),
            }),
            Event::PotWon { seat: s, chips } => Kind::PotWon(pb::PotWon {
                seat: seat(s),
                chips,
            }),
            Event::MatchOver { placings } => Kind::MatchOver(pb::MatchOver {
                placings: placings.iter().map(|&p| u32::from(p)).collect(),
            }),
            Event::Forfeited { seat: s, reason } => Kind::Forfeited(pb::Forfeited {
                seat: seat(s),
                reason: pb::ForfeitReason::from(reason) as i32,
            }),
        };
        pb::Event { kind: Some(kind) }
    }
}

impl From<&Event> for pb::Event {
    fn from(event: &Event) -> pb::Event {
        pb::Event::from(*event)
    }
}
