//! Wire to engine for what a bot sends (untrusted input; never panics): [`BotHello`] from
//! [`pb::Hello`], [`BotDecision`] from [`pb::Decision`], [`Action`] and [`Game`], and the
//! field checks every wire-to-engine conversion uses (seats, die slots, dice, lengths,
//! required fields).

use std::sync::LazyLock;

use knobel_engine::{Action, DieMask, Game, MAX_SEATS, Rules, Seat, Seats};

use super::{MAX_CLIENT_VERSION_CHARS, WireError, game_values, quote};
use crate::v1 as pb;

// ---------------------------------------------------------------------------------------
// Small values and field checks
// ---------------------------------------------------------------------------------------

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

pub(crate) fn seat_vec(field: &'static str, values: &[u32]) -> Result<Vec<Seat>, WireError> {
    check_max_len(field, values.len(), MAX_SEATS)?;
    values.iter().map(|&v| seat_from_wire(field, v)).collect()
}

pub(crate) fn check_max_len(field: &'static str, len: usize, max: usize) -> Result<(), WireError> {
    if len > max {
        return Err(WireError::WrongLength {
            field,
            len,
            expected: format!("at most {max}"),
        });
    }
    Ok(())
}

pub(crate) fn check_len(field: &'static str, len: usize, expected: usize) -> Result<(), WireError> {
    if len != expected {
        return Err(WireError::WrongLength {
            field,
            len,
            expected: expected.to_string(),
        });
    }
    Ok(())
}

pub(crate) fn u8_from(field: &'static str, value: u32) -> Result<u8, WireError> {
    u8::try_from(value).map_err(|_| WireError::OutOfRange {
        field,
        value: value.into(),
        min: 0,
        max: u8::MAX.into(),
    })
}

pub(crate) fn u8_vec(field: &'static str, values: &[u32]) -> Result<Vec<u8>, WireError> {
    check_max_len(field, values.len(), MAX_SEATS)?;
    values.iter().map(|&v| u8_from(field, v)).collect()
}

pub(crate) fn dice_from_wire(field: &'static str, values: &[u32]) -> Result<[u8; 3], WireError> {
    check_len(field, values.len(), 3)?;
    Ok([
        u8_from(field, values[0])?,
        u8_from(field, values[1])?,
        u8_from(field, values[2])?,
    ])
}

pub(crate) fn dice_view_from_wire(
    field: &'static str,
    dice: &[pb::Die],
) -> Result<[Option<u8>; 3], WireError> {
    check_len(field, dice.len(), 3)?;
    let one = |die: &pb::Die| die.value.map(|v| u8_from(field, v)).transpose();
    Ok([one(&dice[0])?, one(&dice[1])?, one(&dice[2])?])
}

pub(crate) fn required<'a, T>(
    value: &'a Option<T>,
    field: &'static str,
    expected: &'static str,
) -> Result<&'a T, WireError> {
    value.as_ref().ok_or(WireError::Missing { field, expected })
}

// ---------------------------------------------------------------------------------------
// Game
// ---------------------------------------------------------------------------------------

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
            legal: game_values(),
        }),
    }
}

// ---------------------------------------------------------------------------------------
// Action
// ---------------------------------------------------------------------------------------

/// What a missing action must be, for error messages.
pub(crate) const ACTION_KINDS: &str = "set one of stop, reroll, check, bet, call, raise, fold";

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
    /// The client's version text: at most [`MAX_CLIENT_VERSION_CHARS`] printable characters, possibly empty.
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
/// formatting characters. For free text such as the client version this is deliberately
/// laxer than the name rule ([`crate::names::check_name`]), which also refuses the other
/// format characters, whitespace but U+0020 and unassigned code points: every character
/// refused here is refused in a name too (tested below).
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

/// What an empty `hello.games` must hold, for its error message.
static NO_GAMES: LazyLock<String> =
    LazyLock::new(|| format!("name the games the bot plays: {}", game_values()));

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
                expected: &NO_GAMES,
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

#[cfg(test)]
mod tests {
    use super::is_invisible_format;
    use crate::names::forbidden_class;

    #[test]
    fn every_unprintable_character_is_forbidden_in_a_name_too() {
        for c in (0..=u32::from(char::MAX)).filter_map(char::from_u32) {
            if c.is_control() || is_invisible_format(c) {
                assert!(forbidden_class(c).is_some(), "U+{:04X}", u32::from(c));
            }
        }
    }
}
