//! Plays a league schedule in-process with engine policies, without bots, network or store:
//! for benchmarks and for measuring built-in players. Each match is played to its end with
//! [`play_out`] and turned into the [`PlayedMatch`] the standings read. [`play_settled`]
//! plays a `stop = "settled"` league as the arena's scheduler does ([`Adaptive`]).

use std::collections::{BTreeMap, HashSet};

use knobel_engine::policy::{Policy, play_out};
use knobel_engine::{Game, Match, MatchLog, Rules};

use super::adaptive::{Adaptive, Ended, SettledOptions};
use super::config::LeagueConfig;
use super::schedule::{ScheduledMatch, mix};
use super::standings::{PlayedMatch, PlayedSeat};
use crate::store::OpenLeagueMatch;

/// Makes the player for a bot name and a seed (e.g. [`knobel_engine::policy::by_name`]).
pub type PlayerFactory<'a> = &'a (dyn Fn(&str, u64) -> Box<dyn Policy + Send> + Sync);

/// The seed of the player in `seat` of `m`: a function of the match seed, its place in the
/// schedule and the seat, so that every match's players draw afresh.
pub fn player_seed(m: &ScheduledMatch, seat: usize) -> u64 {
    mix(mix(m.seed, u64::from(m.ordinal)), seat as u64)
}

/// Plays one scheduled match with `players` and returns its result.
///
/// # Panics
/// If the match's rules cannot seat its bots (a schedule from `expand` always can).
pub fn play_match(m: &ScheduledMatch, players: PlayerFactory<'_>) -> PlayedMatch {
    play(m, players, false).0
}

/// Like [`play_match`], with the match's log (every event: who lost each round, the tokens
/// that moved), for measures that need more than the result.
pub fn play_match_with_log(
    m: &ScheduledMatch,
    players: PlayerFactory<'_>,
) -> (PlayedMatch, MatchLog) {
    let (played, log) = play(m, players, true);
    (played, log.expect("a logged match has a log"))
}

/// Like [`play_match`], with every seat's luck-adjusted score ([`PlayedSeat::adjusted`],
/// from [`knobel_engine::match_luck`] on the match's log, as the arena records it).
///
/// # Panics
/// If the luck of the played match cannot be computed (a played-out log always can).
pub fn play_match_adjusted(m: &ScheduledMatch, players: PlayerFactory<'_>) -> PlayedMatch {
    let (mut played, log) = play_match_with_log(m, players);
    let luck = knobel_engine::match_luck(&log).expect("a played-out match has its luck");
    for (seat, adjusted) in played.seats.iter_mut().zip(luck.adjusted) {
        seat.adjusted = Some(adjusted);
    }
    played
}

fn play(
    m: &ScheduledMatch,
    players: PlayerFactory<'_>,
    log: bool,
) -> (PlayedMatch, Option<MatchLog>) {
    let setup = if log { Match::new_with_log } else { Match::new };
    let mut game =
        setup(m.rules.clone(), m.seed, m.seats.len()).expect("a scheduled match can be set up");
    let mut policies: Vec<Box<dyn Policy + Send>> = m
        .seats
        .iter()
        .enumerate()
        .map(|(seat, bot)| players(bot, player_seed(m, seat)))
        .collect();
    play_out(&mut game, &mut policies);
    let outcome = game.outcome().expect("a played-out match has an outcome");
    let rounds = match &m.rules {
        Rules::Zokken(z) => z.rounds,
        _ => 0,
    };
    let played = PlayedMatch {
        ordinal: m.ordinal,
        game: m.game,
        set: m.set,
        rounds,
        seats: m
            .seats
            .iter()
            .enumerate()
            .map(|(seat, bot)| PlayedSeat {
                bot: bot.clone(),
                place: outcome.placings[seat],
                chips: (m.game == Game::Zokken)
                    .then(|| outcome.chips.get(seat).copied())
                    .flatten(),
                adjusted: None,
            })
            .collect(),
    };
    (played, game.log().cloned())
}

/// Plays every match of `schedule` in order with `players` and returns the results in
/// schedule order. Deterministic: the same schedule and players give the same results.
pub fn play_schedule(schedule: &[ScheduledMatch], players: PlayerFactory<'_>) -> Vec<PlayedMatch> {
    schedule.iter().map(|m| play_match(m, players)).collect()
}

/// A settled league played in-process.
#[derive(Clone, Debug, PartialEq)]
pub struct SettledLeague {
    /// The matches played, in the order they were played.
    pub played: Vec<PlayedMatch>,
    /// Why it stopped.
    pub ended: Ended,
}

/// Plays league `config` (`stop = "settled"`) with schedule `schedule` as the arena's
/// scheduler does, with luck-adjusted scores as the arena records them
/// ([`play_match_adjusted`]); see [`play_settled_with`].
pub fn play_settled(
    config: &LeagueConfig,
    schedule: &[ScheduledMatch],
    players: PlayerFactory<'_>,
) -> SettledLeague {
    play_settled_with(schedule, &SettledOptions::of(config), &mut |m| {
        play_match_adjusted(m, players)
    })
}

/// Plays a settled league of `schedule` with `options`, each match with `play`, by the
/// steps of the arena's scheduler ([`Adaptive`]) with one match playing at a time: read the
/// standings, stop if the league is over ([`Ended`]: settled, budget, schedule), else start
/// the first candidate (a set that seats a bot with no results yet or two open neighbours,
/// in schedule order, whose matches fit the budget) and play the rest of its set; then read
/// again. Every set it begins is played complete. Deterministic if `play` is.
pub fn play_settled_with(
    schedule: &[ScheduledMatch],
    options: &SettledOptions,
    play: &mut dyn FnMut(&ScheduledMatch) -> PlayedMatch,
) -> SettledLeague {
    let mut adaptive = Adaptive::with(options);
    let mut open: BTreeMap<u32, (&ScheduledMatch, OpenLeagueMatch)> = schedule
        .iter()
        .map(|m| (m.ordinal, (m, open_match(m))))
        .collect();
    let mut played = Vec::new();
    loop {
        let finished = played.len() as u64;
        let plan = adaptive.plan(&played);
        let open_now = open.values().map(|(_, o)| o.clone()).collect();
        adaptive.read(plan, &played, open_now, 0, finished);
        if let Some(ended) = adaptive.ended(finished, 0) {
            return SettledLeague { played, ended };
        }
        let mut next_set = None;
        while let Some(m) = adaptive.candidates(1, &HashSet::new()).pop() {
            if next_set.is_some_and(|set| set != m.set) {
                break;
            }
            next_set = Some(m.set);
            adaptive.started(&m);
            let (scheduled, _) = open.remove(&m.ordinal).expect("a candidate is open");
            played.push(play(scheduled));
        }
    }
}

/// Scheduled match `m` as the store lists it while it is open.
fn open_match(m: &ScheduledMatch) -> OpenLeagueMatch {
    OpenLeagueMatch {
        league_id: 0,
        ordinal: m.ordinal,
        preset: m.preset.clone(),
        rules: m.rules.clone(),
        set: m.set,
        seats: m.seats.clone(),
        seed: m.seed,
    }
}

#[cfg(test)]
mod tests {
    use crate::league::public_dice;
    use knobel_engine::policy::by_name;

    use super::*;
    use crate::league::config::LeagueConfig;
    use crate::league::schedule::expand;
    use crate::league::standings::standings;

    fn builtin(name: &str, seed: u64) -> Box<dyn Policy + Send> {
        by_name(name, seed).expect("a built-in player")
    }

    fn schedule() -> Vec<ScheduledMatch> {
        let config = LeagueConfig::from_toml(
            "name = \"sim\"\nseed = 3\nbots = [\"heuristic\", \"random\", \"timid\"]\n\
             [games.schocken]\ntable_size = 3\n[games.zokken]\nsettings = { rounds = 10 }\n",
        )
        .unwrap();
        let bots = ["heuristic", "random", "timid"].map(String::from);
        expand(&config, &bots, &public_dice(&config)).unwrap()
    }

    #[test]
    fn a_schedule_plays_to_one_result_per_match_in_order() {
        let schedule = schedule();
        let played = play_schedule(&schedule, &builtin);
        assert_eq!(played.len(), schedule.len());
        for (m, p) in schedule.iter().zip(&played) {
            assert_eq!((p.ordinal, p.game, p.set), (m.ordinal, m.game, m.set));
            let bots: Vec<&str> = p.seats.iter().map(|s| s.bot.as_str()).collect();
            assert_eq!(bots, m.seats);
            assert!(p.seats.iter().all(|s| (1..=3).contains(&s.place)));
            match p.game {
                Game::Zokken => {
                    assert_eq!(p.rounds, 10);
                    let net: i64 = p.seats.iter().map(|s| s.chips.unwrap()).sum();
                    assert_eq!(net, 0, "chips are conserved");
                }
                _ => assert!(p.seats.iter().all(|s| s.chips.is_none())),
            }
        }
        let s = standings(&played);
        assert_eq!(s.games.len(), 2);
    }

    #[test]
    fn a_logged_match_has_the_same_result_and_its_log_replays_to_it() {
        for m in schedule() {
            let (played, log) = play_match_with_log(&m, &builtin);
            assert_eq!(played, play_match(&m, &builtin));
            let replayed = log.replay().unwrap().outcome().unwrap();
            let places: Vec<u8> = played.seats.iter().map(|s| s.place).collect();
            assert_eq!(replayed.placings, places);
        }
    }

    #[test]
    fn playing_is_deterministic() {
        let schedule = schedule();
        assert_eq!(
            play_schedule(&schedule, &builtin),
            play_schedule(&schedule, &builtin)
        );
    }

    /// A settled Zokken league of `bots` at tables of 2, 10 rounds a match, `repetitions`
    /// sets per table, with `budget`, and its schedule.
    fn settled_league(
        bots: &[&str],
        repetitions: u32,
        budget: Option<u32>,
    ) -> (LeagueConfig, Vec<ScheduledMatch>) {
        let names: Vec<String> = bots.iter().map(|b| format!("\"{b}\"")).collect();
        let budget = budget.map_or(String::new(), |b| format!("budget = {b}\n"));
        let config = LeagueConfig::from_toml(&format!(
            "name = \"settled\"\nseed = 5\nbots = [{}]\nrepetitions = {repetitions}\n\
             stop = \"settled\"\n{budget}[games.zokken]\nsettings = {{ rounds = 10 }}\n",
            names.join(", ")
        ))
        .unwrap();
        let bots: Vec<String> = bots.iter().map(|b| (*b).to_owned()).collect();
        let schedule = expand(&config, &bots, &public_dice(&config)).unwrap();
        (config, schedule)
    }

    /// Every set of `league` was played complete: as many of its matches as `schedule` has.
    fn assert_sets_complete(league: &SettledLeague, schedule: &[ScheduledMatch]) {
        let count = |sets: &mut BTreeMap<u32, usize>, set| *sets.entry(set).or_default() += 1;
        let (mut played, mut scheduled) = (BTreeMap::new(), BTreeMap::new());
        league.played.iter().for_each(|m| count(&mut played, m.set));
        schedule.iter().for_each(|m| count(&mut scheduled, m.set));
        for (set, n) in &played {
            assert_eq!(*n, scheduled[set], "set {set} played incomplete");
        }
    }

    #[test]
    fn a_settled_league_of_clearly_different_bots_stops_when_settled() {
        let (config, schedule) = settled_league(&["heuristic", "handicap-2", "timid"], 60, None);
        let league = play_settled(&config, &schedule, &builtin);
        let s = crate::league::standings_with(&league.played, &config.margins());
        assert_eq!(league.ended, Ended::Settled, "{:?}", s.games[0].neighbours);
        assert!(league.played.len() < schedule.len(), "stopped early");
        assert!(
            league
                .played
                .iter()
                .all(|m| m.seats.iter().all(|s| s.adjusted.is_some()))
        );
        assert_sets_complete(&league, &schedule);
        assert!(s.games.iter().all(|g| g.settled()));
        let order: Vec<&str> = s.games[0].bots.iter().map(|b| b.bot.as_str()).collect();
        assert_eq!(order, ["heuristic", "handicap-2", "timid"]);
        // Deterministic.
        assert_eq!(play_settled(&config, &schedule, &builtin), league);
    }

    #[test]
    fn a_settled_league_of_identical_bots_stops_at_its_budget() {
        let (config, schedule) = settled_league(&["ada", "bob"], 100, Some(41));
        let same = |_: &str, seed: u64| builtin("heuristic", seed);
        let league = play_settled(&config, &schedule, &same);
        assert_eq!(league.ended, Ended::Budget);
        // Sets of two: 20 fit in 41 matches, the 21st would not.
        assert_eq!(league.played.len(), 40);
        assert_sets_complete(&league, &schedule);
    }

    #[test]
    fn a_settled_league_plays_every_bot_before_it_can_stop() {
        // Synthetic results: the better bot (by name) loses no chips. One set at a time, the
        // first set's two bots alone would have an open pair; the tables of the others must
        // be played all the same.
        let (config, schedule) = settled_league(&["a", "b", "c", "d"], 40, None);
        let mut play = |m: &ScheduledMatch| {
            let winner = usize::from(m.seats[1] < m.seats[0]);
            let seats = m.seats.iter().enumerate().map(|(i, bot)| {
                let chips = if i == winner { 50 } else { -50 };
                PlayedSeat {
                    bot: bot.clone(),
                    place: if i == winner { 1 } else { 2 },
                    chips: Some(chips),
                    adjusted: Some(chips as f64 * 10.0 + f64::from(m.ordinal % 7)),
                }
            });
            PlayedMatch {
                ordinal: m.ordinal,
                game: m.game,
                set: m.set,
                rounds: 10,
                seats: seats.collect(),
            }
        };
        let league = play_settled_with(&schedule, &SettledOptions::of(&config), &mut play);
        assert_eq!(league.ended, Ended::Settled);
        assert_sets_complete(&league, &schedule);
        let first_sets: Vec<u32> = league.played.iter().map(|m| m.set).take(12).collect();
        // The six tables of the first repetition first, in schedule order.
        assert_eq!(first_sets, [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5]);
        let s = crate::league::standings(&league.played);
        let order: Vec<&str> = s.games[0].bots.iter().map(|b| b.bot.as_str()).collect();
        assert_eq!(order, ["a", "b", "c", "d"]);
    }
}
