//! The one boundary between engine types and the wire (house rule: one boundary for the
//! wire). Nothing else in the workspace builds protobuf values from engine values or back.
//!
//! **Engine to wire** (what the arena sends; cannot fail): `From` impls for [`Game`],
//! [`Action`], [`Hand`], [`Observation`] (and its parts), [`Event`] and [`Outcome`], plus
//! [`seats_to_wire`], [`mask_to_wire`], and the builders [`decision_request`],
//! [`match_start`] and [`match_result`].
//!
//! **Wire to engine** (untrusted input; never panics): `TryFrom` impls returning
//! [`WireError`]:
//! - what a bot sends: [`BotHello`] from [`pb::Hello`], [`BotDecision`] from
//!   [`pb::Decision`], [`Action`] from [`pb::Action`], [`Game`] from [`pb::Game`] (or
//!   [`game_from_wire`] for a raw enum field);
//! - what a Rust bot receives: [`Observation`], [`Event`], [`Hand`] and [`Outcome`], so that
//!   it can decide with engine types (for example with a built-in policy).
//!
//! Wire to engine to wire gives back the same message for everything the arena sends.

use std::collections::HashMap;
use std::fmt::Write as _;

use knobel_engine::{
    Action, DieMask, DieSlotError, Event, ForfeitReason, Game, Hand, MAX_SEATS, Match, Observation,
    Outcome, Placings, Rules, Seat, Seats, ShakeDecision, ShakeObservation, TurnView,
    ZokkenObservation, ZokkenPhase, ZokkenSeatStatus, ZokkenSeatView,
};
use thiserror::Error;

use crate::v1 as pb;

/// The longest bot name a [`pb::Hello`] may carry, in characters (the one name rule:
/// [`crate::names`]).
pub const MAX_NAME_CHARS: usize = crate::names::MAX_NAME_CHARS;
/// The longest client version a [`pb::Hello`] may carry, in characters.
pub const MAX_CLIENT_VERSION_CHARS: usize = 64;

/// How much of an untrusted string an error message repeats.
const QUOTE_CHARS: usize = 40;

/// A wire value that does not make a valid engine value. Messages are lowercase, name the
/// field and the bad value, and say what would be legal.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum WireError {
    /// A required field or oneof is not set.
    #[error("{field} is missing: {expected}")]
    Missing {
        /// The field, e.g. `decision.action`.
        field: &'static str,
        /// What to set.
        expected: &'static str,
    },
    /// A list of die slots names a slot outside 0..=2, or one slot twice.
    #[error("{field}: {}", die_slot_text(verb, error))]
    DieSlot {
        /// The field, e.g. `reroll.dice`.
        field: &'static str,
        /// What the dice were named for: "reroll", "turn", ...
        verb: &'static str,
        /// The engine's complaint.
        error: DieSlotError,
    },
    /// `GAME_UNSPECIFIED` where a game is required.
    #[error("{field} is GAME_UNSPECIFIED: name a game: 1 (schocken), 2 (sjokken), 3 (zokken)")]
    UnspecifiedGame {
        /// The field.
        field: &'static str,
    },
    /// An enum number this version of the contract does not know.
    #[error("{field} = {value} is not a known value: legal values are {legal}")]
    UnknownEnum {
        /// The field.
        field: &'static str,
        /// The number sent.
        value: i32,
        /// The legal numbers and their names.
        legal: &'static str,
    },
    /// A text or list that must not be empty.
    #[error("{field} is empty: {expected}")]
    Empty {
        /// The field.
        field: &'static str,
        /// What it must hold.
        expected: &'static str,
    },
    /// A bot name that breaks the name rule ([`crate::names`]).
    #[error("{field}: {error}")]
    Name {
        /// The field, e.g. `hello.name`.
        field: &'static str,
        /// The rule it breaks.
        error: crate::names::NameError,
    },
    /// A text of only spaces where a visible character is needed.
    #[error("{field} {value:?} is blank: it needs at least one visible character")]
    Blank {
        /// The field.
        field: &'static str,
        /// The text sent.
        value: String,
    },
    /// A text longer than allowed.
    #[error("{field} has {chars} characters: at most {max} are allowed")]
    TooLong {
        /// The field.
        field: &'static str,
        /// Its length in characters.
        chars: usize,
        /// The most allowed.
        max: usize,
    },
    /// A text with a control or invisible formatting character.
    #[error(
        "{field} has the unprintable character {code} at position {position}: use printable characters only"
    )]
    Unprintable {
        /// The field.
        field: &'static str,
        /// The character's position (in characters, from 0).
        position: usize,
        /// The character as `U+XXXX`.
        code: String,
    },
    /// A list of games naming one game twice.
    #[error("{field} names {game} twice: name each game once")]
    RepeatedGame {
        /// The field.
        field: &'static str,
        /// The game named twice.
        game: Game,
    },
    /// A preset name that does not exist.
    #[error(
        "{field} {name:?} is not a preset: presets are schocken, schocken-typenclub, sjokken, zokken"
    )]
    UnknownPreset {
        /// The field.
        field: &'static str,
        /// The name sent (shortened if long).
        name: String,
    },
    /// A preset wish for a game the bot does not play.
    #[error(
        "{field} {name:?} is a {game} preset, but hello.games does not name {game}: add {game} or wish for another preset"
    )]
    PresetNotPlayed {
        /// The field.
        field: &'static str,
        /// The preset.
        name: String,
        /// Its game.
        game: Game,
    },
    /// A number outside the range the engine allows.
    #[error("{field} = {value} is out of range: it must be {min}..={max}")]
    OutOfRange {
        /// The field.
        field: &'static str,
        /// The number sent.
        value: i64,
        /// The smallest legal value.
        min: i64,
        /// The largest legal value.
        max: i64,
    },
    /// A list of the wrong length.
    #[error("{field} has {len} entries: it must have {expected}")]
    WrongLength {
        /// The field.
        field: &'static str,
        /// The entries sent.
        len: usize,
        /// How many it must have, e.g. "3" or "one per seat (4)".
        expected: String,
    },
    /// A hand whose values do not make the hand its kind names.
    #[error("{field}: {kind} with values {values} is not a hand: {expected}")]
    BadHand {
        /// The field.
        field: &'static str,
        /// The hand kind, e.g. "schock".
        kind: &'static str,
        /// The values sent (shortened if long).
        values: String,
        /// What the values of this kind must be.
        expected: &'static str,
    },
    /// A value of the wrong game, e.g. a Zokken game in a Schocken observation.
    #[error("{field} is {value}: it must be {expected}")]
    WrongGame {
        /// The field.
        field: &'static str,
        /// What was sent.
        value: String,
        /// What is legal there.
        expected: &'static str,
    },
}

fn die_slot_text(verb: &str, error: &DieSlotError) -> String {
    match error {
        DieSlotError::OutOfRange { slot } => {
            format!("cannot {verb} die {slot}: dice are numbered 0..=2")
        }
        DieSlotError::Repeated { slot } => {
            format!("die {slot} is named twice: name each die at most once")
        }
    }
}

/// The first [`QUOTE_CHARS`] characters of an untrusted text, for an error message.
fn quote(text: &str) -> String {
    let mut out: String = text.chars().take(QUOTE_CHARS).collect();
    if text.chars().nth(QUOTE_CHARS).is_some() {
        out.push('…');
    }
    out
}

/// The first few numbers of an untrusted list, for an error message.
fn quote_list(values: &[u32]) -> String {
    let mut out = String::from("[");
    for (i, v) in values.iter().take(5).enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        let _ = write!(out, "{v}");
    }
    if values.len() > 5 {
        out.push_str(", …");
    }
    out.push(']');
    out
}

// ---------------------------------------------------------------------------------------
// Small values
// ---------------------------------------------------------------------------------------

/// A set of seats as a wire list of seat numbers, ascending.
pub fn seats_to_wire(seats: Seats) -> Vec<u32> {
    seats.iter().map(|s| u32::from(s.0)).collect()
}

/// A set of die slots as a wire list of slots, ascending.
pub fn mask_to_wire(mask: DieMask) -> Vec<u32> {
    mask.slots().map(|s| s as u32).collect()
}

fn seat_list(seats: &[Seat]) -> Vec<u32> {
    seats.iter().map(|s| u32::from(s.0)).collect()
}

fn dice_to_wire(dice: [u8; 3]) -> Vec<u32> {
    dice.iter().map(|&d| u32::from(d)).collect()
}

fn dice_view_to_wire(dice: [Option<u8>; 3]) -> Vec<pb::Die> {
    dice.into_iter().map(pb::Die::from).collect()
}

impl From<Option<u8>> for pb::Die {
    fn from(value: Option<u8>) -> pb::Die {
        pb::Die {
            value: value.map(u32::from),
        }
    }
}

/// A seat number from the wire: 0..[`MAX_SEATS`].
pub fn seat_from_wire(field: &'static str, value: u32) -> Result<Seat, WireError> {
    if (value as usize) < MAX_SEATS {
        Ok(Seat(value as u8))
    } else {
        Err(WireError::OutOfRange {
            field,
            value: value.into(),
            min: 0,
            max: MAX_SEATS as i64 - 1,
        })
    }
}

/// A set of seats from a wire list (each 0..[`MAX_SEATS`]; repeats are harmless).
pub fn seats_from_wire(field: &'static str, values: &[u32]) -> Result<Seats, WireError> {
    let mut seats = Seats::EMPTY;
    for &value in values {
        seats.insert(seat_from_wire(field, value)?);
    }
    Ok(seats)
}

/// A set of die slots from a wire list: each 0..=2, none twice. `verb` names what the dice
/// are for in the error message ("reroll", "turn").
pub fn mask_from_wire(
    field: &'static str,
    verb: &'static str,
    slots: &[u32],
) -> Result<DieMask, WireError> {
    DieMask::from_slots(slots).map_err(|error| WireError::DieSlot { field, verb, error })
}

fn seat_vec(field: &'static str, values: &[u32]) -> Result<Vec<Seat>, WireError> {
    check_max_len(field, values.len(), MAX_SEATS)?;
    values.iter().map(|&v| seat_from_wire(field, v)).collect()
}

fn check_max_len(field: &'static str, len: usize, max: usize) -> Result<(), WireError> {
    if len > max {
        return Err(WireError::WrongLength {
            field,
            len,
            expected: format!("at most {max}"),
        });
    }
    Ok(())
}

fn check_len(field: &'static str, len: usize, expected: usize) -> Result<(), WireError> {
    if len != expected {
        return Err(WireError::WrongLength {
            field,
            len,
            expected: expected.to_string(),
        });
    }
    Ok(())
}

fn u8_from(field: &'static str, value: u32) -> Result<u8, WireError> {
    u8::try_from(value).map_err(|_| WireError::OutOfRange {
        field,
        value: value.into(),
        min: 0,
        max: u8::MAX.into(),
    })
}

fn u8_vec(field: &'static str, values: &[u32]) -> Result<Vec<u8>, WireError> {
    check_max_len(field, values.len(), MAX_SEATS)?;
    values.iter().map(|&v| u8_from(field, v)).collect()
}

fn dice_from_wire(field: &'static str, values: &[u32]) -> Result<[u8; 3], WireError> {
    check_len(field, values.len(), 3)?;
    Ok([
        u8_from(field, values[0])?,
        u8_from(field, values[1])?,
        u8_from(field, values[2])?,
    ])
}

fn dice_view_from_wire(
    field: &'static str,
    dice: &[pb::Die],
) -> Result<[Option<u8>; 3], WireError> {
    check_len(field, dice.len(), 3)?;
    let one = |die: &pb::Die| die.value.map(|v| u8_from(field, v)).transpose();
    Ok([one(&dice[0])?, one(&dice[1])?, one(&dice[2])?])
}

fn required<'a, T>(
    value: &'a Option<T>,
    field: &'static str,
    expected: &'static str,
) -> Result<&'a T, WireError> {
    value.as_ref().ok_or(WireError::Missing { field, expected })
}

// ---------------------------------------------------------------------------------------
// Game
// ---------------------------------------------------------------------------------------

const GAME_VALUES: &str = "1 (schocken), 2 (sjokken), 3 (zokken)";

impl From<Game> for pb::Game {
    fn from(game: Game) -> pb::Game {
        match game {
            Game::Schocken => pb::Game::Schocken,
            Game::Sjokken => pb::Game::Sjokken,
            Game::Zokken => pb::Game::Zokken,
        }
    }
}

impl TryFrom<pb::Game> for Game {
    type Error = WireError;
    fn try_from(game: pb::Game) -> Result<Game, WireError> {
        match game {
            pb::Game::Unspecified => Err(WireError::UnspecifiedGame { field: "game" }),
            pb::Game::Schocken => Ok(Game::Schocken),
            pb::Game::Sjokken => Ok(Game::Sjokken),
            pb::Game::Zokken => Ok(Game::Zokken),
        }
    }
}

/// A game from a raw wire enum field (`i32`): 0 is `GAME_UNSPECIFIED` (an error), numbers
/// this version does not know are errors too. `field` names the field in the error.
pub fn game_from_wire(field: &'static str, value: i32) -> Result<Game, WireError> {
    match pb::Game::try_from(value) {
        Ok(pb::Game::Unspecified) => Err(WireError::UnspecifiedGame { field }),
        Ok(game) => Game::try_from(game),
        Err(_) => Err(WireError::UnknownEnum {
            field,
            value,
            legal: GAME_VALUES,
        }),
    }
}

// ---------------------------------------------------------------------------------------
// Action
// ---------------------------------------------------------------------------------------

const ACTION_KINDS: &str = "set one of stop, reroll, check, bet, call, raise, fold";

impl From<Action> for pb::Action {
    fn from(action: Action) -> pb::Action {
        use pb::action::Kind;
        let kind = match action {
            Action::Stop { turn } => Kind::Stop(pb::Stop {
                turn: mask_to_wire(turn),
            }),
            Action::Reroll { dice, turn } => Kind::Reroll(pb::Reroll {
                dice: mask_to_wire(dice),
                turn: mask_to_wire(turn),
            }),
            Action::Check => Kind::Check(pb::Check {}),
            Action::Bet => Kind::Bet(pb::Bet {}),
            Action::Call => Kind::Call(pb::Call {}),
            Action::Raise => Kind::Raise(pb::Raise {}),
            Action::Fold => Kind::Fold(pb::Fold {}),
        };
        pb::Action { kind: Some(kind) }
    }
}

impl TryFrom<&pb::Action> for Action {
    type Error = WireError;
    fn try_from(action: &pb::Action) -> Result<Action, WireError> {
        use pb::action::Kind;
        Ok(match required(&action.kind, "action", ACTION_KINDS)? {
            Kind::Stop(stop) => Action::Stop {
                turn: mask_from_wire("stop.turn", "turn", &stop.turn)?,
            },
            Kind::Reroll(reroll) => Action::Reroll {
                dice: mask_from_wire("reroll.dice", "reroll", &reroll.dice)?,
                turn: mask_from_wire("reroll.turn", "turn", &reroll.turn)?,
            },
            Kind::Check(_) => Action::Check,
            Kind::Bet(_) => Action::Bet,
            Kind::Call(_) => Action::Call,
            Kind::Raise(_) => Action::Raise,
            Kind::Fold(_) => Action::Fold,
        })
    }
}

impl TryFrom<pb::Action> for Action {
    type Error = WireError;
    fn try_from(action: pb::Action) -> Result<Action, WireError> {
        Action::try_from(&action)
    }
}

// ---------------------------------------------------------------------------------------
// What a bot sends: Hello and Decision
// ---------------------------------------------------------------------------------------

/// A checked [`pb::Hello`]: the bot's name, the games it plays and its wishes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BotHello {
    /// The display name, following the one name rule ([`crate::names::check_name`]).
    pub name: String,
    /// The games the bot plays: 1 to 3, each once, in the order the bot named them.
    pub games: Vec<Game>,
    /// The client's version text: at most 64 printable characters, possibly empty.
    pub client_version: String,
    /// A preset the bot would like to play; its game is one of `games`.
    pub preset: Option<String>,
    /// How many matches the stream plays; `None` for no limit (wire value 0).
    pub max_matches: Option<u32>,
}

/// Whether `c` is invisible formatting that could make a name look like another one
/// (zero-width characters, bidirectional overrides, the byte order mark, ...).
fn is_invisible_format(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'
            | '\u{034F}'
            | '\u{061C}'
            | '\u{115F}'
            | '\u{1160}'
            | '\u{17B4}'
            | '\u{17B5}'
            | '\u{180B}'..='\u{180F}'
            | '\u{200B}'..='\u{200F}'
            | '\u{2028}'..='\u{202E}'
            | '\u{2060}'..='\u{206F}'
            | '\u{3164}'
            | '\u{FE00}'..='\u{FE0F}'
            | '\u{FEFF}'
            | '\u{FFA0}'
            | '\u{FFF0}'..='\u{FFFB}'
            | '\u{E0000}'..='\u{E0FFF}'
    )
}

/// Checks a text from a bot: at most `max` characters, no control or invisible
/// formatting characters.
fn check_text(field: &'static str, text: &str, max: usize) -> Result<(), WireError> {
    let chars = text.chars().count();
    if chars > max {
        return Err(WireError::TooLong { field, chars, max });
    }
    if let Some((position, c)) = text
        .chars()
        .enumerate()
        .find(|&(_, c)| c.is_control() || is_invisible_format(c))
    {
        return Err(WireError::Unprintable {
            field,
            position,
            code: format!("U+{:04X}", u32::from(c)),
        });
    }
    Ok(())
}

impl TryFrom<&pb::Hello> for BotHello {
    type Error = WireError;
    fn try_from(hello: &pb::Hello) -> Result<BotHello, WireError> {
        crate::names::check_name(&hello.name).map_err(|error| WireError::Name {
            field: "hello.name",
            error,
        })?;
        check_text(
            "hello.client_version",
            &hello.client_version,
            MAX_CLIENT_VERSION_CHARS,
        )?;

        if hello.games.is_empty() {
            return Err(WireError::Empty {
                field: "hello.games",
                expected: "name the games the bot plays: 1 (schocken), 2 (sjokken), 3 (zokken)",
            });
        }
        let mut games = Vec::with_capacity(Game::ALL.len());
        for &value in &hello.games {
            let game = game_from_wire("hello.games", value)?;
            if games.contains(&game) {
                return Err(WireError::RepeatedGame {
                    field: "hello.games",
                    game,
                });
            }
            games.push(game);
        }

        let preset = match &hello.preset {
            None => None,
            Some(name) => {
                let rules = Rules::preset(name).map_err(|_| WireError::UnknownPreset {
                    field: "hello.preset",
                    name: quote(name),
                })?;
                if !games.contains(&rules.game()) {
                    return Err(WireError::PresetNotPlayed {
                        field: "hello.preset",
                        name: name.clone(),
                        game: rules.game(),
                    });
                }
                Some(name.clone())
            }
        };

        Ok(BotHello {
            name: hello.name.clone(),
            games,
            client_version: hello.client_version.clone(),
            preset,
            max_matches: (hello.max_matches > 0).then_some(hello.max_matches),
        })
    }
}

impl TryFrom<pb::Hello> for BotHello {
    type Error = WireError;
    fn try_from(hello: pb::Hello) -> Result<BotHello, WireError> {
        BotHello::try_from(&hello)
    }
}

impl From<&BotHello> for pb::Hello {
    fn from(hello: &BotHello) -> pb::Hello {
        pb::Hello {
            name: hello.name.clone(),
            games: hello
                .games
                .iter()
                .map(|&g| pb::Game::from(g) as i32)
                .collect(),
            client_version: hello.client_version.clone(),
            preset: hello.preset.clone(),
            max_matches: hello.max_matches.unwrap_or(0),
        }
    }
}

/// A checked [`pb::Decision`]: the request it answers and a well-formed action (whether the
/// action is legal is for the engine to say).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct BotDecision {
    /// The `request_id` of the answered [`pb::DecisionRequest`].
    pub request_id: u64,
    /// The action.
    pub action: Action,
}

impl TryFrom<&pb::Decision> for BotDecision {
    type Error = WireError;
    fn try_from(decision: &pb::Decision) -> Result<BotDecision, WireError> {
        let action = required(&decision.action, "decision.action", ACTION_KINDS)?;
        Ok(BotDecision {
            request_id: decision.request_id,
            action: Action::try_from(action)?,
        })
    }
}

impl TryFrom<pb::Decision> for BotDecision {
    type Error = WireError;
    fn try_from(decision: pb::Decision) -> Result<BotDecision, WireError> {
        BotDecision::try_from(&decision)
    }
}

impl From<BotDecision> for pb::Decision {
    fn from(decision: BotDecision) -> pb::Decision {
        pb::Decision {
            request_id: decision.request_id,
            action: Some(decision.action.into()),
        }
    }
}

// ---------------------------------------------------------------------------------------
// Hand
// ---------------------------------------------------------------------------------------

impl From<Hand> for pb::Hand {
    fn from(hand: Hand) -> pb::Hand {
        use pb::HandKind as K;
        let one = |x: u8| vec![u32::from(x)];
        let (kind, values) = match hand {
            Hand::SchockOut => (K::SchockOut, vec![]),
            Hand::Jule => (K::Jule, vec![]),
            Hand::Schock(x) => (K::Schock, one(x)),
            Hand::General(x) => (K::General, one(x)),
            Hand::Straight(x) => (K::Straight, one(x)),
            Hand::Number(n) => (K::Number, vec![u32::from(n)]),
            Hand::Sjok1 => (K::Sjok1, vec![]),
            Hand::Sjok(x) => (K::Sjok, one(x)),
            Hand::Harde(x) => (K::Harde, one(x)),
            Hand::Straat(x) => (K::Straat, one(x)),
            Hand::Hoog(sum) => (K::Hoog, one(sum)),
            Hand::Kelm => (K::Kelm, vec![]),
            Hand::Tinn(d) => (K::Tinn, dice_to_wire(d)),
            Hand::Strasse(x) => (K::Strasse, one(x)),
            Hand::Plus(d) => (K::Plus, dice_to_wire(d)),
            Hand::Pasch(d) => (K::Pasch, dice_to_wire(d)),
            Hand::Sonst(d) => (K::Sonst, dice_to_wire(d)),
        };
        pb::Hand {
            kind: kind as i32,
            values,
            name: hand.to_string(),
            strength: hand.strength(),
        }
    }
}

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
    let values = hand.values.as_slice();
    let bad = |kind: &'static str, expected: &'static str| WireError::BadHand {
        field,
        kind,
        values: quote_list(values),
        expected,
    };
    // The single value of a one-value hand, if it lies in `range`.
    let one = |kind: &'static str, range: std::ops::RangeInclusive<u32>, expected| match values {
        [x] if range.contains(x) => Ok(*x as u8),
        _ => Err(bad(kind, expected)),
    };
    let none = |kind: &'static str, hand: Hand| match values {
        [] => Ok(hand),
        _ => Err(bad(kind, "no values")),
    };
    // Three Zokken dice high to low that make exactly `want`'s figure.
    let zokken = |kind: &'static str, make: fn([u8; 3]) -> Hand| {
        let expected = "three Miwin dice (1..=9) high to low that make this figure";
        match values {
            [a, b, c] if [a, b, c].iter().all(|&&v| (1..=9).contains(&v)) => {
                let d = [*a as u8, *b as u8, *c as u8];
                let want = make(d);
                if Hand::zokken(d) == want && d == knobel_engine::sorted_desc(d) {
                    Ok(want)
                } else {
                    Err(bad(kind, expected))
                }
            }
            _ => Err(bad(kind, expected)),
        }
    };
    Ok(match kind {
        K::Unspecified => {
            return Err(WireError::UnknownEnum {
                field,
                value: hand.kind,
                legal: HAND_KINDS,
            });
        }
        K::SchockOut => none("schock out", Hand::SchockOut)?,
        K::Jule => none("jule", Hand::Jule)?,
        K::Schock => Hand::Schock(one("schock", 2..=6, "one die, 2..=6")?),
        K::General => Hand::General(one("general", 2..=6, "one die, 2..=6")?),
        K::Straight => Hand::Straight(one("straight", 3..=6, "its top die, 3..=6")?),
        K::Number => {
            let expected = "a number of three dice (1..=6) high to low, not a higher hand";
            match values {
                [n] if (100..=666).contains(n) => {
                    let d = [(n / 100) as u8, (n / 10 % 10) as u8, (n % 10) as u8];
                    let dice_ok = d.iter().all(|v| (1..=6).contains(v));
                    let higher = d[0] == d[2] || (d[1] == 1 && d[2] == 1);
                    if dice_ok && d == knobel_engine::sorted_desc(d) && !higher {
                        Hand::Number(*n as u16)
                    } else {
                        return Err(bad("number", expected));
                    }
                }
                _ => return Err(bad("number", expected)),
            }
        }
        K::Sjok1 => none("sjok1", Hand::Sjok1)?,
        K::Sjok => Hand::Sjok(one("sjok", 2..=6, "one die, 2..=6")?),
        K::Harde => Hand::Harde(one("harde", 2..=6, "one die, 2..=6")?),
        K::Straat => Hand::Straat(one("straat", 3..=6, "its top die, 3..=6")?),
        K::Hoog => Hand::Hoog(one("hoog", 5..=17, "the pip sum, 5..=17")?),
        K::Kelm => none("kelm", Hand::Kelm)?,
        K::Tinn => zokken("tinn", Hand::Tinn)?,
        K::Strasse => Hand::Strasse(one("strasse", 3..=9, "its top die, 3..=9")?),
        K::Plus => zokken("plus", Hand::Plus)?,
        K::Pasch => zokken("pasch", Hand::Pasch)?,
        K::Sonst => zokken("sonst", Hand::Sonst)?,
    })
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

fn req_hand(field: &'static str, hand: &Option<pb::Hand>) -> Result<Hand, WireError> {
    hand_from_wire(field, required(hand, field, "set the hand")?)
}

// ---------------------------------------------------------------------------------------
// Observation
// ---------------------------------------------------------------------------------------

impl From<&TurnView> for pb::TurnView {
    fn from(turn: &TurnView) -> pb::TurnView {
        pb::TurnView {
            dice: dice_view_to_wire(turn.dice),
            throws: turn.throws.into(),
            rolled: mask_to_wire(turn.rolled),
            turned: mask_to_wire(turn.turned),
            done: turn.done,
            hand: turn.hand.map(pb::Hand::from),
        }
    }
}

impl From<&ShakeDecision> for pb::ShakeDecision {
    fn from(d: &ShakeDecision) -> pb::ShakeDecision {
        pb::ShakeDecision {
            max_throws: d.max_throws.into(),
            can_reroll: d.can_reroll,
            turnable: mask_to_wire(d.turnable),
            max_turn: d.max_turn.into(),
            turn_needs_reroll: d.turn_needs_reroll,
            locked: mask_to_wire(d.locked),
        }
    }
}

impl From<&ShakeObservation> for pb::ShakeObservation {
    fn from(o: &ShakeObservation) -> pb::ShakeObservation {
        pb::ShakeObservation {
            game: pb::Game::from(o.game) as i32,
            seat: o.seat.0.into(),
            seats: o.seats.into(),
            half: o.half.into(),
            round: o.round,
            pot: o.pot.into(),
            removed: o.removed.into(),
            tokens: o.tokens.iter().map(|&t| u32::from(t)).collect(),
            in_play: seats_to_wire(o.in_play),
            half_losers: seat_list(&o.half_losers),
            starter: o.starter.0.into(),
            throw_limit: o.throw_limit.map(u32::from),
            to_act: o.to_act.map(|s| u32::from(s.0)),
            turn_order: seat_list(&o.turn_order),
            turns: o.turns.iter().map(pb::TurnView::from).collect(),
            decision: o.decision.as_ref().map(pb::ShakeDecision::from),
        }
    }
}

impl From<ZokkenPhase> for pb::ZokkenPhase {
    fn from(phase: ZokkenPhase) -> pb::ZokkenPhase {
        let (kind, number) = match phase {
            ZokkenPhase::Betting(n) => (pb::ZokkenPhaseKind::Betting, n),
            ZokkenPhase::Choosing(n) => (pb::ZokkenPhaseKind::Choosing, n),
            ZokkenPhase::Over => (pb::ZokkenPhaseKind::Over, 0),
        };
        pb::ZokkenPhase {
            kind: kind as i32,
            number: number.into(),
        }
    }
}

impl From<ZokkenSeatStatus> for pb::ZokkenSeatStatus {
    fn from(status: ZokkenSeatStatus) -> pb::ZokkenSeatStatus {
        match status {
            ZokkenSeatStatus::InRound => pb::ZokkenSeatStatus::InRound,
            ZokkenSeatStatus::Folded => pb::ZokkenSeatStatus::Folded,
            ZokkenSeatStatus::SittingOut => pb::ZokkenSeatStatus::SittingOut,
        }
    }
}

impl From<&ZokkenSeatView> for pb::ZokkenSeatView {
    fn from(v: &ZokkenSeatView) -> pb::ZokkenSeatView {
        pb::ZokkenSeatView {
            dice: dice_to_wire(v.dice),
            figure: Some(v.figure.into()),
            status: pb::ZokkenSeatStatus::from(v.status) as i32,
            put_in: v.put_in,
            staked: v.staked,
            net: v.net,
        }
    }
}

impl From<&ZokkenObservation> for pb::ZokkenObservation {
    fn from(o: &ZokkenObservation) -> pb::ZokkenObservation {
        pb::ZokkenObservation {
            seat: o.seat.0.into(),
            round: o.round,
            rounds: o.rounds,
            replay: o.replay.into(),
            phase: Some(o.phase.into()),
            seats: o.seats.iter().map(pb::ZokkenSeatView::from).collect(),
            pot: o.pot,
            current_bet: o.current_bet,
            to_call: o.to_call,
            bets: o.bets.into(),
            max_bets: o.max_bets.into(),
            bet_size: o.bet_size,
            to_act: seats_to_wire(o.to_act),
            chosen: o.chosen,
        }
    }
}

impl From<&Observation> for pb::Observation {
    fn from(o: &Observation) -> pb::Observation {
        use pb::observation::Kind;
        let kind = match o {
            Observation::Shake(s) => Kind::Shake(s.into()),
            Observation::Zokken(z) => Kind::Zokken(z.into()),
        };
        pb::Observation { kind: Some(kind) }
    }
}

impl From<Observation> for pb::Observation {
    fn from(o: Observation) -> pb::Observation {
        pb::Observation::from(&o)
    }
}

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
        if !(2..=MAX_SEATS as u8).contains(&seats) {
            return Err(WireError::OutOfRange {
                field: "shake.seats",
                value: seats.into(),
                min: 2,
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
// Event
// ---------------------------------------------------------------------------------------

impl From<Event> for pb::Event {
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

impl TryFrom<&pb::Event> for Event {
    type Error = WireError;
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
                            legal: FORFEIT_REASONS,
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

// ---------------------------------------------------------------------------------------
// Outcome and match messages
// ---------------------------------------------------------------------------------------

const FORFEIT_REASONS: &str =
    "1 (strikes), 2 (disconnected), 3 (not reading), 4 (revoked), 5 (absent)";

impl From<ForfeitReason> for pb::ForfeitReason {
    fn from(reason: ForfeitReason) -> pb::ForfeitReason {
        match reason {
            ForfeitReason::Strikes => pb::ForfeitReason::Strikes,
            ForfeitReason::Disconnected => pb::ForfeitReason::Disconnected,
            ForfeitReason::NotReading => pb::ForfeitReason::NotReading,
            ForfeitReason::Revoked => pb::ForfeitReason::Revoked,
            ForfeitReason::Absent => pb::ForfeitReason::Absent,
        }
    }
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
                legal: FORFEIT_REASONS,
            });
        }
    }))
}

/// The wire form of an outcome. The proto leaves empty the lists a game does not have
/// (the engine holds zeros there): tokens in Zokken, halves lost in Sjokken and Zokken,
/// chips in Schocken and Sjokken. The game is told by the outcome itself, by the engine's
/// invariants: only Schocken and Sjokken have a loser, and only in Schocken does the loser
/// hold lost halves (it lost at least the last half).
impl From<&Outcome> for pb::Outcome {
    fn from(o: &Outcome) -> pb::Outcome {
        let shake = o.loser.is_some();
        let schocken = shake && o.halves_lost.iter().any(|&h| h > 0);
        pb::Outcome {
            placings: o.placings.iter().map(|&p| u32::from(p)).collect(),
            loser: o.loser.map(|s| u32::from(s.0)),
            tokens: if shake { o.tokens.clone() } else { Vec::new() },
            halves_lost: if schocken {
                o.halves_lost.iter().map(|&h| u32::from(h)).collect()
            } else {
                Vec::new()
            },
            chips: if shake { Vec::new() } else { o.chips.clone() },
            strikes: o.strikes.clone(),
            timeouts: o.timeouts.clone(),
            forfeits: o
                .forfeits
                .iter()
                .map(|f| f.map_or(pb::ForfeitReason::None, pb::ForfeitReason::from) as i32)
                .collect(),
        }
    }
}

impl From<Outcome> for pb::Outcome {
    fn from(o: Outcome) -> pb::Outcome {
        pb::Outcome::from(&o)
    }
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

/// The rules' numeric settings by name, as [`pb::MatchStart::settings`] carries them.
pub fn rules_settings(rules: &Rules) -> HashMap<String, u32> {
    rules
        .numbers()
        .into_iter()
        .map(|(name, value)| (name.to_owned(), value))
        .collect()
}

/// The [`pb::MatchStart`] for the bot in `your_seat` of a match of `rules` (started from
/// the preset `preset`), with `seat_names` indexed by seat.
pub fn match_start(
    match_id: &str,
    preset: &str,
    rules: &Rules,
    seat_names: &[String],
    your_seat: Seat,
    time_control: pb::TimeControl,
) -> pb::MatchStart {
    pb::MatchStart {
        match_id: match_id.to_owned(),
        game: pb::Game::from(rules.game()) as i32,
        preset: preset.to_owned(),
        variants: rules.variants_on().into_iter().map(str::to_owned).collect(),
        settings: rules_settings(rules),
        seats: seat_names.len() as u32,
        seat_names: seat_names.to_vec(),
        your_seat: your_seat.0.into(),
        time_control: Some(time_control),
    }
}

/// The [`pb::DecisionRequest`] for `seat` in `m` now: its observation, legal actions and
/// default action. `None` when `seat` need not act.
pub fn decision_request(
    m: &Match,
    seat: Seat,
    request_id: u64,
    deadline_ms: u32,
    time_bank_ms: u32,
) -> Option<pb::DecisionRequest> {
    let default_action = m.default_action(seat)?;
    Some(decision_request_from(
        request_id,
        &m.observe(seat),
        &m.legal_actions(seat),
        default_action,
        deadline_ms,
        time_bank_ms,
    ))
}

/// The [`pb::DecisionRequest`] made of its parts: what the seat sees, its legal actions,
/// the action applied if it does not answer in time, and its time.
pub fn decision_request_from(
    request_id: u64,
    observation: &Observation,
    legal_actions: &[Action],
    default_action: Action,
    deadline_ms: u32,
    time_bank_ms: u32,
) -> pb::DecisionRequest {
    pb::DecisionRequest {
        request_id,
        observation: Some(observation.into()),
        legal_actions: legal_actions
            .iter()
            .copied()
            .map(pb::Action::from)
            .collect(),
        default_action: Some(default_action.into()),
        deadline_ms,
        time_bank_ms,
    }
}

/// The [`pb::ArenaMessage`] carrying `events` (oldest first) and then `kind`, if any.
pub fn arena_message(events: &[Event], kind: Option<pb::arena_message::Kind>) -> pb::ArenaMessage {
    pb::ArenaMessage {
        events: events.iter().map(pb::Event::from).collect(),
        kind,
    }
}

/// The [`pb::MatchResult`] for the bot in `your_seat`: `FINISHED` with the outcome, or
/// `ABORTED` when there is none.
pub fn match_result(match_id: &str, outcome: Option<&Outcome>, your_seat: Seat) -> pb::MatchResult {
    let your_place = outcome
        .and_then(|o| o.placings.get(your_seat.index()))
        .map_or(0, |&p| u32::from(p));
    pb::MatchResult {
        match_id: match_id.to_owned(),
        status: if outcome.is_some() {
            pb::MatchStatus::Finished
        } else {
            pb::MatchStatus::Aborted
        } as i32,
        outcome: outcome.map(pb::Outcome::from),
        your_seat: your_seat.0.into(),
        your_place,
    }
}

/// Wraps a message kind into an [`pb::ArenaMessage`].
impl From<pb::arena_message::Kind> for pb::ArenaMessage {
    fn from(kind: pb::arena_message::Kind) -> pb::ArenaMessage {
        pb::ArenaMessage {
            events: Vec::new(),
            kind: Some(kind),
        }
    }
}

/// Wraps a message kind into a [`pb::BotMessage`].
impl From<pb::bot_message::Kind> for pb::BotMessage {
    fn from(kind: pb::bot_message::Kind) -> pb::BotMessage {
        pb::BotMessage { kind: Some(kind) }
    }
}
