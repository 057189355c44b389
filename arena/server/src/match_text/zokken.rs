//! Zokken's part of the account: rounds and tie replays, the ante, the bets and the pot,
//! and every seat's net chips.

use knobel_engine::{Action, MAX_SEATS, Seat, Seats};

use super::Account;

/// The chips on the table, followed from the events.
#[derive(Default)]
pub(super) struct Table {
    /// Chips in the pot.
    pot: u32,
    /// Each seat's net chips so far.
    net: [i64; MAX_SEATS],
    /// The antes of the round just started, written as one line.
    antes: Vec<String>,
    /// The pot as it was won (a split pot is won in shares), until the next round.
    won: Option<u32>,
}

impl Table {
    /// Chips in the pot.
    pub(super) fn pot(&self) -> u32 {
        self.pot
    }

    /// Seat `i`'s net chips so far.
    pub(super) fn net(&self, i: usize) -> i64 {
        self.net.get(i).copied().unwrap_or(0)
    }
}

impl Account<'_> {
    pub(super) fn zokken_round(&mut self, round: u32, replay: u8, seats: Seats) {
        self.flush();
        self.zokken.won = None;
        let players = self.list(seats);
        if replay > 0 {
            let pot = self.zokken.pot;
            self.line(format!(
                "\nRound {round}, replay {replay}: {players} play for the pot of {pot}"
            ));
            return;
        }
        self.line(format!("\nRound {round}: {players} play"));
        let net: Vec<String> = seats
            .iter()
            .map(|seat| format!("{} {:+}", self.name(seat), self.zokken.net[seat.index()]))
            .collect();
        self.line(format!("  net chips so far: {}", net.join(", ")));
    }

    pub(super) fn ante(&mut self, seat: Seat, chips: u32) {
        self.zokken.pot += chips;
        self.zokken.net[seat.index()] -= i64::from(chips);
        let ante = format!("{} {chips}", self.name(seat));
        self.zokken.antes.push(ante);
    }

    /// Writes the antes collected so far, if any, as one line.
    pub(super) fn flush(&mut self) {
        if self.zokken.antes.is_empty() {
            return;
        }
        let antes = std::mem::take(&mut self.zokken.antes).join(", ");
        let pot = self.zokken.pot;
        self.line(format!("  ante: {antes} (pot {pot})"));
    }

    pub(super) fn betting(&mut self, seat: Seat, action: Action, chips: u32) {
        self.flush();
        self.zokken.pot += chips;
        self.zokken.net[seat.index()] -= i64::from(chips);
        let (name, pot) = (self.name(seat), self.zokken.pot);
        let text = match action {
            Action::Check => format!("  {name} checks"),
            Action::Fold => format!("  {name} folds"),
            Action::Bet => format!("  {name} bets {chips} (pot {pot})"),
            Action::Call => format!("  {name} calls {chips} (pot {pot})"),
            Action::Raise => format!("  {name} raises, putting in {chips} (pot {pot})"),
            other => format!("  {name}: {other}, {chips} chips (pot {pot})"),
        };
        self.line(text);
    }

    pub(super) fn tie_replay(&mut self, seats: Seats, replay: u8) {
        let (players, pot) = (self.list(seats), self.zokken.pot);
        self.line(format!(
            "  {players} tie with the best figure: replay {replay} for the pot of {pot}"
        ));
    }

    pub(super) fn pot_won(&mut self, seat: Seat, chips: u32) {
        let pot = *self.zokken.won.get_or_insert(self.zokken.pot);
        self.zokken.pot = self.zokken.pot.saturating_sub(chips);
        self.zokken.net[seat.index()] += i64::from(chips);
        let name = self.name(seat);
        if chips == pot {
            self.line(format!("  {name} wins the pot of {chips}"));
        } else {
            self.line(format!("  {name} gets {chips} of the split pot of {pot}"));
        }
    }
}
