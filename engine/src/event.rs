//! Public events: what everybody at the table may learn as the match goes on.
//!
//! Events never carry a die that RULES.md §5 hides from any player: a die under the cup or
//! a blind die is `None` until the round's reveal. The full truth (every die as thrown) is
//! kept only in the [`MatchLog`](crate::MatchLog).

use serde::{Deserialize, Serialize};

use crate::action::Action;
use crate::hand::Hand;
use crate::penalty::ForfeitReason;
use crate::types::{DieMask, Placings, Seat, Seats};

/// Something that happened at the table, visible to every player.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// A throw of the opening throw-off that picks the first starter (not a round; all
    /// dice open). `attempt` counts re-throws among tied players, from 1.
    OpeningThrow {
        /// Who threw.
        seat: Seat,
        /// Which throw-off attempt.
        attempt: u8,
        /// The dice.
        dice: [u8; 3],
    },
    /// The opening throw-off picked the first starter.
    StarterChosen {
        /// The starter.
        seat: Seat,
    },
    /// Schocken: a half (3 = the final) starts with all its tokens in the middle.
    HalfStarted {
        /// 1, 2, or 3 for the final.
        half: u8,
        /// The seats playing this half.
        seats: Seats,
        /// Who starts its first round.
        starter: Seat,
    },
    /// A round starts.
    RoundStarted {
        /// The round number, from 1 for the whole match (Zokken: tie replays keep it).
        round: u32,
        /// Zokken: 0 for the round itself, 1.. for tie replays; 0 elsewhere.
        replay: u8,
        /// The seats taking part.
        seats: Seats,
        /// Schocken and Sjokken: who throws first (and fixes the throw limit).
        starter: Option<Seat>,
    },
    /// A seat threw. `dice` is the public view of all three of its dice right after the
    /// throw: `None` for a die under the cup or a blind die.
    Thrown {
        /// Who threw.
        seat: Seat,
        /// The throw number within the turn (Zokken: within the round), from 1.
        throw: u8,
        /// The dice rolled in this throw.
        rolled: DieMask,
        /// What everybody may see of the seat's dice.
        dice: [Option<u8>; 3],
    },
    /// Sixes turned into ones (held from now on).
    Turned {
        /// Who turned.
        seat: Seat,
        /// The dice turned.
        dice: DieMask,
    },
    /// A seat put dice back into the cup; the others are set aside face up.
    Rerolled {
        /// Who.
        seat: Seat,
        /// The dice to be thrown again.
        dice: DieMask,
    },
    /// A seat ended its turn.
    Stopped {
        /// Who.
        seat: Seat,
        /// Throws used.
        throws: u8,
    },
    /// The starter's throws fixed the throw limit for the round.
    ThrowLimitSet {
        /// The limit L.
        throws: u8,
    },
    /// The round's hands are shown.
    Revealed {
        /// Whose hand.
        seat: Seat,
        /// The dice (Zokken: the face values of dice III, IV, V).
        dice: [u8; 3],
        /// The hand's name and rank.
        hand: Hand,
    },
    /// Schocken and Sjokken: the round's best and worst hands.
    RoundDecided {
        /// Best hand.
        winner: Seat,
        /// Worst hand.
        loser: Seat,
        /// Tokens the winner's hand is worth.
        value: u8,
    },
    /// Tokens moved to a seat, from the middle (`from: None`) or from another seat.
    TokensMoved {
        /// From whom; `None` is the middle pot.
        from: Option<Seat>,
        /// To whom.
        to: Seat,
        /// How many.
        count: u8,
    },
    /// A seat is out (free) for the rest of the half (Schocken) or game (Sjokken).
    SeatOut {
        /// Who.
        seat: Seat,
    },
    /// Sjokken: a SJOK1 frees its thrower; their tokens leave the game.
    Sjok1 {
        /// Who threw it.
        seat: Seat,
        /// Tokens removed from the game with them.
        removed: u8,
    },
    /// Schocken: a seat lost a half.
    HalfLost {
        /// 1, 2, or 3 for the final.
        half: u8,
        /// Who lost it.
        seat: Seat,
    },
    /// Zokken: chips put into the pot as ante.
    Ante {
        /// Who.
        seat: Seat,
        /// How many.
        chips: u32,
    },
    /// Zokken: the seats whose reroll choices are in chose these dice (shown once everybody
    /// has chosen).
    RerollChosen {
        /// Who.
        seat: Seat,
        /// The dice they reroll (possibly none).
        dice: DieMask,
    },
    /// Zokken: a betting action, with the chips it put into the pot.
    Betting {
        /// Who.
        seat: Seat,
        /// Check, bet, call, raise or fold.
        action: Action,
        /// Chips put in by this action.
        chips: u32,
    },
    /// Zokken: equal best figures; the tied seats replay the round for the pot.
    TieReplay {
        /// The tied seats.
        seats: Seats,
        /// The replay number, from 1.
        replay: u8,
    },
    /// Zokken: a seat won chips from the pot (the whole pot, or its share of a split).
    PotWon {
        /// Who.
        seat: Seat,
        /// How many chips.
        chips: u32,
    },
    /// The match is over. `placings[seat]` is that seat's final place, 1 the best:
    /// forfeited seats are placed after all others (see [`Match::forfeit`]), the same
    /// placings as the [`Outcome`]'s.
    ///
    /// [`Match::forfeit`]: crate::Match::forfeit
    /// [`Outcome`]: crate::Outcome
    MatchOver {
        /// Place of every seat.
        placings: Placings,
    },
    /// The referee forfeited a seat: from now on it is played by default actions, and it is
    /// placed after every seat that did not forfeit. (A strike is not public: it is only in
    /// the match log.)
    Forfeited {
        /// Who.
        seat: Seat,
        /// Why.
        reason: ForfeitReason,
    },
}
