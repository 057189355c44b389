//! A readable, throw-by-throw account of a finished match (`knobel match show ID`): the
//! match log replayed with the engine and written out in plain text for a terminal, in the
//! rule book's words (docs/rules.md). It shows everything the log holds, hidden dice
//! included, so it is for humans after the match, never a player's view of a running one.
//!
//! The game-specific events are written by [`shake`] (Schocken and Sjokken) and [`zokken`].

mod shake;
mod table;
mod zokken;

use std::fmt::Write as _;

use knobel_engine::{
    DieMask, Event, ForfeitReason, Game, Hand, LogEntry, MAX_SEATS, Match, MatchLog, Outcome,
    PRESETS, ReplayError, Rules, Seat, Seats,
};
use thiserror::Error;

pub use table::{DieView, Lie, SeatStatus, SeatView, Sight, TableView, ViewError};
use table::{TableState, Viewer};

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
    /// An event of a public record names a seat the match does not have.
    #[error("an event names seat {seat}, but the match has {seats} seats")]
    Seat {
        /// The seat named.
        seat: u8,
        /// Seats in the match.
        seats: u8,
    },
    /// A seat's view was asked of a log it does not replay.
    #[error(transparent)]
    View(#[from] ViewError),
}

pub use knobel_engine::PublicRecord;

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
    let mut account = Account::new(&log.rules, log.seats, seat_names, Sight::Full);
    account.header(log);
    for entry in &log.entries {
        account.full_entry(entry);
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
    /// The table right after the line, as the view asked for shows it.
    pub table: TableView,
}

/// The dice of a [`Step`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StepDice {
    /// Whose dice.
    pub seat: Seat,
    /// All three as the view sees them (the full view: the truth, hidden dice included;
    /// a public view: `None` for a die under the cup).
    pub dice: [Option<u8>; 3],
    /// A throw (of a round or of the opening throw-off), rather than a reveal.
    pub throw: bool,
}

/// The account of an ended match `log` as steps, one per line of [`describe`]'s account of
/// its entries (without the header and the final placings), each throw and revealed hand
/// with its dice, and the table after it as `sight` sees it: everything ([`Sight::Full`]),
/// the public events only ([`Sight::Public`], the same as [`public_steps`] of the log's
/// [`PublicRecord`]) or what one seat saw ([`Sight::Seat`]: the public events and its own
/// observations, the match replayed). The log is replayed and verified first; an aborted
/// match's log, which ends early, is accepted.
pub fn steps(
    log: &MatchLog,
    seat_names: &[String],
    sight: Sight,
) -> Result<Vec<Step>, MatchTextError> {
    if sight == Sight::Public {
        return public_steps(&log.public_record(), seat_names);
    }
    check_names(log.seats, seat_names)?;
    log.replay()?;
    match sight {
        Sight::Seat(seat) => {
            check_seat(seat, log.seats)?;
            let game = Match::new(log.rules.clone(), log.seed, log.seats as usize)
                .map_err(ReplayError::from)?;
            seat_steps(log, seat_names, seat, game)
        }
        _ => Ok(full_steps(log, seat_names)),
    }
}

/// The steps of the full view of `log` (not verified: [`steps`] replays it first).
fn full_steps(log: &MatchLog, seat_names: &[String]) -> Vec<Step> {
    let mut account = Account::new(&log.rules, log.seats, seat_names, Sight::Full);
    for entry in &log.entries {
        account.full_entry(entry);
    }
    account.flush();
    account.steps
}

/// The steps of `seat`'s view of `log`, its decisions replayed on `game` (a new match of
/// the log's rules, seed and seats, or a scripted one).
fn seat_steps(
    log: &MatchLog,
    seat_names: &[String],
    seat: Seat,
    game: Match,
) -> Result<Vec<Step>, MatchTextError> {
    let mut account = Account::new(&log.rules, log.seats, seat_names, Sight::Seat(seat));
    account.viewer = Some(Viewer::new(seat, game));
    for entry in &log.entries {
        account.entry(entry)?;
    }
    account.flush();
    Ok(account.steps)
}

/// The steps of a match's public record: the lines and tables of its public events alone,
/// hidden dice hidden. Every seat an event names is checked against the record's seats.
pub fn public_steps(
    record: &PublicRecord,
    seat_names: &[String],
) -> Result<Vec<Step>, MatchTextError> {
    check_names(record.seats, seat_names)?;
    for event in &record.events {
        for seat in table::seats_named(event) {
            check_seat(seat, record.seats)?;
        }
    }
    let mut account = Account::new(&record.rules, record.seats, seat_names, Sight::Public);
    for event in &record.events {
        account.event(event);
    }
    account.flush();
    Ok(account.steps)
}

fn check_names(seats: u8, seat_names: &[String]) -> Result<(), MatchTextError> {
    if seat_names.len() != seats as usize {
        return Err(MatchTextError::SeatNames {
            seats: seats as usize,
            names: seat_names.len(),
        });
    }
    Ok(())
}

fn check_seat(seat: Seat, seats: u8) -> Result<(), MatchTextError> {
    if seat.0 >= seats || seat.index() >= MAX_SEATS {
        return Err(MatchTextError::Seat {
            seat: seat.0,
            seats,
        });
    }
    Ok(())
}

/// The text being written and what it needs to remember between entries.
struct Account<'a> {
    out: String,
    names: &'a [String],
    rules: &'a Rules,
    seats: u8,
    /// What the account may show: the full view writes the log's throws, the others only
    /// public events.
    sight: Sight,
    /// Each seat's dice as the account knows them now (the full view: the truth, hidden
    /// dice included; otherwise `None` for a die under the cup).
    dice: [[Option<u8>; 3]; MAX_SEATS],
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
    /// The table, folded from the public events.
    table: TableState,
    /// A seat's view: its observations.
    viewer: Option<Viewer>,
}

impl<'a> Account<'a> {
    fn new(rules: &'a Rules, seats: u8, names: &'a [String], sight: Sight) -> Account<'a> {
        Account {
            out: String::new(),
            names,
            rules,
            seats,
            sight,
            dice: [[None; 3]; MAX_SEATS],
            turned: [DieMask::EMPTY; MAX_SEATS],
            throw: None,
            hands: [None; MAX_SEATS],
            attempt: 0,
            strikes: [0; MAX_SEATS],
            shake: shake::Table::new(rules),
            zokken: zokken::Table::default(),
            steps: Vec::new(),
            dice_of_line: None,
            table: TableState::default(),
            viewer: None,
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
        let table = self.table_view();
        self.steps.push(Step {
            text: text.trim().to_owned(),
            heading: text.starts_with('\n'),
            dice: self.dice_of_line.take(),
            table,
        });
    }

    /// The table now, as the account's sight shows it.
    fn table_view(&self) -> TableView {
        let zokken = self.rules.game() == Game::Zokken;
        let (pot, half) = if zokken {
            (i64::from(self.zokken.pot()), 0)
        } else {
            (i64::from(self.shake.pot()), self.shake.half())
        };
        let score = |i: usize| {
            if zokken {
                self.zokken.net(i)
            } else {
                i64::from(self.shake.held(i))
            }
        };
        let own = self
            .viewer
            .as_ref()
            .and_then(|v| v.own_dice(self.table.round()));
        self.table
            .view(self.sight, self.seats as usize, (pot, half, &score), own)
    }

    /// The next line shows `dice` of `seat`.
    fn with_dice(&mut self, seat: Seat, dice: [Option<u8>; 3], throw: bool) {
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

    /// Takes in a log entry: the full view writes everything; a seat's view replays the
    /// decisions and penalties for its observations and writes the public events only.
    fn entry(&mut self, entry: &LogEntry) -> Result<(), ViewError> {
        if let Some(viewer) = &mut self.viewer {
            match entry {
                LogEntry::Event { event } => self.event(event),
                other => viewer.replay(other)?,
            }
            return Ok(());
        }
        self.full_entry(entry);
        Ok(())
    }

    fn full_entry(&mut self, entry: &LogEntry) {
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
        if !matches!(event, Event::Ante { .. }) {
            // The antes' line comes before the table takes in the next event.
            self.flush();
        }
        let truth = match (*event, self.throw) {
            (Event::Thrown { seat, .. }, Some((thrower, _, dice))) if seat == thrower => Some(dice),
            _ => None,
        };
        self.table.apply(event, truth);
        if let Some(viewer) = &mut self.viewer {
            viewer.saw(event);
        }
        self.describe(event);
    }

    /// The lines of `event`, after the table has taken it in.
    fn describe(&mut self, event: &Event) {
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
                seat,
                throw,
                rolled,
                dice,
            } => self.thrown(seat, throw, rolled, dice),
            Event::Turned { seat, dice } => self.dice_turned(seat, dice),
            // The throw that follows says which dice were thrown again.
            Event::Rerolled { .. } | Event::RerollChosen { .. } => {}
            Event::Stopped { seat, throws } => self.stopped(seat, throws),
            Event::ThrowLimitSet { throws } => {
                self.line(format!("  throw limit for this round: {throws}"));
            }
            Event::Revealed { seat, dice, hand } => self.revealed(seat, dice, hand),
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
            Event::Forfeited { seat, reason } => self.forfeited(seat, reason),
        }
    }

    /// `seat` turned `dice` over: they now show ones.
    fn dice_turned(&mut self, seat: Seat, dice: DieMask) {
        self.turned[seat.index()] = dice;
        for slot in dice.slots() {
            self.dice[seat.index()][slot] = Some(1);
        }
    }

    /// `seat` showed `dice`: its `hand`.
    fn revealed(&mut self, seat: Seat, dice: [u8; 3], hand: Hand) {
        self.hands[seat.index()] = Some(hand);
        let name = self.name(seat);
        self.with_dice(seat, dice.map(Some), false);
        self.line(format!(
            "  {name} shows {}: {}",
            faces(dice.map(Some)),
            hand_name(hand)
        ));
    }

    /// `seat` forfeited for `reason`.
    fn forfeited(&mut self, seat: Seat, reason: ForfeitReason) {
        let name = self.name(seat);
        self.line(format!(
            "  referee: {name} forfeits ({}) and is played by default actions from now on",
            reason.name().replace('_', " ")
        ));
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
        self.with_dice(seat, dice.map(Some), true);
        self.line(format!("  {name} throws {}", faces(dice.map(Some))));
    }

    /// A throw, from its log entry (the true dice: the full view) or its public event
    /// alone (`public`, `None` for a die under the cup: the other views; the event also
    /// tells a blind throw). `fresh` marks a first throw, which rolls all three dice.
    fn thrown(&mut self, seat: Seat, throw: u8, rolled: DieMask, public: [Option<u8>; 3]) {
        let truth = self.throw.take().filter(|&(s, ..)| s == seat);
        let (rolled, dice) = match truth {
            Some((_, rolled, dice)) => (rolled, dice.map(Some)),
            None if self.sight == Sight::Full => return,
            None => (rolled, public),
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
            if !rolled.is_empty() && self.sight != Sight::Full {
                let n = rolled.slots().count();
                parts.push(format!("rerolls {n} di{}", if n == 1 { "e" } else { "ce" }));
            } else if !rolled.is_empty() {
                parts.push(format!(
                    "rerolls {} → {}",
                    slots(before, rolled),
                    slots(dice, rolled)
                ));
            }
            write!(text, " ({})", parts.join("; ")).expect("writing to a String");
        }
        let hidden = rolled.slots().any(|slot| public[slot].is_none());
        if hidden && self.rules.game() == Game::Sjokken {
            text.push_str(", blind: under the cup until the reveal");
        } else if hidden && self.sight != Sight::Full {
            text.push_str(", under the cup");
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

/// Dice as "6 6 1"; a die not known to the view is "?".
fn faces(dice: [Option<u8>; 3]) -> String {
    slots(dice, DieMask::ALL)
}

/// The dice of `mask`, in slot order.
fn slots(dice: [Option<u8>; 3], mask: DieMask) -> String {
    let faces: Vec<String> = mask
        .slots()
        .map(|slot| dice[slot].map_or_else(|| "?".to_owned(), |face| face.to_string()))
        .collect();
    faces.join(" ")
}

/// "6 6" for two turned dice.
fn sixes(turned: DieMask) -> String {
    slots([Some(6); 3], turned)
}

/// "1 1" for two turned dice.
fn ones(turned: DieMask) -> String {
    slots([Some(1); 3], turned)
}

/// A hand in the rule book's words ("Schock 4", "Straight 4-5-6").
pub fn hand_name(hand: Hand) -> String {
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
mod table_tests;
#[cfg(test)]
mod tests;
