//! Wire to engine for what the arena sends (`TryFrom` returning [`WireError`]; never
//! panics): [`Hand`], [`Observation`] and its parts, [`Outcome`] and forfeit reasons, as a
//! Rust bot client uses them to decide with engine types. Events are in [`events`].

use std::sync::LazyLock;

use knobel_engine::{
    ForfeitReason, Game, Hand, MAX_SEATS, MIN_SEATS, Observation, Outcome, ShakeDecision,
    ShakeObservation, TurnView, ZokkenObservation, ZokkenPhase, ZokkenSeatStatus, ZokkenSeatView,
};

use super::validate::{
    check_len, check_max_len, dice_from_wire, dice_view_from_wire, required, seat_vec, u8_from,
    u8_vec,
};
use super::{
    WireError, enum_values, game_from_wire, mask_from_wire, quote_list, seat_from_wire,
    seats_from_wire,
};
use crate::v1 as pb;

mod events;

// ---------------------------------------------------------------------------------------
// Hand
// ---------------------------------------------------------------------------------------

const HAND_KINDS: &str = "1..=17 (HandKind)";

/// Parses a hand, checking that its values make the hand its kind names (so that every
/// engine function on it, display included, is safe).
fn hand_from_wire(field: &'static str, hand: &pb::Hand) -> Result<Hand, WireError> {
    use pb::HandKind as K;
    let kind = K::try_from(hand.kind).map_err(|_| WireError::UnknownEnum {
        field,
        value: hand.kind,
        legal: HAND_KINDS,
    })?;
    let v = HandValues {
        field,
        values: hand.values.as_slice(),
    };
    Ok(match kind {
        K::Unspecified => {
            return Err(WireError::UnknownEnum {
                field,
                value: hand.kind,
                legal: HAND_KINDS,
            });
        }
        K::SchockOut => v.none("schock out", Hand::SchockOut)?,
        K::Jule => v.none("jule", Hand::Jule)?,
        K::Schock => Hand::Schock(v.one("schock", 2..=6, "one die, 2..=6")?),
        K::General => Hand::General(v.one("general", 2..=6, "one die, 2..=6")?),
        K::Straight => Hand::Straight(v.one("straight", 3..=6, "its top die, 3..=6")?),
        K::Number => v.number()?,
        K::Sjok1 => v.none("sjok1", Hand::Sjok1)?,
        K::Sjok => Hand::Sjok(v.one("sjok", 2..=6, "one die, 2..=6")?),
        K::Harde => Hand::Harde(v.one("harde", 2..=6, "one die, 2..=6")?),
        K::Straat => Hand::Straat(v.one("straat", 3..=6, "its top die, 3..=6")?),
        K::Hoog => Hand::Hoog(v.one("hoog", 5..=17, "the pip sum, 5..=17")?),
        K::Kelm => v.none("kelm", Hand::Kelm)?,
        K::Tinn => v.zokken("tinn", Hand::Tinn)?,
        K::Strasse => Hand::Strasse(v.one("strasse", 3..=9, "its top die, 3..=9")?),
        K::Plus => v.zokken("plus", Hand::Plus)?,
        K::Pasch => v.zokken("pasch", Hand::Pasch)?,
        K::Sonst => v.zokken("sonst", Hand::Sonst)?,
    })
}

/// The values of a wire hand at `field`, read for the kind it names.
struct HandValues<'a> {
    field: &'static str,
    values: &'a [u32],
}

impl HandValues<'_> {
    /// The values do not make a hand of `kind`: they should be as `expected` says.
    fn bad(&self, kind: &'static str, expected: &'static str) -> WireError {
        WireError::BadHand {
            field: self.field,
            kind,
            values: quote_list(self.values),
            expected,
        }
    }

    /// The single value of a one-value hand, if it lies in `range`.
    fn one(
        &self,
        kind: &'static str,
        range: std::ops::RangeInclusive<u32>,
        expected: &'static str,
    ) -> Result<u8, WireError> {
        match self.values {
            [x] if range.contains(x) => Ok(*x as u8),
            _ => Err(self.bad(kind, expected)),
        }
    }

    /// `hand`, a hand of no values, if there are none.
    fn none(&self, kind: &'static str, hand: Hand) -> Result<Hand, WireError> {
        match self.values {
            [] => Ok(hand),
            _ => Err(self.bad(kind, "no values")),
        }
    }

    /// Three Zokken dice high to low that make exactly `make`'s figure.
    fn zokken(&self, kind: &'static str, make: fn([u8; 3]) -> Hand) -> Result<Hand, WireError> {
        let expected = "three Miwin dice (1..=9) high to low that make this figure";
        match self.values {
            [a, b, c] if [a, b, c].iter().all(|&&v| (1..=9).contains(&v)) => {
                let d = [*a as u8, *b as u8, *c as u8];
                let want = make(d);
                if Hand::zokken(d) == want && d == knobel_engine::sorted_desc(d) {
                    Ok(want)
                } else {
                    Err(self.bad(kind, expected))
                }
            }
            _ => Err(self.bad(kind, expected)),
        }
    }

    /// A number: three dice (1..=6) high to low as one number, not a higher hand.
    fn number(&self) -> Result<Hand, WireError> {
        let expected = "a number of three dice (1..=6) high to low, not a higher hand";
        match self.values {
            [n] if (100..=666).contains(n) => {
                let d = [(n / 100) as u8, (n / 10 % 10) as u8, (n % 10) as u8];
                let dice_ok = d.iter().all(|v| (1..=6).contains(v));
                let higher = d[0] == d[2] || (d[1] == 1 && d[2] == 1);
                if dice_ok && d == knobel_engine::sorted_desc(d) && !higher {
                    Ok(Hand::Number(*n as u16))
                } else {
                    Err(self.bad("number", expected))
                }
            }
            _ => Err(self.bad("number", expected)),
        }
    }
}

impl TryFrom<&pb::Hand> for Hand {
    type Error = WireError;
    fn try_from(hand: &pb::Hand) -> Result<Hand, WireError> {
        hand_from_wire("hand", hand)
    }
}

fn opt_hand(field: &'static str, hand: &Option<pb::Hand>) -> Result<Option<Hand>, WireError> {
    hand.as_ref().map(|h| hand_from_wire(field, h)).transpose()
}

pub(crate) fn req_hand(field: &'static str, hand: &Option<pb::Hand>) -> Result<Hand, WireError> {
    hand_from_wire(field, required(hand, field, "set the hand")?)
}

// ---------------------------------------------------------------------------------------
// Observation
// ---------------------------------------------------------------------------------------

impl TryFrom<&pb::TurnView> for TurnView {
    type Error = WireError;
    fn try_from(t: &pb::TurnView) -> Result<TurnView, WireError> {
        Ok(TurnView {
            dice: dice_view_from_wire("turn.dice", &t.dice)?,
            throws: u8_from("turn.throws", t.throws)?,
            rolled: mask_from_wire("turn.rolled", "roll", &t.rolled)?,
            turned: mask_from_wire("turn.turned", "turn", &t.turned)?,
            done: t.done,
            hand: opt_hand("turn.hand", &t.hand)?,
        })
    }
}

impl TryFrom<&pb::ShakeDecision> for ShakeDecision {
    type Error = WireError;
    fn try_from(d: &pb::ShakeDecision) -> Result<ShakeDecision, WireError> {
        Ok(ShakeDecision {
            max_throws: u8_from("decision.max_throws", d.max_throws)?,
            can_reroll: d.can_reroll,
            turnable: mask_from_wire("decision.turnable", "turn", &d.turnable)?,
            max_turn: u8_from("decision.max_turn", d.max_turn)?,
            turn_needs_reroll: d.turn_needs_reroll,
            locked: mask_from_wire("decision.locked", "lock", &d.locked)?,
        })
    }
}

impl TryFrom<&pb::ShakeObservation> for ShakeObservation {
    type Error = WireError;
    fn try_from(o: &pb::ShakeObservation) -> Result<ShakeObservation, WireError> {
        let game = game_from_wire("shake.game", o.game)?;
        if game == Game::Zokken {
            return Err(WireError::WrongGame {
                field: "shake.game",
                value: game.to_string(),
                expected: "schocken or sjokken",
            });
        }
        let seats = u8_from("shake.seats", o.seats)?;
        if !(MIN_SEATS..=MAX_SEATS).contains(&usize::from(seats)) {
            return Err(WireError::OutOfRange {
                field: "shake.seats",
                value: seats.into(),
                min: MIN_SEATS as i64,
                max: MAX_SEATS as i64,
            });
        }
        let per_seat = |field: &'static str, len: usize| -> Result<(), WireError> {
            if len == seats as usize {
                Ok(())
            } else {
                Err(WireError::WrongLength {
                    field,
                    len,
                    expected: format!("one per seat ({seats})"),
                })
            }
        };
        per_seat("shake.tokens", o.tokens.len())?;
        per_seat("shake.turns", o.turns.len())?;
        Ok(ShakeObservation {
            game,
            seat: seat_from_wire("shake.seat", o.seat)?,
            seats,
            half: u8_from("shake.half", o.half)?,
            round: o.round,
            pot: u8_from("shake.pot", o.pot)?,
            removed: u8_from("shake.removed", o.removed)?,
            tokens: u8_vec("shake.tokens", &o.tokens)?,
            in_play: seats_from_wire("shake.in_play", &o.in_play)?,
            half_losers: seat_vec("shake.half_losers", &o.half_losers)?,
            starter: seat_from_wire("shake.starter", o.starter)?,
            throw_limit: o
                .throw_limit
                .map(|l| u8_from("shake.throw_limit", l))
                .transpose()?,
            to_act: o
                .to_act
                .map(|s| seat_from_wire("shake.to_act", s))
                .transpose()?,
            turn_order: seat_vec("shake.turn_order", &o.turn_order)?,
            turns: o
                .turns
                .iter()
                .map(TurnView::try_from)
                .collect::<Result<_, _>>()?,
            decision: o
                .decision
                .as_ref()
                .map(ShakeDecision::try_from)
                .transpose()?,
        })
    }
}

impl TryFrom<&pb::ZokkenPhase> for ZokkenPhase {
    type Error = WireError;
    fn try_from(phase: &pb::ZokkenPhase) -> Result<ZokkenPhase, WireError> {
        let number = u8_from("zokken.phase.number", phase.number)?;
        match pb::ZokkenPhaseKind::try_from(phase.kind) {
            Ok(pb::ZokkenPhaseKind::Betting) => Ok(ZokkenPhase::Betting(number)),
            Ok(pb::ZokkenPhaseKind::Choosing) => Ok(ZokkenPhase::Choosing(number)),
            Ok(pb::ZokkenPhaseKind::Over) => Ok(ZokkenPhase::Over),
            Ok(pb::ZokkenPhaseKind::Unspecified) | Err(_) => Err(WireError::UnknownEnum {
                field: "zokken.phase.kind",
                value: phase.kind,
                legal: "1 (betting), 2 (choosing), 3 (over)",
            }),
        }
    }
}

impl TryFrom<&pb::ZokkenSeatView> for ZokkenSeatView {
    type Error = WireError;
    fn try_from(v: &pb::ZokkenSeatView) -> Result<ZokkenSeatView, WireError> {
        let status = match pb::ZokkenSeatStatus::try_from(v.status) {
            Ok(pb::ZokkenSeatStatus::InRound) => ZokkenSeatStatus::InRound,
            Ok(pb::ZokkenSeatStatus::Folded) => ZokkenSeatStatus::Folded,
            Ok(pb::ZokkenSeatStatus::SittingOut) => ZokkenSeatStatus::SittingOut,
            Ok(pb::ZokkenSeatStatus::Unspecified) | Err(_) => {
                return Err(WireError::UnknownEnum {
                    field: "zokken.seats.status",
                    value: v.status,
                    legal: "1 (in round), 2 (folded), 3 (sitting out)",
                });
            }
        };
        Ok(ZokkenSeatView {
            dice: dice_from_wire("zokken.seats.dice", &v.dice)?,
            figure: req_hand("zokken.seats.figure", &v.figure)?,
            status,
            put_in: v.put_in,
            staked: v.staked,
            net: v.net,
        })
    }
}

impl TryFrom<&pb::ZokkenObservation> for ZokkenObservation {
    type Error = WireError;
    fn try_from(o: &pb::ZokkenObservation) -> Result<ZokkenObservation, WireError> {
        check_max_len("zokken.seats", o.seats.len(), MAX_SEATS)?;
        let phase = required(&o.phase, "zokken.phase", "set the phase")?;
        Ok(ZokkenObservation {
            seat: seat_from_wire("zokken.seat", o.seat)?,
            round: o.round,
            rounds: o.rounds,
            replay: u8_from("zokken.replay", o.replay)?,
            phase: phase.try_into()?,
            seats: o
                .seats
                .iter()
                .map(ZokkenSeatView::try_from)
                .collect::<Result<_, _>>()?,
            pot: o.pot,
            current_bet: o.current_bet,
            to_call: o.to_call,
            bets: u8_from("zokken.bets", o.bets)?,
            max_bets: u8_from("zokken.max_bets", o.max_bets)?,
            bet_size: o.bet_size,
            to_act: seats_from_wire("zokken.to_act", &o.to_act)?,
            chosen: o.chosen,
        })
    }
}

impl TryFrom<&pb::Observation> for Observation {
    type Error = WireError;
    fn try_from(o: &pb::Observation) -> Result<Observation, WireError> {
        use pb::observation::Kind;
        Ok(
            match required(&o.kind, "observation", "set shake or zokken")? {
                Kind::Shake(s) => Observation::Shake(s.try_into()?),
                Kind::Zokken(z) => Observation::Zokken(z.try_into()?),
            },
        )
    }
}

impl TryFrom<pb::Observation> for Observation {
    type Error = WireError;
    fn try_from(o: pb::Observation) -> Result<Observation, WireError> {
        Observation::try_from(&o)
    }
}

// ---------------------------------------------------------------------------------------
// Outcome
// ---------------------------------------------------------------------------------------

/// The forfeit reasons as wire enum numbers with their names, for error messages:
/// `1 (strikes), 2 (disconnected), ...` (derived from [`ForfeitReason::ALL`]).
pub(crate) fn forfeit_values() -> &'static str {
    static TEXT: LazyLock<String> = LazyLock::new(|| {
        enum_values(
            &ForfeitReason::ALL,
            |reason| pb::ForfeitReason::from(reason) as i32,
            |reason| reason.name().replace('_', " "),
        )
    });
    &TEXT
}

/// A forfeit from a raw wire enum field: `None` for `FORFEIT_REASON_NONE`; numbers this
/// version does not know are errors. `field` names the field in the error.
pub fn forfeit_from_wire(
    field: &'static str,
    value: i32,
) -> Result<Option<ForfeitReason>, WireError> {
    Ok(Some(match pb::ForfeitReason::try_from(value) {
        Ok(pb::ForfeitReason::None) => return Ok(None),
        Ok(pb::ForfeitReason::Strikes) => ForfeitReason::Strikes,
        Ok(pb::ForfeitReason::Disconnected) => ForfeitReason::Disconnected,
        Ok(pb::ForfeitReason::NotReading) => ForfeitReason::NotReading,
        Ok(pb::ForfeitReason::Revoked) => ForfeitReason::Revoked,
        Ok(pb::ForfeitReason::Absent) => ForfeitReason::Absent,
        Err(_) => {
            return Err(WireError::UnknownEnum {
                field,
                value,
                legal: forfeit_values(),
            });
        }
    }))
}

/// The engine's outcome from the wire. The engine's per-seat lists have one entry per seat
/// (one per placing): a list the wire leaves empty (one the game does not have, or, from
/// an arena that does not send them, the strikes, timeouts and forfeits) becomes zeros
/// (no forfeits); a list that is not empty must have one entry per seat.
impl TryFrom<&pb::Outcome> for Outcome {
    type Error = WireError;
    fn try_from(o: &pb::Outcome) -> Result<Outcome, WireError> {
        let placings = u8_vec("outcome.placings", &o.placings)?;
        let n = placings.len();
        let per_seat = |field: &'static str, len: usize| {
            if len == 0 {
                Ok(())
            } else {
                check_len(field, len, n)
            }
        };
        per_seat("outcome.tokens", o.tokens.len())?;
        per_seat("outcome.halves_lost", o.halves_lost.len())?;
        per_seat("outcome.chips", o.chips.len())?;
        per_seat("outcome.strikes", o.strikes.len())?;
        per_seat("outcome.timeouts", o.timeouts.len())?;
        per_seat("outcome.forfeits", o.forfeits.len())?;
        let or_zeros = |v: &[i64]| if v.is_empty() { vec![0; n] } else { v.to_vec() };
        let counts = |v: &[u32]| if v.is_empty() { vec![0; n] } else { v.to_vec() };
        let mut halves_lost = u8_vec("outcome.halves_lost", &o.halves_lost)?;
        if halves_lost.is_empty() {
            halves_lost = vec![0; n];
        }
        let forfeits = if o.forfeits.is_empty() {
            vec![None; n]
        } else {
            o.forfeits
                .iter()
                .map(|&f| forfeit_from_wire("outcome.forfeits", f))
                .collect::<Result<_, _>>()?
        };
        Ok(Outcome {
            loser: o
                .loser
                .map(|s| seat_from_wire("outcome.loser", s))
                .transpose()?,
            tokens: or_zeros(&o.tokens),
            halves_lost,
            chips: or_zeros(&o.chips),
            strikes: counts(&o.strikes),
            timeouts: counts(&o.timeouts),
            forfeits,
            placings,
        })
    }
}
