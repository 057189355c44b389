//! A readable, throw-by-throw account of a finished match (`knobel match show ID`): the
//! match log replayed with the engine and written out in plain text for a terminal, in the
//! rule book's words (docs/rules.md). It shows everything the log holds, hidden dice
//! included, so it is for humans after the match, never a player's view of a running one.
//!
//! The game-specific events are written by [`shake`] (Schocken and Sjokken) and [`zokken`].

mod shake;
mod zokken;

use std::fmt::Write as _;

use knobel_engine::{
    DieMask, Event, Game, Hand, LogEntry, MAX_SEATS, MatchLog, Outcome, PRESETS, ReplayError,
    Rules, Seat, Seats,
};
use thiserror::Error;

/// Why a match cannot be described.
#[derive(Debug, Error)]
pub enum MatchTextError {
    /// The log does not replay: it was altered, or is not a log of this engine's rules.
    #[error("the match log does not replay: {0}")]
    Replay(#[from] ReplayError),
    /// The log replays but the match is not over (a running or aborted match): its hidden
    /// dice are not public.
    #[error("the match log ends before the match is over")]
    Unfinished,
    /// The number of seat names is not the number of seats.
    #[error("the match has {seats} seats but {names} seat names were given")]
    SeatNames {
        /// Seats in the log.
        seats: usize,
        /// Names given.
        names: usize,
    },
}

/// The account of the match `log`, its seats called `seat_names` (one per seat, in seat
/// order): a header (game, preset, settings, seed, seats), then every round throw by throw
/// with its hands, token or chip movements, bets and penalties, then the final placings.
///
/// The log is replayed and verified first ([`MatchLog::replay`]); a log that does not
/// replay, or whose match is not over, is refused.
pub fn describe(log: &MatchLog, seat_names: &[String]) -> Result<String, MatchTextError> {
    if seat_names.len() != log.seats as usize {
        return Err(MatchTextError::SeatNames {
            seats: log.seats as usize,
            names: seat_names.len(),
        });
    }
    let replayed = log.replay()?;
    let outcome = replayed.outcome().ok_or(MatchTextError::Unfinished)?;
    let mut account = Account::new(log, seat_names);
    account.header(log);
    for entry in &log.entries {
        account.entry(entry);
    }
    account.placings(&outcome);
    Ok(account.out)
}

/// One line of a match's account, as a step of the web viewer's step-through.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// The line, without its indent.
    pub text: String,
    /// Whether it opens a part of the match (a round, a half, the throw-off, the end).
    pub heading: bool,
    /// The dice the line shows: a throw's or a revealed hand's.
    pub dice: Option<StepDice>,
}

/// The dice of a [`Step`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StepDice {
    /// Whose dice.
    pub seat: Seat,
    /// All three, as they lie (the truth, hidden dice included: the match is over).
    pub dice: [u8; 3],
    /// A throw (of a round or of the opening throw-off), rather than a reveal.
    pub throw: bool,
}

/// The account of an ended match `log` as steps, one per line of [`describe`]'s account of
/// its entries (without the header and the final placings), each throw and revealed hand
/// with its dice. The log is replayed and verified first; an aborted match's log, which
/// ends early, is accepted.
pub fn steps(log: &MatchLog, seat_names: &[String]) -> Result<Vec<Step>, MatchTextError> {
    if seat_names.len() != log.seats as usize {
        return Err(MatchTextError::SeatNames {
            seats: log.seats as usize,
            names: seat_names.len(),
        });
    }
    log.replay()?;
    let mut account = Account::new(log, seat_names);
    for entry in &log.entries {
        account.entry(entry);
    }
    account.flush();
    Ok(account.steps)
}

/// The text being written and what it needs to remember between entries.
struct Account<'a> {
    out: String,
    names: &'a [String],
    rules: &'a Rules,
    /// Each seat's dice as they lie now (the truth, hidden dice included).
    dice: [[u8; 3]; MAX_SEATS],
    /// Sixes each seat turned since its last throw.
    turned: [DieMask; MAX_SEATS],
    /// The throw entry just read, written out with the public `thrown` event that follows.
    throw: Option<(Seat, DieMask, [u8; 3])>,
    /// The hand each seat showed at the last reveal.
    hands: [Option<Hand>; MAX_SEATS],
    /// The throw-off attempt last written.
    attempt: u8,
    /// Strikes so far per seat.
    strikes: [u32; MAX_SEATS],
    shake: shake::Table,
    zokken: zokken::Table,
    /// The lines written, as steps.
    steps: Vec<Step>,
    /// The dice of the next line.
    dice_of_line: Option<StepDice>,
}

impl<'a> Account<'a> {
    fn new(log: &'a MatchLog, names: &'a [String]) -> Account<'a> {
        Account {
            out: String::new(),
            names,
            rules: &log.rules,
            dice: [[0; 3]; MAX_SEATS],
            turned: [DieMask::EMPTY; MAX_SEATS],
            throw: None,
            hands: [None; MAX_SEATS],
            attempt: 0,
            strikes: [0; MAX_SEATS],
            shake: shake::Table::new(&log.rules),
            zokken: zokken::Table::default(),
            steps: Vec::new(),
            dice_of_line: None,
        }
    }

    fn name(&self, seat: Seat) -> &'a str {
        self.names.get(seat.index()).map_or("?", String::as_str)
    }

    /// The names of `seats`, in seat order, joined by commas.
    fn list(&self, seats: Seats) -> String {
        let names: Vec<&str> = seats.iter().map(|seat| self.name(seat)).collect();
        names.join(", ")
    }

    fn line(&mut self, text: impl AsRef<str>) {
        let text = text.as_ref();
        self.out.push_str(text);
        self.out.push('\n');
        self.steps.push(Step {
            text: text.trim().to_owned(),
            heading: text.starts_with('\n'),
            dice: self.dice_of_line.take(),
        });
    }

    /// The next line shows `dice` of `seat`.
    fn with_dice(&mut self, seat: Seat, dice: [u8; 3], throw: bool) {
        self.dice_of_line = Some(StepDice { seat, dice, throw });
    }

    fn header(&mut self, log: &MatchLog) {
        let rules = &log.rules;
        let game = match rules.game() {
            Game::Schocken => "Schocken",
            Game::Sjokken => "Sjokken",
            Game::Zokken => "Zokken",
        };
        self.line(format!("{game}, {}, seed {}", preset_of(rules), log.seed));
        let numbers: Vec<String> = rules
            .numbers()
            .iter()
            .map(|(name, value)| format!("{} {value}", name.replace('_', " ")))
            .collect();
        let variants = rules.variants_on();
        let variants = if variants.is_empty() {
            "none".to_owned()
        } else {
            variants.join(", ")
        };
        self.line(format!(
            "Settings: {}; variants on: {variants}",
            numbers.join(", ")
        ));
        let seats: Vec<String> = (0..log.seats)
            .map(|seat| format!("{} (seat {seat})", self.name(Seat(seat))))
            .collect();
        self.line(format!("Seats: {}", seats.join(", ")));
        if rules.game() == Game::Zokken {
            self.line("Dice are Miwin's III, IV and V, listed in that order.");
        }
    }

    fn entry(&mut self, entry: &LogEntry) {
        match *entry {
            // What a decision did shows in the events it caused.
            LogEntry::Decision { .. } => {}
            // The throw-off's throws are written from their events.
            LogEntry::Throw { round: 0, .. } => {}
            LogEntry::Throw {
                seat, rolled, dice, ..
            } => self.throw = Some((seat, rolled, dice)),
            LogEntry::Event { ref event } => self.event(event),
            LogEntry::Strike { seat, reason } => {
                let count = &mut self.strikes[seat.index()];
                *count += 1;
                let count = *count;
                let name = self.name(seat);
                self.line(format!(
                    "  referee: strike {count} for {name} ({})",
                    reason.name().replace('_', " ")
                ));
            }
            // The public `forfeited` event follows and is written instead.
            LogEntry::Forfeit { .. } => {}
        }
    }

    fn event(&mut self, event: &Event) {
        match *event {
            Event::OpeningThrow {
                seat,
                attempt,
                dice,
            } => self.opening_throw(seat, attempt, dice),
            Event::StarterChosen { seat } => {
                let name = self.name(seat);
                self.line(format!("  {name} starts."));
            }
            Event::HalfStarted {
                half,
                seats,
                starter,
            } => self.half_started(half, seats, starter),
            Event::RoundStarted {
                round,
                replay,
                seats,
                starter,
            } => match starter {
                Some(starter) => self.shake_round(round, seats, starter),
                None => self.zokken_round(round, replay, seats),
            },
            Event::Thrown {
                seat, throw, dice, ..
            } => self.thrown(seat, throw, dice),
            Event::Turned { seat, dice } => {
                self.turned[seat.index()] = dice;
                for slot in dice.slots() {
                    self.dice[seat.index()][slot] = 1;
                }
            }
            // The throw that follows says which dice were thrown again.
            Event::Rerolled { .. } | Event::RerollChosen { .. } => {}
            Event::Stopped { seat, throws } => self.stopped(seat, throws),
            Event::ThrowLimitSet { throws } => {
                self.line(format!("  throw limit for this round: {throws}"));
            }
            Event::Revealed { seat, dice, hand } => {
                self.hands[seat.index()] = Some(hand);
                let name = self.name(seat);
                self.with_dice(seat, dice, false);
                self.line(format!(
                    "  {name} shows {}: {}",
                    faces(dice),
                    hand_name(hand)
                ));
            }
            Event::RoundDecided {
                winner,
                loser,
                value,
            } => self.round_decided(winner, loser, value),
            Event::TokensMoved { from, to, count } => self.tokens_moved(from, to, count),
            Event::SeatOut { seat } => self.seat_out(seat),
            Event::Sjok1 { seat, removed } => self.sjok1(seat, removed),
            Event::HalfLost { half, seat } => self.half_lost(half, seat),
            Event::Ante { seat, chips } => self.ante(seat, chips),
            Event::Betting {
                seat,
                action,
                chips,
            } => self.betting(seat, action, chips),
            Event::TieReplay { seats, replay } => self.tie_replay(seats, replay),
            Event::PotWon { seat, chips } => self.pot_won(seat, chips),
            Event::MatchOver { .. } => {
                self.flush();
                self.line("\nThe match is over.");
            }
            Event::Forfeited { seat, reason } => {
                let name = self.name(seat);
                self.line(format!(
                    "  referee: {name} forfeits ({}) and is played by default actions from now on",
                    reason.name().replace('_', " ")
                ));
            }
        }
    }

    fn opening_throw(&mut self, seat: Seat, attempt: u8, dice: [u8; 3]) {
        if attempt != self.attempt {
            self.attempt = attempt;
            if attempt == 1 {
                let who = if self.rules.game() == Game::Sjokken {
                    "highest"
                } else {
                    "lowest"
                };
                self.line(format!("\nOpening throw-off (the {who} throw starts):"));
            } else {
                self.line("  a tie, thrown again:");
            }
        }
        let name = self.name(seat);
        self.with_dice(seat, dice, true);
        self.line(format!("  {name} throws {}", faces(dice)));
    }

    /// A throw, from its log entry (the true dice) and its public event (which tells a
    /// blind throw). `fresh` marks a first throw, which rolls all three dice.
    fn thrown(&mut self, seat: Seat, throw: u8, public: [Option<u8>; 3]) {
        self.flush();
        let Some((_, rolled, dice)) = self.throw.take().filter(|&(s, ..)| s == seat) else {
            return;
        };
        let i = seat.index();
        let fresh = match self.rules.game() {
            Game::Zokken => (throw - 1).is_multiple_of(3),
            _ => throw == 1,
        };
        let name = self.name(seat);
        let mut text = format!("  {name} throws {}", faces(dice));
        if !fresh {
            let before = self.dice[i];
            let turned = self.turned[i];
            let kept = rolled.union(turned).complement();
            let mut parts = Vec::new();
            if rolled.is_empty() && turned.is_empty() {
                parts.push("keeps all".to_owned());
            } else if !kept.is_empty() {
                parts.push(format!("keeps {}", slots(before, kept)));
            }
            if !turned.is_empty() {
                parts.push(format!("turns {} → {}", sixes(turned), ones(turned)));
            }
            if !rolled.is_empty() {
                parts.push(format!(
                    "rerolls {} → {}",
                    slots(before, rolled),
                    slots(dice, rolled)
                ));
            }
            write!(text, " ({})", parts.join("; ")).expect("writing to a String");
        }
        let blind =
            self.rules.game() == Game::Sjokken && rolled.slots().any(|slot| public[slot].is_none());
        if blind {
            text.push_str(", blind: under the cup until the reveal");
        }
        self.with_dice(seat, dice, true);
        self.line(text);
        self.dice[i] = dice;
        self.turned[i] = DieMask::EMPTY;
    }

    fn stopped(&mut self, seat: Seat, throws: u8) {
        let i = seat.index();
        let name = self.name(seat);
        let s = if throws == 1 { "" } else { "s" };
        let turned = std::mem::take(&mut self.turned[i]);
        if turned.is_empty() {
            self.line(format!("  {name} stops after {throws} throw{s}"));
        } else {
            self.line(format!(
                "  {name} turns {} → {} and stops after {throws} throw{s}: {}",
                sixes(turned),
                ones(turned),
                faces(self.dice[i])
            ));
        }
    }

    /// The final placings, best first, with each seat's tokens or chips and penalties.
    fn placings(&mut self, outcome: &Outcome) {
        self.line("Final placings:");
        let mut seats: Vec<usize> = (0..outcome.placings.len()).collect();
        seats.sort_by_key(|&i| (outcome.placings[i], i));
        for i in seats {
            let seat = Seat(i as u8);
            let mut text = format!("  {}. {}: ", outcome.placings[i], self.name(seat));
            text.push_str(&match self.rules.game() {
                Game::Zokken => format!("net chips {:+}", outcome.chips[i]),
                game => shake::result(game, outcome, i),
            });
            if outcome.strikes[i] > 0 {
                write!(
                    text,
                    "; {} strike{} ({} timeout{})",
                    outcome.strikes[i],
                    if outcome.strikes[i] == 1 { "" } else { "s" },
                    outcome.timeouts[i],
                    if outcome.timeouts[i] == 1 { "" } else { "s" },
                )
                .expect("writing to a String");
            }
            if let Some(reason) = outcome.forfeits[i] {
                write!(text, "; forfeited ({})", reason.name().replace('_', " "))
                    .expect("writing to a String");
            }
            self.line(text);
        }
    }
}

/// "preset NAME" when the rules are a preset's, "based on preset NAME" when they are a
/// preset's with other settings or more variants, else "custom rules".
fn preset_of(rules: &Rules) -> String {
    let on = rules.variants_on();
    let candidates = PRESETS.iter().filter_map(|&name| {
        let preset = Rules::preset(name).ok()?;
        let variants = preset.variants_on();
        (preset.game() == rules.game() && variants.iter().all(|v| on.contains(v))).then_some((
            variants.len(),
            name,
            preset == *rules,
        ))
    });
    match candidates.max_by_key(|&(len, ..)| len) {
        Some((_, name, true)) => format!("preset {name}"),
        Some((_, name, false)) => format!("based on preset {name}"),
        None => "custom rules".to_owned(),
    }
}

/// Dice as "6 6 1".
fn faces(dice: [u8; 3]) -> String {
    slots(dice, DieMask::ALL)
}

/// The dice of `mask`, in slot order.
fn slots(dice: [u8; 3], mask: DieMask) -> String {
    let faces: Vec<String> = mask.slots().map(|slot| dice[slot].to_string()).collect();
    faces.join(" ")
}

/// "6 6" for two turned dice.
fn sixes(turned: DieMask) -> String {
    slots([6; 3], turned)
}

/// "1 1" for two turned dice.
fn ones(turned: DieMask) -> String {
    slots([1; 3], turned)
}

/// A hand in the rule book's words.
fn hand_name(hand: Hand) -> String {
    let run = |top: u8| format!("{}-{}-{top}", top - 2, top - 1);
    let dice = |d: [u8; 3]| format!("{}-{}-{}", d[0], d[1], d[2]);
    match hand {
        Hand::SchockOut => "Schock out".to_owned(),
        Hand::Jule => "Jule".to_owned(),
        Hand::Schock(x) => format!("Schock {x}"),
        Hand::General(x) => format!("General {x}"),
        Hand::Straight(top) => format!("Straight {}", run(top)),
        Hand::Number(n) => format!("Number {n}"),
        Hand::Sjok1 => "SJOK1".to_owned(),
        Hand::Sjok(x) => format!("SJOK {x}"),
        Hand::Harde(x) => format!("Harde {x}"),
        Hand::Straat(top) => format!("Straat {}", run(top)),
        Hand::Hoog(sum) => format!("Hoog {sum}"),
        Hand::Kelm => "Kelm".to_owned(),
        Hand::Tinn(d) => format!("Tinn {}", dice(d)),
        Hand::Strasse(top) => format!("Straße {}", run(top)),
        Hand::Plus(d) if hand.is_schlumpf() => format!("Schlumpf {}", dice(d)),
        Hand::Plus(d) => format!("Plus {}", dice(d)),
        Hand::Pasch(d) => format!("Pasch {}", dice(d)),
        Hand::Sonst(d) => format!("Sonst {}", dice(d)),
    }
}

#[cfg(test)]
mod tests;
