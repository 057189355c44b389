//! Misbehaving on purpose, to test how an arena copes with bad bots.
//!
//! A well-behaved bot never needs this module. End-to-end tests use it through
//! `knobel-bot --misbehave MODE` to check that the arena refuses, times out, strikes and
//! forfeits a bad seat while the match goes on for everybody else.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use knobel_engine::{Action, DieMask};

/// How a bot misbehaves. Parsed from the `--misbehave` texts shown with each mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Misbehave {
    /// `never-answer`: reads every decision request and answers none (every request times
    /// out: strikes, then a forfeit).
    NeverAnswer,
    /// `late:<ms>`: answers every request `ms` milliseconds after it arrived (without
    /// holding up the reading of other messages).
    Late(Duration),
    /// `illegal`: answers every request with a well-formed action that is not among the
    /// request's legal actions, rotating through kinds: a bet outside Zokken betting, a
    /// stop turning die 0 (not a turnable six), a reroll of all three dice (after the throw
    /// limit, or more than Zokken's two), a fold with nothing to call, a check facing a bet,
    /// a stop in Zokken.
    Illegal,
    /// `stale`: answers every request twice: first with `request_id - 1` (not the open
    /// request: refused as STALE_REQUEST, no strike), then correctly.
    Stale,
    /// `disconnect-after:<n>`: answers `n` requests, then drops the stream without a word;
    /// then reconnects and plays on normally. Happens once per run.
    DisconnectAfter(u32),
    /// `garbage`: answers the first request of the run with a gRPC frame whose payload is
    /// not a protobuf `BotMessage`; then (when the arena has closed the stream) reconnects
    /// and plays on normally.
    Garbage,
    /// `oversized`: answers the first request of the run with a Decision padded past
    /// 64 KiB (a reroll naming die 0 about 70 000 times); then reconnects and plays on
    /// normally.
    Oversized,
}

/// The `--misbehave` texts, for help and error messages.
pub const MODES: &str =
    "never-answer, late:<ms>, illegal, stale, disconnect-after:<n>, garbage, oversized";

/// A `--misbehave` text that names no mode.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown misbehave mode {0:?}: modes are {MODES}")]
pub struct UnknownMode(pub String);

impl FromStr for Misbehave {
    type Err = UnknownMode;

    fn from_str(text: &str) -> Result<Misbehave, UnknownMode> {
        let unknown = || UnknownMode(text.to_owned());
        let (mode, arg) = match text.split_once(':') {
            Some((mode, arg)) => (mode, Some(arg)),
            None => (text, None),
        };
        Ok(match (mode, arg) {
            ("never-answer", None) => Misbehave::NeverAnswer,
            ("illegal", None) => Misbehave::Illegal,
            ("stale", None) => Misbehave::Stale,
            ("garbage", None) => Misbehave::Garbage,
            ("oversized", None) => Misbehave::Oversized,
            ("late", Some(ms)) => {
                Misbehave::Late(Duration::from_millis(ms.parse().map_err(|_| unknown())?))
            }
            ("disconnect-after", Some(n)) => {
                Misbehave::DisconnectAfter(n.parse().map_err(|_| unknown())?)
            }
            _ => return Err(unknown()),
        })
    }
}

impl fmt::Display for Misbehave {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Misbehave::NeverAnswer => f.write_str("never-answer"),
            Misbehave::Late(delay) => write!(f, "late:{}", delay.as_millis()),
            Misbehave::Illegal => f.write_str("illegal"),
            Misbehave::Stale => f.write_str("stale"),
            Misbehave::DisconnectAfter(n) => write!(f, "disconnect-after:{n}"),
            Misbehave::Garbage => f.write_str("garbage"),
            Misbehave::Oversized => f.write_str("oversized"),
        }
    }
}

/// The illegal actions [`illegal_action`] tries, in rotation.
fn illegal_kinds() -> [Action; 6] {
    [
        Action::Bet,
        Action::Stop {
            turn: DieMask::single(0),
        },
        Action::reroll(DieMask::ALL),
        Action::Fold,
        Action::Check,
        Action::STOP,
    ]
}

/// A well-formed action that is not in `legal`, starting the search at kind
/// `rotation % 6` so that successive calls try different kinds. `None` only if every kind
/// is legal (which no game allows).
pub fn illegal_action(legal: &[Action], rotation: usize) -> Option<Action> {
    let kinds = illegal_kinds();
    (0..kinds.len())
        .map(|i| kinds[(rotation + i) % kinds.len()])
        .find(|action| !legal.contains(action))
}

/// The payload `garbage` sends: not a protobuf message (field 1 with the invalid wire
/// type 7, then a varint that never ends).
pub const GARBAGE: &[u8] = b"\x0f\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xffnot a BotMessage";

/// How many die slots `oversized` names: enough to pass 64 KiB encoded.
pub const OVERSIZED_SLOTS: usize = 70_000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse_and_print_back() {
        for text in [
            "never-answer",
            "late:1500",
            "illegal",
            "stale",
            "disconnect-after:3",
            "garbage",
            "oversized",
        ] {
            let mode: Misbehave = text.parse().unwrap();
            assert_eq!(mode.to_string(), text);
        }
        for bad in [
            "late",
            "late:x",
            "disconnect-after",
            "sometimes",
            "illegal:1",
        ] {
            assert!(bad.parse::<Misbehave>().is_err(), "{bad}");
        }
    }

    #[test]
    fn illegal_actions_are_never_legal_and_rotate() {
        let shake_legal = [
            Action::STOP,
            Action::reroll(DieMask::ALL),
            Action::reroll(DieMask::single(0)),
        ];
        let zokken_betting = [Action::Call, Action::Raise, Action::Fold];
        for legal in [&shake_legal[..], &zokken_betting[..]] {
            let mut seen = Vec::new();
            for rotation in 0..6 {
                let action = illegal_action(legal, rotation).unwrap();
                assert!(!legal.contains(&action));
                if !seen.contains(&action) {
                    seen.push(action);
                }
            }
            assert!(seen.len() >= 3, "{seen:?}");
        }
    }

    #[test]
    fn garbage_is_not_a_bot_message() {
        use prost::Message;
        assert!(knobel_proto::v1::BotMessage::decode(GARBAGE).is_err());
    }
}
