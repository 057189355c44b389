//! Plays a league schedule in-process with engine policies, without bots, network or store:
//! for benchmarks and for measuring built-in players. Each match is played to its end with
//! [`play_out`] and turned into the [`PlayedMatch`] the standings read.

use knobel_engine::policy::{Policy, play_out};
use knobel_engine::{Game, Match, MatchLog, Rules};

use super::schedule::{ScheduledMatch, mix};
use super::standings::{PlayedMatch, PlayedSeat};

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
}
