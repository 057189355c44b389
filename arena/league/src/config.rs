//! The league file: a TOML document naming the bots, the games with their rules, the table
//! sizes, the repetitions, the time control, the concurrency, the seed and the format.
//! `docs/league.example.toml` is the commented example; `docs/leagues.md` the reference.
//!
//! Reading is strict: an unknown key, game, preset, variant, setting or bot, or a table
//! larger than the field, is an error that names the field and its line.
//!
//! (Somewhat over 500 lines: one reader for one file format, each key's check beside its
//! error; splitting it would scatter the line and field bookkeeping.)

use std::collections::BTreeMap;
use std::ops::Range;

use knobel_engine::{Game, PRESETS, Rules};
use serde::Deserialize;
use toml::Spanned;

pub use super::design::TableDesign;
use super::dice::DiceMode;
use super::settle::{MAX_MARGIN, Margins, Stop};
use knobel_engine::quoted;

/// Tables hold 2 to 8 seats (RULES.md: two players at least; the arena's upper bound).
pub const TABLE_SIZES: std::ops::RangeInclusive<u32> = 2..=8;
/// Duplicate sets per table: 1 to this many.
pub const MAX_REPETITIONS: u32 = 10_000;
/// League matches played at once: 1 to this many.
pub const MAX_CONCURRENCY: u32 = 256;
/// Bots in one league: 2 to this many.
pub const MAX_BOTS: usize = 256;
/// League names: 1 to this many bytes of letters, digits, `-`, `_` and `.`.
pub const MAX_NAME_BYTES: usize = 64;
/// The legal decision deadlines, in milliseconds.
pub const DECISION_MS: std::ops::RangeInclusive<u64> = 1..=600_000;
/// The legal time banks, in milliseconds.
pub const TIME_BANK_MS: std::ops::RangeInclusive<u64> = 0..=3_600_000;

/// How a league pairs its bots.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Format {
    /// Every table of the table size among the bots.
    RoundRobin,
    /// The named bot against the field: every table that holds it.
    Gauntlet {
        /// The bot that plays every match.
        challenger: String,
    },
}

/// The bots of a league: listed, or every bot registered when the league is created.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BotSelection {
    /// These bots, by name.
    Listed(Vec<String>),
    /// Every registered bot that is not revoked.
    All,
}

/// One game of a league: its rules and its table size.
#[derive(Clone, Debug, PartialEq)]
pub struct GamePlan {
    /// The game.
    pub game: Game,
    /// The preset the rules start from.
    pub preset: String,
    /// The rules: the preset with the file's variants and settings.
    pub rules: Rules,
    /// Seats per table.
    pub table_size: u32,
    /// Which tables it plays: the game's `design`, else the league's, else auto.
    pub design: TableDesign,
    /// The equivalence margin of its standings' neighbours (`games.<game>.margin`, else
    /// [`Margins::default_of`]).
    pub margin: f64,
}

/// A league file, read and checked (except its bots against the registry: see
/// [`LeagueConfig::resolve_bots`]).
#[derive(Clone, Debug, PartialEq)]
pub struct LeagueConfig {
    /// The league's name, unique in the arena.
    pub name: String,
    /// The league file's `seed`, if it names one: a reproducible league with public dice
    /// (`None`: a secret from the operating system, the default).
    pub seed: Option<u64>,
    /// Independent dice (the default) or duplicate sets.
    pub dice: DiceMode,
    /// Round robin or gauntlet.
    pub format: Format,
    /// The bots.
    pub bots: BotSelection,
    /// The games, in the order schocken, sjokken, zokken.
    pub games: Vec<GamePlan>,
    /// Duplicate sets per table.
    pub repetitions: u32,
    /// League matches at once.
    pub concurrency: u32,
    /// The decision deadline, milliseconds.
    pub decision_ms: u64,
    /// The time bank per seat and match, milliseconds.
    pub time_bank_ms: u64,
    /// When the league ends: the whole schedule, or when its order is settled.
    pub stop: Stop,
    /// With `stop = "settled"`: the most matches it plays (`None`: its whole schedule).
    pub budget: Option<u32>,
    /// The line of `budget`.
    budget_line: usize,
    /// Where each bot name stands in the file (for errors found when the bots are resolved).
    bot_lines: BTreeMap<String, usize>,
    /// The line of `bots`, and of the table sizes, for the same purpose.
    bots_line: usize,
    table_lines: Vec<usize>,
}

/// A league file that cannot be used.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum LeagueConfigError {
    /// Not TOML, or not the shape of a league file (an unknown key, a wrong type).
    #[error("line {line}: {message}")]
    Syntax {
        /// The line (1-based) the problem is on.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// A field whose value is not legal.
    #[error("line {line}: {field}: {message}")]
    Field {
        /// The field, as a TOML path (`games.zokken.preset`).
        field: String,
        /// The line (1-based) of its value.
        line: usize,
        /// What is wrong and what would be legal.
        message: String,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLeague {
    name: Spanned<String>,
    seed: Option<Spanned<toml::Value>>,
    dice: Option<Spanned<String>>,
    format: Option<Spanned<String>>,
    challenger: Option<Spanned<String>>,
    design: Option<Spanned<String>>,
    bots: Spanned<toml::Value>,
    repetitions: Option<Spanned<u32>>,
    concurrency: Option<Spanned<u32>>,
    stop: Option<Spanned<String>>,
    budget: Option<Spanned<i64>>,
    time: Option<RawTime>,
    games: Spanned<BTreeMap<Spanned<String>, RawGame>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTime {
    decision_ms: Option<Spanned<u64>>,
    time_bank_ms: Option<Spanned<u64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGame {
    preset: Option<Spanned<String>>,
    #[serde(default)]
    variants: Vec<Spanned<String>>,
    #[serde(default)]
    settings: BTreeMap<Spanned<String>, Spanned<u32>>,
    table_size: Option<Spanned<u32>>,
    design: Option<Spanned<String>>,
    margin: Option<Spanned<toml::Value>>,
}

/// At most [`MAX_MESSAGE_CHARS`] characters of a parser's message, then "..." and its length.
fn bounded_message(message: &str) -> String {
    match message.char_indices().nth(MAX_MESSAGE_CHARS) {
        None => message.to_owned(),
        Some((at, _)) => format!("{}... ({} bytes)", &message[..at], message.len()),
    }
}

/// The most characters of a TOML parser's message an error repeats.
const MAX_MESSAGE_CHARS: usize = 160;

/// The 1-based line of byte offset `at` in `text`.
fn line_of(text: &str, at: usize) -> usize {
    text.as_bytes()[..at.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

struct Reader<'a> {
    text: &'a str,
}

impl Reader<'_> {
    fn line(&self, span: Range<usize>) -> usize {
        line_of(self.text, span.start)
    }

    fn field(
        &self,
        field: impl Into<String>,
        span: Range<usize>,
        message: impl Into<String>,
    ) -> LeagueConfigError {
        LeagueConfigError::Field {
            field: field.into(),
            line: self.line(span),
            message: message.into(),
        }
    }

    fn in_range<T: PartialOrd + Copy + std::fmt::Display>(
        &self,
        field: &str,
        value: &Spanned<T>,
        range: std::ops::RangeInclusive<T>,
    ) -> Result<T, LeagueConfigError> {
        let v = *value.get_ref();
        if range.contains(&v) {
            Ok(v)
        } else {
            Err(self.field(
                field,
                value.span(),
                format!(
                    "{v} is out of range: legal are {}..={}",
                    range.start(),
                    range.end()
                ),
            ))
        }
    }

    /// A league file's `seed`: a number 0..=2^63-1 (TOML integers are signed 64-bit).
    fn seed(&self, value: &Spanned<toml::Value>) -> Result<u64, LeagueConfigError> {
        match value.get_ref() {
            toml::Value::Integer(n) if *n >= 0 => Ok(*n as u64),
            other => Err(self.field(
                "seed",
                value.span(),
                format!(
                    "{} is not a seed: a seed is a whole number 0..={} (leave it out for secret \
                     dice, the default)",
                    match other {
                        toml::Value::String(s) => quoted(s),
                        toml::Value::Integer(n) => n.to_string(),
                        v => format!("a {}", v.type_str()),
                    },
                    i64::MAX
                ),
            )),
        }
    }

    /// An equivalence margin: a number, 0 up to [`MAX_MARGIN`].
    fn margin(&self, field: &str, value: &Spanned<toml::Value>) -> Result<f64, LeagueConfigError> {
        let m = match value.get_ref() {
            toml::Value::Float(f) => Some(*f),
            toml::Value::Integer(n) => Some(*n as f64),
            _ => None,
        };
        match m {
            Some(m) if (0.0..=MAX_MARGIN).contains(&m) => Ok(m),
            _ => Err(self.field(
                field,
                value.span(),
                format!(
                    "{} is not a margin: a margin is a number 0..={MAX_MARGIN} on the game's \
                     score (a loss-rate difference such as 0.02, or chips per 100 rounds)",
                    match value.get_ref() {
                        toml::Value::String(s) => quoted(s),
                        toml::Value::Integer(n) => n.to_string(),
                        toml::Value::Float(f) => f.to_string(),
                        v => format!("a {}", v.type_str()),
                    }
                ),
            )),
        }
    }

    /// `stop` and `budget`: a budget only with `stop = "settled"`, a whole number of
    /// matches 1..=[`super::MAX_MATCHES`] (its floor of one set is checked against the
    /// schedule when the league is created).
    fn stop(
        &self,
        raw: &RawLeague,
        set_size: u32,
    ) -> Result<(Stop, Option<(u32, usize)>), LeagueConfigError> {
        let stop = match &raw.stop {
            Some(s) => s
                .get_ref()
                .parse()
                .map_err(|m: String| self.field("stop", s.span(), m))?,
            None => Stop::Fixed,
        };
        let Some(budget) = &raw.budget else {
            return Ok((stop, None));
        };
        if stop != Stop::Settled {
            return Err(self.field(
                "budget",
                budget.span(),
                "a budget is only for stop = \"settled\": a fixed league plays its whole schedule",
            ));
        }
        let max = super::MAX_MATCHES as i64;
        match *budget.get_ref() {
            b if b < i64::from(set_size) => Err(self.field(
                "budget",
                budget.span(),
                format!(
                    "a budget of {b} matches is below one set: a table's seat orders are \
                     {set_size} matches, played complete; legal are {set_size}..={max}"
                ),
            )),
            b if b <= max => Ok((stop, Some((b as u32, self.line(budget.span()))))),
            b => Err(self.field(
                "budget",
                budget.span(),
                format!("{b} is not a budget: legal are {set_size}..={max} matches"),
            )),
        }
    }

    fn design(
        &self,
        field: &str,
        value: Option<&Spanned<String>>,
        default: TableDesign,
    ) -> Result<TableDesign, LeagueConfigError> {
        value.map_or(Ok(default), |d| {
            d.get_ref()
                .parse()
                .map_err(|m: String| self.field(field, d.span(), m))
        })
    }

    /// `[time]`: the decision deadline and the time bank, in milliseconds (2 s and 10 s
    /// when left out).
    fn time(&self, time: Option<&RawTime>) -> Result<(u64, u64), LeagueConfigError> {
        let (mut decision_ms, mut time_bank_ms) = (2_000, 10_000);
        if let Some(time) = time {
            if let Some(v) = &time.decision_ms {
                decision_ms = self.in_range("time.decision_ms", v, DECISION_MS)?;
            }
            if let Some(v) = &time.time_bank_ms {
                time_bank_ms = self.in_range("time.time_bank_ms", v, TIME_BANK_MS)?;
            }
        }
        Ok((decision_ms, time_bank_ms))
    }

    /// `bots`: "all" or a list of distinct names (at most [`MAX_BOTS`]); each listed name's
    /// line goes into `bot_lines`.
    fn bots(
        &self,
        bots: &Spanned<toml::Value>,
        bot_lines: &mut BTreeMap<String, usize>,
    ) -> Result<BotSelection, LeagueConfigError> {
        let bots_span = bots.span();
        match bots.get_ref() {
            toml::Value::String(word) if word == "all" => Ok(BotSelection::All),
            toml::Value::Array(items) => self.listed_bots(items, bots_span, bot_lines),
            other => Err(self.field(
                "bots",
                bots_span,
                format!(
                    "{} is neither a list of bot names nor \"all\"",
                    match other {
                        toml::Value::String(s) => quoted(s),
                        v => format!("a {}", v.type_str()),
                    }
                ),
            )),
        }
    }

    /// The names of a `bots = [...]` list at `bots_span`, each with its line.
    fn listed_bots(
        &self,
        items: &[toml::Value],
        bots_span: Range<usize>,
        bot_lines: &mut BTreeMap<String, usize>,
    ) -> Result<BotSelection, LeagueConfigError> {
        let mut listed = Vec::with_capacity(items.len());
        // Each name's line: where its quoted form first stands in the list.
        let list_text = &self.text[bots_span.clone()];
        let mut from = 0;
        for item in items {
            let Some(n) = item.as_str() else {
                return Err(self.field(
                    "bots",
                    bots_span.clone(),
                    format!(
                        "a {} is not a bot name: list names as strings",
                        item.type_str()
                    ),
                ));
            };
            let at = list_text[from..].find(n).map_or(bots_span.start, |i| {
                from += i + n.len();
                bots_span.start + from - n.len()
            });
            if bot_lines
                .insert(n.to_owned(), line_of(self.text, at))
                .is_some()
            {
                return Err(self.field(
                    "bots",
                    at..at,
                    format!("bot {} is listed twice", quoted(n)),
                ));
            }
            listed.push(n.to_owned());
        }
        if listed.len() > MAX_BOTS {
            return Err(self.field(
                "bots",
                bots_span,
                format!(
                    "{} bots are listed: a league has at most {MAX_BOTS}",
                    listed.len()
                ),
            ));
        }
        Ok(BotSelection::Listed(listed))
    }

    /// `format` and `challenger`: a challenger only (and always) for a gauntlet; its line
    /// goes into `bot_lines` unless the list named it.
    fn format(
        &self,
        raw: &RawLeague,
        bot_lines: &mut BTreeMap<String, usize>,
    ) -> Result<Format, LeagueConfigError> {
        match raw
            .format
            .as_ref()
            .map(|f| (f.get_ref().as_str(), f.span()))
        {
            None | Some(("round-robin", _)) => {
                if let Some(c) = &raw.challenger {
                    return Err(self.field(
                        "challenger",
                        c.span(),
                        "a challenger is only for format = \"gauntlet\"",
                    ));
                }
                Ok(Format::RoundRobin)
            }
            Some(("gauntlet", span)) => match &raw.challenger {
                Some(c) => {
                    let challenger = c.get_ref().clone();
                    bot_lines
                        .entry(challenger.clone())
                        .or_insert(self.line(c.span()));
                    Ok(Format::Gauntlet { challenger })
                }
                None => Err(self.field(
                    "format",
                    span,
                    "a gauntlet needs `challenger = \"<bot name>\"`: the bot that plays the field",
                )),
            },
            Some((other, span)) => Err(self.field(
                "format",
                span,
                format!(
                    "unknown format {}: formats are \"round-robin\" and \"gauntlet\"",
                    quoted(other)
                ),
            )),
        }
    }

    /// `[games.*]`: at least one, each read by [`Reader::game`], in a fixed order whatever
    /// the file's (schocken, sjokken, zokken), with the line of each one's table size.
    fn games(
        &self,
        games: &Spanned<BTreeMap<Spanned<String>, RawGame>>,
        design: TableDesign,
    ) -> Result<(Vec<GamePlan>, Vec<usize>), LeagueConfigError> {
        if games.get_ref().is_empty() {
            return Err(self.field(
                "games",
                games.span(),
                "a league plays at least one game: add [games.schocken], [games.sjokken] or [games.zokken]",
            ));
        }
        let mut plans = Vec::new();
        let mut table_lines = Vec::new();
        for (key, game) in games.get_ref() {
            let (plan, table_line) = self.game(key, game, design)?;
            plans.push(plan);
            table_lines.push(table_line);
        }
        // A fixed order, whatever the file's: schocken, sjokken, zokken.
        let mut order: Vec<usize> = (0..plans.len()).collect();
        order.sort_by_key(|&i| plans[i].game as u8);
        let plans: Vec<GamePlan> = order.iter().map(|&i| plans[i].clone()).collect();
        let table_lines = order.iter().map(|&i| table_lines[i]).collect();
        Ok((plans, table_lines))
    }

    /// One `[games.<name>]` table: its preset, variants, settings, table size, design and
    /// margin, and the line of its table size (the table's own line when left out).
    fn game(
        &self,
        key: &Spanned<String>,
        game: &RawGame,
        design: TableDesign,
    ) -> Result<(GamePlan, usize), LeagueConfigError> {
        let gname = key.get_ref().as_str();
        let g: Game = gname.parse().map_err(|e: knobel_engine::RulesError| {
            self.field("games", key.span(), e.to_string())
        })?;
        let path = format!("games.{gname}");
        let (preset, rules) = self.rules(&path, key, game, g)?;
        let (table_size, table_line) = match &game.table_size {
            Some(t) => (
                self.in_range(&format!("{path}.table_size"), t, TABLE_SIZES)?,
                self.line(t.span()),
            ),
            None => (default_table_size(g), self.line(key.span())),
        };
        let plan = GamePlan {
            game: g,
            preset,
            rules,
            table_size,
            design: self.design(&format!("{path}.design"), game.design.as_ref(), design)?,
            margin: match &game.margin {
                Some(m) => self.margin(&format!("{path}.margin"), m)?,
                None => Margins::default_of(g),
            },
        };
        Ok((plan, table_line))
    }

    /// A game's preset (the game's own when left out) of game `g`, with its variants and
    /// settings set: the preset's name and the rules.
    fn rules(
        &self,
        path: &str,
        key: &Spanned<String>,
        game: &RawGame,
        g: Game,
    ) -> Result<(String, Rules), LeagueConfigError> {
        let gname = key.get_ref().as_str();
        let (preset, preset_span) = match &game.preset {
            Some(p) => (p.get_ref().clone(), p.span()),
            None => (gname.to_owned(), key.span()),
        };
        let mut rules = Rules::preset(&preset).map_err(|_| {
            self.field(
                format!("{path}.preset"),
                preset_span.clone(),
                format!(
                    "unknown preset {}: presets are {}",
                    quoted(&preset),
                    PRESETS.join(", ")
                ),
            )
        })?;
        if rules.game() != g {
            return Err(self.field(
                format!("{path}.preset"),
                preset_span,
                format!(
                    "preset {preset:?} is a {} preset, not {gname}",
                    rules.game().name()
                ),
            ));
        }
        for variant in &game.variants {
            rules.set_variant(variant.get_ref(), true).map_err(|e| {
                self.field(format!("{path}.variants"), variant.span(), e.to_string())
            })?;
        }
        for (setting, value) in &game.settings {
            rules
                .set_number(setting.get_ref(), *value.get_ref())
                .map_err(|e| {
                    self.field(
                        format!("{path}.settings.{}", setting.get_ref()),
                        value.span(),
                        e.to_string(),
                    )
                })?;
        }
        Ok((preset, rules))
    }
}

/// Whether `name` is a legal league name.
pub fn check_league_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > MAX_NAME_BYTES {
        return Err(format!(
            "a league name has 1..={MAX_NAME_BYTES} bytes: {} has {}",
            quoted(name),
            name.len()
        ));
    }
    match name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
    {
        Some(c) => Err(format!(
            "a league name has only ASCII letters, digits, '-', '_' and '.': {} has {c:?}",
            quoted(name)
        )),
        None => Ok(()),
    }
}

/// The default table size of `game`: 4 for Schocken and Sjokken, 2 for Zokken.
pub fn default_table_size(game: Game) -> u32 {
    match game {
        Game::Schocken | Game::Sjokken => 4,
        Game::Zokken => 2,
    }
}

impl LeagueConfig {
    /// Reads a league file.
    pub fn from_toml(text: &str) -> Result<LeagueConfig, LeagueConfigError> {
        let raw: RawLeague = toml::from_str(text).map_err(|e| LeagueConfigError::Syntax {
            line: e.span().map_or(1, |span| line_of(text, span.start)),
            // The parser's message may quote the file (an unknown key): a bounded prefix.
            message: bounded_message(e.message().trim()),
        })?;
        let r = Reader { text };
        let name = raw.name.get_ref().clone();
        check_league_name(&name).map_err(|m| r.field("name", raw.name.span(), m))?;
        let seed = raw.seed.as_ref().map(|s| r.seed(s)).transpose()?;
        let dice = match &raw.dice {
            Some(d) => d
                .get_ref()
                .parse()
                .map_err(|m: String| r.field("dice", d.span(), m))?,
            None => DiceMode::Independent,
        };
        let repetitions = match &raw.repetitions {
            Some(v) => r.in_range("repetitions", v, 1..=MAX_REPETITIONS)?,
            None => 1,
        };
        let concurrency = match &raw.concurrency {
            Some(v) => r.in_range("concurrency", v, 1..=MAX_CONCURRENCY)?,
            None => 4,
        };
        let (decision_ms, time_bank_ms) = r.time(raw.time.as_ref())?;
        let design = r.design("design", raw.design.as_ref(), TableDesign::Auto)?;
        let bots_line = r.line(raw.bots.span());
        let mut bot_lines = BTreeMap::new();
        let bots = r.bots(&raw.bots, &mut bot_lines)?;
        let format = r.format(&raw, &mut bot_lines)?;
        let (games, table_lines) = r.games(&raw.games, design)?;
        let set_size = games
            .iter()
            .map(|g: &GamePlan| super::schedule::seat_orders(g.table_size as usize).len() as u32)
            .max()
            .unwrap_or(1);
        let (stop, budget) = r.stop(&raw, set_size)?;
        Ok(LeagueConfig {
            name,
            seed,
            dice,
            format,
            bots,
            games,
            repetitions,
            concurrency,
            decision_ms,
            time_bank_ms,
            stop,
            budget: budget.map(|(b, _)| b),
            budget_line: budget.map_or(0, |(_, line)| line),
            bot_lines,
            bots_line,
            table_lines,
        })
    }

    /// Checks the budget against the `scheduled` matches of the league: it may not exceed
    /// them (raise `repetitions` for a larger one).
    pub fn check_budget(&self, scheduled: u128) -> Result<(), LeagueConfigError> {
        match self.budget {
            Some(b) if u128::from(b) > scheduled => Err(LeagueConfigError::Field {
                field: "budget".into(),
                line: self.budget_line,
                message: format!(
                    "a budget of {b} matches exceeds the schedule's {scheduled}: legal are at \
                     most {scheduled} (raise `repetitions` for more)"
                ),
            }),
            _ => Ok(()),
        }
    }

    /// The equivalence margins of the league's games (defaults for the others).
    pub fn margins(&self) -> Margins {
        let mut margins = Margins::default();
        for plan in &self.games {
            margins.set(plan.game, plan.margin);
        }
        margins
    }

    /// The league's bots, in the order given (for `bots = "all"`: `registered`, in order),
    /// checked against `registered` (the names of the bots that may play: registered and not
    /// revoked), and against every table size.
    pub fn resolve_bots(&self, registered: &[String]) -> Result<Vec<String>, LeagueConfigError> {
        let bots: Vec<String> = match &self.bots {
            BotSelection::All if registered.len() > MAX_BOTS => {
                return Err(LeagueConfigError::Field {
                    field: "bots".into(),
                    line: self.bots_line,
                    message: format!(
                        "bots = \"all\" names the {} registered bots: a league has at most \
                         {MAX_BOTS} (list the bots, or revoke those that do not play)",
                        registered.len()
                    ),
                });
            }
            BotSelection::All => registered.to_vec(),
            BotSelection::Listed(listed) => {
                for name in listed {
                    if !registered.contains(name) {
                        return Err(LeagueConfigError::Field {
                            field: "bots".into(),
                            line: self.bot_lines.get(name).copied().unwrap_or(self.bots_line),
                            message: format!(
                                "unknown bot {}: no registered bot of that name (see `knobel bot list`)",
                                quoted(name)
                            ),
                        });
                    }
                }
                listed.clone()
            }
        };
        if let Format::Gauntlet { challenger } = &self.format
            && !bots.contains(challenger)
        {
            return Err(LeagueConfigError::Field {
                field: "challenger".into(),
                line: self
                    .bot_lines
                    .get(challenger)
                    .copied()
                    .unwrap_or(self.bots_line),
                message: format!(
                    "the challenger {} is not one of the league's bots",
                    quoted(challenger)
                ),
            });
        }
        if bots.len() < 2 {
            return Err(LeagueConfigError::Field {
                field: "bots".into(),
                line: self.bots_line,
                message: format!("a league needs at least 2 bots: it has {}", bots.len()),
            });
        }
        for (plan, &line) in self.games.iter().zip(&self.table_lines) {
            if plan.table_size as usize > bots.len() {
                return Err(LeagueConfigError::Field {
                    field: format!("games.{}.table_size", plan.game.name()),
                    line,
                    message: format!(
                        "a table of {} seats is larger than the league's {} bots",
                        plan.table_size,
                        bots.len()
                    ),
                });
            }
        }
        Ok(bots)
    }
}
