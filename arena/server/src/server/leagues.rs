//! The league service in wire types: what Admin's league calls, GetStandings and
//! ListLeagues answer ([`wire_info`], [`wire_standings`]), and the status each
//! [`LeagueError`] gets ([`league_status`]). The one place league types become wire types.

use knobel_proto::v1 as pb;
use tonic::Status;

use crate::league::confidence::Bounds;
use crate::league::service::{LeagueError, LeagueInfo};
use crate::league::settle::PairVerdict;
use crate::league::standings::{
    BotStanding, GameStandings, Interval, Neighbours, PairComparison, ScoreBasis, Standings,
};
use crate::store::LeagueStatus;

/// The status a client gets for `error`: a store failure is logged with its chain and
/// answered as the server answers every store failure ([`super::status::internal`]).
pub fn league_status(error: LeagueError) -> Status {
    use crate::league::export::ExportError;
    match error {
        LeagueError::Store(e) => super::status::internal(e),
        e @ (LeagueError::FileTooLarge { .. } | LeagueError::InvalidFile(_)) => {
            Status::invalid_argument(e.to_string())
        }
        e @ (LeagueError::NoLeague { .. } | LeagueError::Export(ExportError::NoLeague { .. })) => {
            Status::not_found(e.to_string())
        }
        e @ LeagueError::Exists(_) => Status::already_exists(e.to_string()),
        e @ (LeagueError::WrongStatus { .. } | LeagueError::Export(_)) => {
            Status::failed_precondition(e.to_string())
        }
    }
}

/// The league as the wire carries it.
pub fn wire_info(info: &LeagueInfo) -> pb::LeagueInfo {
    let (league, live) = (&info.record, &info.live);
    let (dice_commitment, dice_secret) = league.shown_dice();
    pb::LeagueInfo {
        name: league.name.clone(),
        status: wire_status(league.status) as i32,
        bots: league.bots.clone(),
        total_matches: league.total_matches as u32,
        finished_matches: league.finished_matches as u32,
        playing: live.playing as u32,
        waiting_for: live.waiting_for.clone(),
        waiting_for_connected: live.waiting_for_connected.clone(),
        created_unix_ms: league.created_at_ms.max(0) as u64,
        dice: league.dice.as_str().to_owned(),
        public_dice: league.seed_source.is_public(),
        dice_commitment,
        dice_secret,
        stop: info.stop.name().to_owned(),
        budget: info.budget,
    }
}

fn wire_status(status: LeagueStatus) -> pb::LeagueStatus {
    match status {
        LeagueStatus::Created => pb::LeagueStatus::Created,
        LeagueStatus::Running => pb::LeagueStatus::Running,
        LeagueStatus::Paused => pb::LeagueStatus::Paused,
        LeagueStatus::Cancelled => pb::LeagueStatus::Cancelled,
        LeagueStatus::Finished => pb::LeagueStatus::Finished,
    }
}

fn wire_interval(i: Interval) -> pb::Interval {
    pb::Interval {
        estimate: i.estimate,
        low: i.low,
        high: i.high,
    }
}

fn wire_bot(b: &BotStanding) -> pb::BotStanding {
    pb::BotStanding {
        bot: b.bot.clone(),
        matches: b.matches as u32,
        mu: b.mu,
        sigma: b.sigma,
        conservative: b.conservative,
        mean_place: b.mean_place,
        losses: b.losses.map(|l| l as u32),
        loss_rate: b.loss_rate.map(wire_interval),
        average_loss_rate: b.average_loss_rate,
        chips_per_100_rounds: b.chips_per_100_rounds.map(wire_interval),
        adjusted: b.adjusted.map(wire_interval),
    }
}

fn wire_bounds(b: Bounds) -> pb::Bounds {
    pb::Bounds {
        low: b.low,
        high: b.high,
    }
}

fn wire_basis(basis: ScoreBasis) -> pb::ScoreBasis {
    match basis {
        ScoreBasis::Adjusted => pb::ScoreBasis::Adjusted,
        ScoreBasis::Raw => pb::ScoreBasis::Raw,
    }
}

fn wire_verdict(verdict: PairVerdict) -> pb::PairVerdict {
    match verdict {
        PairVerdict::Separated => pb::PairVerdict::Separated,
        PairVerdict::Equivalent => pb::PairVerdict::Equivalent,
        PairVerdict::Open => pb::PairVerdict::Open,
    }
}

fn wire_neighbours(n: &Neighbours) -> pb::Neighbours {
    pb::Neighbours {
        above: n.above.clone(),
        below: n.below.clone(),
        sets: n.sets as u32,
        difference: n.difference,
        sequence: Some(wire_bounds(n.sequence)),
        verdict: wire_verdict(n.verdict) as i32,
    }
}

fn wire_pair(p: &PairComparison) -> pb::PairComparison {
    pb::PairComparison {
        a: p.a.clone(),
        b: p.b.clone(),
        matches: p.matches as u32,
        a_above: p.a_above as u32,
        b_above: p.b_above as u32,
        sets: p.sets as u32,
        paired_difference: Some(wire_interval(p.paired_difference)),
        sequence: Some(wire_bounds(p.sequence)),
    }
}

fn wire_game(g: &GameStandings) -> pb::GameStandings {
    pb::GameStandings {
        game: pb::Game::from(g.game) as i32,
        matches: g.matches as u32,
        bots: g.bots.iter().map(wire_bot).collect(),
        pairs: g.pairs.iter().map(wire_pair).collect(),
        score_basis: wire_basis(g.basis) as i32,
        margin: g.margin,
        settled: g.settled(),
        neighbours: g.neighbours.iter().map(wire_neighbours).collect(),
    }
}

/// Standings as the wire carries them.
pub fn wire_standings(league: pb::LeagueInfo, s: &Standings) -> pb::GetStandingsResponse {
    pb::GetStandingsResponse {
        league: Some(league),
        games: s.games.iter().map(wire_game).collect(),
        overall: s.overall.iter().map(wire_bot).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::league::{PlayedMatch, PlayedSeat, standings_with};
    use knobel_engine::Game;

    /// A match at a table of two, `winner` first: Schocken or Sjokken with the adjusted
    /// scores `adjusted` (winner's, loser's), or Zokken with 5 chips to the winner and none
    /// adjusted.
    fn duel(
        ordinal: u32,
        game: Game,
        (winner, loser): (&str, &str),
        adjusted: (f64, f64),
    ) -> PlayedMatch {
        let zokken = game == Game::Zokken;
        let seat = |bot: &str, place: u8, chips: i64, adjusted: f64| PlayedSeat {
            bot: bot.to_owned(),
            place,
            chips: zokken.then_some(chips),
            adjusted: (!zokken).then_some(adjusted),
        };
        PlayedMatch {
            ordinal,
            game,
            set: ordinal,
            rounds: 10,
            seats: vec![
                seat(winner, 1, 5, adjusted.0),
                seat(loser, 2, -5, adjusted.1),
            ],
        }
    }

    #[test]
    fn the_wire_carries_the_basis_adjusted_scores_neighbours_and_verdicts() {
        // Schocken: ada clearly better, with adjusted scores on every match; Zokken: two
        // matches without them, too few for a verdict; Sjokken: bob and cleo alike.
        let mut played: Vec<PlayedMatch> = (0..60)
            .map(|i| {
                // ada's adjusted loss is 0.3 or 0.4, bob's 0.7 or 0.6, whoever wins.
                let luck = [0.0, 0.1][i as usize % 2];
                let (ada, bob) = (0.3 + luck, 0.7 - luck);
                if i % 4 == 0 {
                    duel(i, Game::Schocken, ("bob", "ada"), (bob, ada))
                } else {
                    duel(i, Game::Schocken, ("ada", "bob"), (ada, bob))
                }
            })
            .collect();
        played.push(duel(60, Game::Zokken, ("ada", "bob"), (0.0, 0.0)));
        played.push(duel(61, Game::Zokken, ("bob", "ada"), (0.0, 0.0)));
        played.extend((0..40).map(|i| {
            let d = [0.01, -0.01][i as usize / 2 % 2];
            let pair = if i % 2 == 0 {
                ("bob", "cleo")
            } else {
                ("cleo", "bob")
            };
            duel(100 + i, Game::Sjokken, pair, (0.5 + d, 0.5 - d))
        }));
        let mut margins = crate::league::Margins::default();
        margins.set(Game::Sjokken, 0.2);
        let info = pb::LeagueInfo {
            name: "cup".to_owned(),
            stop: "settled".to_owned(),
            budget: Some(400),
            ..Default::default()
        };
        let wire = wire_standings(info, &standings_with(&played, &margins));
        assert_eq!(wire.league.as_ref().unwrap().budget, Some(400));
        let [schocken, sjokken, zokken] = &wire.games[..] else {
            panic!("three games: {:?}", wire.games);
        };

        assert_eq!(schocken.score_basis, pb::ScoreBasis::Adjusted as i32);
        assert_eq!(schocken.margin, 0.02);
        assert!(schocken.settled);
        assert_eq!(schocken.bots[0].bot, "ada");
        // The adjusted score beside the raw one.
        let ada = &schocken.bots[0];
        assert!(ada.adjusted.is_some() && ada.loss_rate.is_some(), "{ada:?}");
        let [n] = &schocken.neighbours[..] else {
            panic!("one pair of neighbours: {:?}", schocken.neighbours);
        };
        assert_eq!(
            (n.above.as_str(), n.below.as_str(), n.sets),
            ("ada", "bob", 60)
        );
        assert_eq!(n.verdict, pb::PairVerdict::Separated as i32);
        assert!(n.difference > 0.0 && n.sequence.unwrap().low > 0.0, "{n:?}");
        let pair = &schocken.pairs[0];
        assert!(
            pair.sequence.unwrap().high < 0.0,
            "a − b favours ada: {pair:?}"
        );

        assert_eq!(
            sjokken.neighbours[0].verdict,
            pb::PairVerdict::Equivalent as i32
        );
        assert_eq!(sjokken.margin, 0.2);
        assert!(sjokken.settled);

        assert_eq!(zokken.score_basis, pb::ScoreBasis::Raw as i32);
        assert_eq!(zokken.margin, 10.0);
        assert!(!zokken.settled);
        assert!(zokken.bots.iter().all(|b| b.adjusted.is_none()));
        assert!(zokken.bots[0].chips_per_100_rounds.is_some());
        assert_eq!(zokken.neighbours[0].verdict, pb::PairVerdict::Open as i32);
        // Overall has no adjusted score.
        assert!(wire.overall.iter().all(|b| b.adjusted.is_none()));
    }
}
