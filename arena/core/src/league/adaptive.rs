//! The scheduler's side of a `stop = "settled"` league ([`super::settle`] has the rules):
//! which open matches to play next, and when the league is over.
//!
//! After matches finish (at most every [`MIN_REFRESH`], or ten times what the last reading
//! took) the league's results are read, its standings computed and the open matches ordered
//! by [`Plan::priority`]: the rest of every begun set first (a table's seat orders are
//! played complete), then sets that seat a bot with no results yet, then sets that seat
//! open neighbours (the most pairs first), in schedule order, the league's games taking
//! turns (each game's first such set, then each game's second, ...: a table of four seats
//! more pairs than one of two, and would otherwise always come first). A new set
//! starts only if every begun set's remaining matches and the new set's fit in the budget.
//! The league is over when its order is settled (or no new set fits the budget, or none is
//! left), nothing of it plays here and no begun set has a match left.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use knobel_engine::Game;

use super::settle::{Margins, Plan};
use super::{LeagueConfig, PlayedMatch, standings_with};
use crate::store::{OpenLeagueMatch, Store, StoreError};

/// The least time between two readings of a settled league's results.
pub const MIN_REFRESH: Duration = Duration::from_millis(200);

/// Why a settled league ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    /// Every two neighbours of every game are separated or equivalent.
    Settled,
    /// No further set fits the budget.
    Budget,
    /// Every set that could decide anything was played.
    Schedule,
}

impl Ended {
    /// How the log and the CLI say it.
    pub fn name(self) -> &'static str {
        match self {
            Ended::Settled => "settled",
            Ended::Budget => "budget",
            Ended::Schedule => "schedule",
        }
    }
}

/// A settled league as the scheduler plays it.
#[derive(Debug)]
pub struct Adaptive {
    games: Vec<Game>,
    margins: Margins,
    budget: u64,
    plan: Plan,
    /// The open matches worth playing, in the order to play them, as of the last reading
    /// (those started since are no longer in `unstarted`).
    queue: Vec<OpenLeagueMatch>,
    /// Ordinals of the queue's matches not started since the last reading.
    unstarted: HashSet<u32>,
    /// Per set: how many of the queue's matches are left (not started).
    left_in_set: HashMap<u32, u64>,
    /// Sets with a match finished or started.
    begun: HashSet<u32>,
    /// Matches finished, playing, or left in begun sets: what the budget has given out.
    committed: u64,
    /// The finished count the last reading saw, when it was made and how long it took.
    seen_finished: Option<u64>,
    at: Instant,
    took: Duration,
}

/// What a settled league is played with: what its league file's `stop = "settled"` sets.
#[derive(Clone, Debug, PartialEq)]
pub struct SettledOptions {
    /// The league's games.
    pub games: Vec<Game>,
    /// The equivalence margins of its standings.
    pub margins: Margins,
    /// The most matches it plays (`None`: its whole schedule).
    pub budget: Option<u64>,
}

impl SettledOptions {
    /// The options of league file `config`.
    pub fn of(config: &LeagueConfig) -> SettledOptions {
        SettledOptions {
            games: config.games.iter().map(|g| g.game).collect(),
            margins: config.margins(),
            budget: config.budget.map(u64::from),
        }
    }
}

impl Adaptive {
    /// The adaptive play of a league with file `config` (which says `stop = "settled"`).
    pub fn new(config: &LeagueConfig) -> Adaptive {
        Adaptive::with(&SettledOptions::of(config))
    }

    /// The adaptive play of a league with `options`.
    pub fn with(options: &SettledOptions) -> Adaptive {
        Adaptive {
            games: options.games.clone(),
            margins: options.margins,
            budget: options.budget.unwrap_or(u64::MAX),
            plan: Plan::default(),
            queue: Vec::new(),
            unstarted: HashSet::new(),
            left_in_set: HashMap::new(),
            begun: HashSet::new(),
            committed: 0,
            seen_finished: None,
            at: Instant::now(),
            took: Duration::ZERO,
        }
    }

    /// Whether the results should be read again: more have finished since the last reading,
    /// and it is old enough.
    pub fn due(&self, finished: u64) -> bool {
        self.seen_finished != Some(finished)
            && (self.seen_finished.is_none()
                || self.at.elapsed() >= MIN_REFRESH.max(self.took * 10))
    }

    /// Reads league `league_id`'s results and open matches again, with `finished` of its
    /// matches finished (as the league's record says) and `playing` in play (in any arena).
    pub async fn refresh(
        &mut self,
        store: &Store,
        league_id: i64,
        finished: u64,
        playing: usize,
    ) -> Result<(), StoreError> {
        let start = Instant::now();
        let results = store.league_results(league_id).await?;
        let open = store
            .open_league_matches(league_id, super::MAX_MATCHES as u32)
            .await?;
        let (games, margins) = (self.games.clone(), self.margins);
        let (plan, results) =
            tokio::task::spawn_blocking(move || (plan_of(&results, &games, &margins), results))
                .await
                .map_err(|e| StoreError::Corrupt {
                    what: format!("computing a settled league's standings: {e}"),
                })?;
        self.read(plan, &results, open, playing, finished);
        self.took = start.elapsed();
        Ok(())
    }

    /// The plan of this league with `results`.
    pub fn plan(&self, results: &[PlayedMatch]) -> Plan {
        plan_of(results, &self.games, &self.margins)
    }

    /// Takes a reading: `plan`, made from the standings of the league's `results`, its
    /// `open` matches (in schedule order), `playing` in play (in any arena), and `finished`
    /// as the league's record says. [`Adaptive::refresh`] reads them from the store;
    /// `simulate::play_settled` plays a league in-process with the same steps.
    pub fn read(
        &mut self,
        mut plan: Plan,
        results: &[PlayedMatch],
        open: Vec<OpenLeagueMatch>,
        playing: usize,
        finished: u64,
    ) {
        plan.note_unplayed(open.iter().map(|m| (m.rules.game(), m.seats.as_slice())));
        // Sets of matches playing here were marked begun when they started.
        self.begun.extend(results.iter().map(|m| m.set));
        let left_in_begun = open.iter().filter(|m| self.begun.contains(&m.set)).count();
        self.committed = (results.len() + playing + left_in_begun) as u64;
        let mut queue: Vec<(u8, OpenLeagueMatch)> = open
            .into_iter()
            .filter_map(|m| {
                let begun = self.begun.contains(&m.set);
                plan.priority(m.rules.game(), &m.seats, begun)
                    .map(|p| (p, m))
            })
            .collect();
        queue.sort_by_key(|(p, m)| (*p, m.ordinal));
        self.queue = games_take_turns(queue);
        self.unstarted = self.queue.iter().map(|m| m.ordinal).collect();
        self.left_in_set.clear();
        for m in &self.queue {
            *self.left_in_set.entry(m.set).or_default() += 1;
        }
        self.plan = plan;
        self.seen_finished = Some(finished);
        self.at = Instant::now();
    }

    /// Up to `free` matches to try now, in order, skipping those in `in_flight`: begun sets'
    /// first, then new sets that fit the budget (none once the order is settled). One pass
    /// over the queue: a league of 30 bots queues up to [`super::MAX_MATCHES`] matches.
    pub fn candidates(&self, free: usize, in_flight: &HashSet<u32>) -> Vec<OpenLeagueMatch> {
        let mut out = Vec::new();
        let mut reserved = self.committed;
        let mut new_sets = HashSet::new();
        for m in &self.queue {
            if out.len() == free {
                break;
            }
            if !self.unstarted.contains(&m.ordinal) || in_flight.contains(&m.ordinal) {
                continue;
            }
            if !self.begun.contains(&m.set) && !new_sets.contains(&m.set) {
                if self.plan.settled {
                    continue;
                }
                let size = self.set_left(m.set);
                if reserved + size > self.budget {
                    continue;
                }
                reserved += size;
                new_sets.insert(m.set);
            }
            out.push(m.clone());
        }
        out
    }

    /// The matches of set `set` still open.
    fn set_left(&self, set: u32) -> u64 {
        self.left_in_set.get(&set).copied().unwrap_or(0)
    }

    /// Match `m` (one of [`Adaptive::candidates`]) started here.
    pub fn started(&mut self, m: &OpenLeagueMatch) {
        if self.begun.insert(m.set) {
            // The set's matches left, this one among them.
            self.committed += self.set_left(m.set);
        }
        if self.unstarted.remove(&m.ordinal)
            && let Some(left) = self.left_in_set.get_mut(&m.set)
        {
            *left -= 1;
        }
    }

    /// Whether the league is over, and why, with `playing` matches of it in play (in any
    /// arena) and `finished` finished: only on a reading of every finished result.
    pub fn ended(&self, finished: u64, playing: usize) -> Option<Ended> {
        if self.seen_finished != Some(finished) || playing > 0 {
            return None;
        }
        if self.begun.iter().any(|set| self.set_left(*set) > 0) {
            return None;
        }
        if self.plan.settled {
            return Some(Ended::Settled);
        }
        match self.candidates(1, &HashSet::new()).is_empty() {
            false => None,
            true if self.unstarted.is_empty() => Some(Ended::Schedule),
            true => Some(Ended::Budget),
        }
    }
}

/// The matches of `queue` (each with its [`Plan::priority`], in the order of priority and
/// schedule), those of the open-neighbour tier reordered so that the games take turns by
/// set: each game's first set of that tier, then each game's second, and so on (within a
/// turn, the most open pairs first). The tiers before it keep their order.
fn games_take_turns(queue: Vec<(u8, OpenLeagueMatch)>) -> Vec<OpenLeagueMatch> {
    // Each set's turn: the number of sets of its game before it in the tier.
    let mut turn_of_set: HashMap<u32, u32> = HashMap::new();
    let mut sets_of_game: HashMap<Game, u32> = HashMap::new();
    let mut keyed: Vec<((u8, u32, u8, u32), OpenLeagueMatch)> = queue
        .into_iter()
        .map(|(priority, m)| {
            let (tier, turn) = if priority <= 1 {
                (priority, 0)
            } else {
                let turn = *turn_of_set.entry(m.set).or_insert_with(|| {
                    let n = sets_of_game.entry(m.rules.game()).or_default();
                    *n += 1;
                    *n - 1
                });
                (2, turn)
            };
            ((tier, turn, priority, m.ordinal), m)
        })
        .collect();
    keyed.sort_by_key(|(key, _)| *key);
    keyed.into_iter().map(|(_, m)| m).collect()
}

/// The plan of a league of `games` with `margins` and `results`.
fn plan_of(results: &[PlayedMatch], games: &[Game], margins: &Margins) -> Plan {
    Plan::new(&standings_with(results, margins), games)
}

#[cfg(test)]
mod tests {
    use knobel_engine::Rules;

    use super::*;

    /// A match of set `set` of `preset` (`ordinal`).
    fn one(preset: &str, set: u32, ordinal: u32) -> OpenLeagueMatch {
        OpenLeagueMatch {
            league_id: 1,
            ordinal,
            preset: preset.into(),
            rules: Rules::preset(preset).expect("a preset"),
            set,
            seats: ["a", "b"].map(String::from).to_vec(),
            seed: 0,
        }
    }

    #[test]
    fn the_games_take_turns_by_set_among_tables_of_open_neighbours() {
        // As sorted by (priority, ordinal): a bot yet to play first, then Schocken's tables
        // seating three open pairs, then Zokken's seating one.
        let queue = vec![
            (1, one("sjokken", 9, 90)),
            (252, one("schocken", 0, 0)),
            (252, one("schocken", 0, 1)),
            (252, one("schocken", 1, 2)),
            (252, one("schocken", 1, 3)),
            (252, one("schocken", 2, 4)),
            (254, one("zokken", 10, 100)),
            (254, one("zokken", 10, 101)),
            (254, one("zokken", 11, 102)),
        ];
        let order: Vec<u32> = games_take_turns(queue).iter().map(|m| m.ordinal).collect();
        assert_eq!(order, [90, 0, 1, 100, 101, 2, 3, 102, 4]);
    }

    /// `sets` sets of four matches of Schocken (ordinals in order), at one table of four.
    fn open(sets: u32) -> Vec<OpenLeagueMatch> {
        let seats: Vec<String> = ["a", "b", "c", "d"].map(String::from).to_vec();
        (0..sets * 4)
            .map(|ordinal| OpenLeagueMatch {
                league_id: 1,
                ordinal,
                preset: "schocken".into(),
                rules: Rules::preset("schocken").expect("a preset"),
                set: ordinal / 4,
                seats: seats.clone(),
                seed: 0,
            })
            .collect()
    }

    fn adaptive(budget: Option<u64>, sets: u32) -> Adaptive {
        let mut a = Adaptive::with(&SettledOptions {
            games: vec![Game::Schocken],
            margins: Margins::default(),
            budget,
        });
        a.read(Plan::default(), &[], open(sets), 0, 0);
        a
    }

    fn ordinals(matches: &[OpenLeagueMatch]) -> Vec<u32> {
        matches.iter().map(|m| m.ordinal).collect()
    }

    #[test]
    fn a_new_set_starts_only_within_the_budget_and_a_begun_set_is_played_to_its_end() {
        let mut a = adaptive(Some(6), 3);
        // The first set fits the budget of 6; a second one (4 more) does not.
        assert_eq!(ordinals(&a.candidates(10, &HashSet::new())), [0, 1, 2, 3]);
        let first = a.candidates(1, &HashSet::new()).remove(0);
        a.started(&first);
        // Started: never offered again; its set's other matches still are, nothing new.
        assert_eq!(ordinals(&a.candidates(10, &HashSet::new())), [1, 2, 3]);
        // A match in flight is skipped.
        assert_eq!(
            ordinals(&a.candidates(10, &HashSet::from([2]))),
            [1, 3],
            "in flight"
        );
        assert_eq!(a.ended(0, 0), None, "a begun set has matches left");
        for m in a.candidates(10, &HashSet::new()) {
            a.started(&m);
        }
        assert!(a.candidates(10, &HashSet::new()).is_empty());
        assert_eq!(a.ended(0, 1), None, "a match still plays here");
        assert_eq!(a.ended(0, 0), Some(Ended::Budget));
    }

    #[test]
    fn without_a_budget_every_set_is_offered_and_the_schedule_ends_it() {
        let mut a = adaptive(None, 3);
        assert_eq!(a.candidates(100, &HashSet::new()).len(), 12);
        // Starting a match twice (a second call for the same match) counts it once.
        let first = a.candidates(1, &HashSet::new()).remove(0);
        a.started(&first);
        a.started(&first);
        assert_eq!(a.candidates(100, &HashSet::new()).len(), 11);
        for m in a.candidates(100, &HashSet::new()) {
            a.started(&m);
        }
        assert_eq!(a.ended(0, 0), Some(Ended::Schedule));
        // A new reading of the store offers what it lists as open again.
        a.read(Plan::default(), &[], open(1), 0, 0);
        assert_eq!(ordinals(&a.candidates(100, &HashSet::new())), [0, 1, 2, 3]);
    }
}
