//! Schocken's and Sjokken's part of the account: halves, rounds, hands and the tokens
//! (Schocken's mats, Sjokken's penalty points) moving between the middle and the seats.

use knobel_engine::{Game, MAX_SEATS, Outcome, Rules, Seat, Seats};

use super::{Account, hand_name};

/// The tokens on the table, followed from the events.
pub(super) struct Table {
    /// Tokens in the middle.
    pot: u8,
    /// Tokens each seat holds.
    held: [u8; MAX_SEATS],
    /// The half being played (Schocken; 3 is the final).
    half: u8,
}

impl Table {
    pub(super) fn new(rules: &Rules) -> Table {
        let pot = match rules {
            Rules::Schocken(r) => r.tokens,
            Rules::Sjokken(r) => r.tokens,
            Rules::Zokken(_) => 0,
        };
        Table {
            pot,
            held: [0; MAX_SEATS],
            half: 0,
        }
    }

    /// Tokens in the middle.
    pub(super) fn pot(&self) -> u8 {
        self.pot
    }

    /// Tokens seat `i` holds.
    pub(super) fn held(&self, i: usize) -> u8 {
        self.held.get(i).copied().unwrap_or(0)
    }

    /// The half being played (0 outside Schocken's halves).
    pub(super) fn half(&self) -> u8 {
        self.half
    }
}

/// "1 mat", "6 mats", "1 penalty point", "6 penalty points".
pub(super) fn tokens(game: Game, count: i64) -> String {
    let word = if game == Game::Schocken {
        "mat"
    } else {
        "penalty point"
    };
    let s = if count == 1 { "" } else { "s" };
    format!("{count} {word}{s}")
}

/// Half 1, half 2 or the final.
fn half_name(half: u8) -> String {
    if half == 3 {
        "the final".to_owned()
    } else {
        format!("half {half}")
    }
}

/// A seat's line in the final placings: halves lost and tokens held (Schocken) or the
/// penalty points held (Sjokken), and whether it lost the game.
pub(super) fn result(game: Game, outcome: &Outcome, i: usize) -> String {
    let held = tokens(game, outcome.tokens[i]);
    let mut text = if game == Game::Schocken {
        let halves = outcome.halves_lost[i];
        match halves {
            0 => format!("lost no half, holds {held}"),
            1 => format!("lost 1 half, holds {held}"),
            n => format!("lost {n} halves, holds {held}"),
        }
    } else {
        format!("holds {held}")
    };
    if outcome.loser == Some(Seat(i as u8)) {
        text.push_str(", loses the game");
    }
    text
}

impl Account<'_> {
    fn tokens(&self, count: u8) -> String {
        tokens(self.rules.game(), count.into())
    }

    pub(super) fn half_started(&mut self, half: u8, seats: Seats, starter: Seat) {
        self.shake.half = half;
        self.shake.pot = match self.rules {
            Rules::Schocken(r) => r.tokens,
            _ => self.shake.pot,
        };
        self.shake.held = [0; MAX_SEATS];
        let title = if half == 3 {
            "The final".to_owned()
        } else {
            format!("Half {half}")
        };
        let middle = self.tokens(self.shake.pot);
        let (players, starts) = (self.list(seats), self.name(starter));
        self.line(format!(
            "\n{title}: {middle} in the middle; {players} play; {starts} starts."
        ));
    }

    pub(super) fn shake_round(&mut self, round: u32, seats: Seats, starter: Seat) {
        let half = match self.shake.half {
            0 => String::new(),
            half => format!(" ({})", half_name(half)),
        };
        let starts = self.name(starter);
        self.line(format!("\nRound {round}{half}: {starts} starts"));
        let word = if self.rules.game() == Game::Schocken {
            "mats"
        } else {
            "penalty points"
        };
        let held: Vec<String> = seats
            .iter()
            .map(|seat| format!("{} {}", self.name(seat), self.shake.held[seat.index()]))
            .collect();
        self.line(format!(
            "  {word}: middle {}, {}",
            self.shake.pot,
            held.join(", ")
        ));
    }

    pub(super) fn round_decided(&mut self, winner: Seat, loser: Seat, value: u8) {
        let hand = self.hands[winner.index()].map_or_else(String::new, hand_name);
        let worth = match self.hands[winner.index()] {
            Some(knobel_engine::Hand::SchockOut) => "all the mats".to_owned(),
            _ => self.tokens(value),
        };
        let (winner, loser) = (self.name(winner), self.name(loser));
        self.line(format!(
            "  {winner} wins the round with {hand} (worth {worth}); {loser} loses it"
        ));
    }

    pub(super) fn tokens_moved(&mut self, from: Option<Seat>, to: Seat, count: u8) {
        let moved = self.tokens(count);
        let receiver = self.name(to);
        let table = &mut self.shake;
        table.held[to.index()] += count;
        match from {
            None => {
                table.pot = table.pot.saturating_sub(count);
                let left = table.pot;
                self.line(format!(
                    "  {receiver} takes {moved} from the middle ({left} left there)"
                ));
            }
            Some(giver) => {
                table.held[giver.index()] = table.held[giver.index()].saturating_sub(count);
                let giver = self.name(giver);
                self.line(format!("  {giver} passes {moved} to {receiver}"));
            }
        }
    }

    pub(super) fn seat_out(&mut self, seat: Seat) {
        let rest = if self.rules.game() == Game::Schocken {
            "half"
        } else {
            "game"
        };
        let name = self.name(seat);
        self.line(format!("  {name} is out (free) for the rest of the {rest}"));
    }

    pub(super) fn sjok1(&mut self, seat: Seat, removed: u8) {
        self.shake.held[seat.index()] = 0;
        let (name, removed) = (self.name(seat), self.tokens(removed));
        self.line(format!(
            "  {name} has SJOK1 and is free, {removed} removed from the game with them"
        ));
    }

    pub(super) fn half_lost(&mut self, half: u8, seat: Seat) {
        let name = self.name(seat);
        self.line(format!("  {name} loses {}", half_name(half)));
    }
}
