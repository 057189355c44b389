//! League metrics: every shown league's progress, and each bot's standing in it per game
//! and overall (rating, matches, mean place, placings), refreshed by [`refresh`] from the
//! standings GetStandings and the web pages serve (`Leagues::league_standings_within`: one
//! computation shared with the pages, at most every
//! [`RUNNING_STANDINGS_MAX_AGE`](crate::league::service::RUNNING_STANDINGS_MAX_AGE) for a
//! running league, exact once it has ended).
//!
//! Leagues are a bounded label set: the [`MAX_LEAGUE_LABELS`] leagues shown are the running
//! and paused ones first, then the newest; the series of a league no longer shown are
//! removed. A league's series are set again only when its standings were computed anew.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use prometheus::{GaugeVec, IntGaugeVec};
use tokio::sync::watch;
use tracing::debug;

use super::{Metrics, Register};
use crate::league::PlayedMatch;
use crate::league::service::{Leagues, Played, RUNNING_STANDINGS_MAX_AGE};
use crate::league::standings::BotStanding;
use crate::store::{LeagueRecord, LeagueStatus};

/// Leagues that have series of their own.
pub const MAX_LEAGUE_LABELS: usize = 16;

/// How often the league series are brought up to date.
pub const REFRESH_EVERY: Duration = Duration::from_secs(1);

/// The `game` label value of a league's overall standings.
pub const OVERALL: &str = "overall";

/// The league gauges (in the arena's registry).
pub(crate) struct LeagueGauges {
    matches: IntGaugeVec,
    status: IntGaugeVec,
    mu: GaugeVec,
    sigma: GaugeVec,
    conservative: GaugeVec,
    bot_matches: IntGaugeVec,
    mean_place: GaugeVec,
    placings: IntGaugeVec,
}

impl LeagueGauges {
    pub(super) fn new(r: &Register<'_>) -> LeagueGauges {
        let standing = ["league", "game", "bot"];
        LeagueGauges {
            matches: r.gauge(
                "league_matches",
                "A league's scheduled matches by state: pending (not started), running (playing \
                 in this arena now) and done (with a result).",
                &["league", "state"],
            ),
            status: r.gauge(
                "league_status",
                "Where a league stands: 1 for its status (created, running, paused, cancelled, \
                 finished), 0 for the others.",
                &["league", "status"],
            ),
            mu: r.float_gauge(
                "league_rating_mu",
                "A bot's rating in a league (Weng-Lin, from its results in schedule order): mu, \
                 per game and overall (game=\"overall\").",
                &standing,
            ),
            sigma: r.float_gauge(
                "league_rating_sigma",
                "A bot's rating uncertainty in a league: sigma, per game and overall.",
                &standing,
            ),
            conservative: r.float_gauge(
                "league_rating_conservative",
                "A bot's conservative rating in a league: mu - 3 sigma, per game and overall.",
                &standing,
            ),
            bot_matches: r.gauge(
                "league_bot_matches",
                "Matches a bot has played in a league, per game and overall.",
                &standing,
            ),
            mean_place: r.float_gauge(
                "league_mean_place",
                "A bot's mean place in a league (1 is best), per game and overall; the \
                 standings rank by it (Zokken: by net chips per 100 rounds).",
                &standing,
            ),
            placings: r.gauge(
                "league_placings",
                "Matches a bot finished at each place in a league, per game.",
                &["league", "game", "bot", "place"],
            ),
        }
    }

    fn set_status(&self, league: &str, status: LeagueStatus) {
        for s in LeagueStatus::ALL {
            self.status
                .with_label_values(&[league, s.as_str()])
                .set(i64::from(s == status));
        }
    }

    fn set_progress(&self, league: &str, pending: u64, running: u64, done: u64) {
        for (state, n) in [("pending", pending), ("running", running), ("done", done)] {
            self.matches
                .with_label_values(&[league, state])
                .set(n.min(i64::MAX as u64) as i64);
        }
    }

    fn set_standing(&self, league: &str, game: &str, b: &BotStanding) {
        let labels = [league, game, b.bot.as_str()];
        self.mu.with_label_values(&labels).set(b.mu);
        self.sigma.with_label_values(&labels).set(b.sigma);
        self.conservative
            .with_label_values(&labels)
            .set(b.conservative);
        self.bot_matches
            .with_label_values(&labels)
            .set(b.matches.min(i64::MAX as u64) as i64);
        self.mean_place.with_label_values(&labels).set(b.mean_place);
    }

    /// Removes every series of `league`.
    fn forget(&self, league: &str, shown: &Shown) {
        for state in ["pending", "running", "done"] {
            let _ = self.matches.remove_label_values(&[league, state]);
        }
        for status in LeagueStatus::ALL {
            let _ = self.status.remove_label_values(&[league, status.as_str()]);
        }
        for (game, bot) in &shown.standings {
            let labels = [league, game.as_str(), bot.as_str()];
            let _ = self.mu.remove_label_values(&labels);
            let _ = self.sigma.remove_label_values(&labels);
            let _ = self.conservative.remove_label_values(&labels);
            let _ = self.bot_matches.remove_label_values(&labels);
            let _ = self.mean_place.remove_label_values(&labels);
        }
        for (game, bot, place) in &shown.placings {
            let _ = self
                .placings
                .remove_label_values(&[league, game, bot, place]);
        }
    }
}

/// The series one league has, to remove them when it is no longer shown.
#[derive(Default)]
struct Shown {
    /// The standings its series were set from.
    from: Option<Arc<Played>>,
    standings: HashSet<(String, String)>,
    placings: HashSet<(String, String, String)>,
}

/// The leagues shown: running and paused first, then the newest.
fn shown_leagues(mut leagues: Vec<LeagueRecord>) -> Vec<LeagueRecord> {
    let active =
        |l: &LeagueRecord| matches!(l.status, LeagueStatus::Running | LeagueStatus::Paused) as u8;
    leagues.sort_by(|a, b| {
        active(b)
            .cmp(&active(a))
            .then(b.created_at_ms.cmp(&a.created_at_ms))
            .then(b.id.cmp(&a.id))
    });
    leagues.truncate(MAX_LEAGUE_LABELS);
    leagues
}

/// Matches at each place, per game and bot.
fn placings(played: &[PlayedMatch]) -> BTreeMap<(&'static str, &str, u8), i64> {
    let mut counts = BTreeMap::new();
    for m in played {
        for seat in &m.seats {
            *counts
                .entry((m.game.name(), seat.bot.as_str(), seat.place))
                .or_insert(0) += 1;
        }
    }
    counts
}

/// Keeps the league series of `metrics` up to date every [`REFRESH_EVERY`] until
/// `shutdown` turns true. A store failure skips one refresh (and is logged).
pub async fn refresh(metrics: Metrics, leagues: Leagues, mut shutdown: watch::Receiver<bool>) {
    let Some(gauges) = metrics.leagues() else {
        return;
    };
    let mut shown: HashMap<String, Shown> = HashMap::new();
    loop {
        if let Err(error) = refresh_once(gauges, &leagues, &mut shown).await {
            debug!(%error, "league metrics not refreshed: the store failed");
        }
        tokio::select! {
            _ = tokio::time::sleep(REFRESH_EVERY) => {}
            _ = shutdown.wait_for(|&down| down) => return,
        }
    }
}

async fn refresh_once(
    gauges: &LeagueGauges,
    leagues: &Leagues,
    shown: &mut HashMap<String, Shown>,
) -> Result<(), crate::store::StoreError> {
    let records = shown_leagues(
        leagues
            .leagues()
            .await?
            .into_iter()
            .map(|(l, _)| l)
            .collect(),
    );
    let names: HashSet<&str> = records.iter().map(|l| l.name.as_str()).collect();
    shown.retain(|name, series| {
        let keep = names.contains(name.as_str());
        if !keep {
            gauges.forget(name, series);
        }
        keep
    });
    for record in &records {
        let Some(view) = leagues
            .league_standings_within(&record.name, RUNNING_STANDINGS_MAX_AGE)
            .await?
        else {
            continue; // Deleted meanwhile.
        };
        let league = &view.record;
        let running = u64::from(view.info.playing);
        let done = league.finished_matches;
        let pending = league.total_matches.saturating_sub(done + running);
        gauges.set_progress(&league.name, pending, running, done);
        gauges.set_status(&league.name, league.status);
        let series = shown.entry(league.name.clone()).or_default();
        if series
            .from
            .as_ref()
            .is_some_and(|from| Arc::ptr_eq(from, &view.played))
        {
            continue;
        }
        let s = &view.played.standings;
        for game in &s.games {
            for b in &game.bots {
                gauges.set_standing(&league.name, game.game.name(), b);
                series
                    .standings
                    .insert((game.game.name().to_owned(), b.bot.clone()));
            }
        }
        for b in &s.overall {
            gauges.set_standing(&league.name, OVERALL, b);
            series.standings.insert((OVERALL.to_owned(), b.bot.clone()));
        }
        for ((game, bot, place), n) in placings(&view.played.results) {
            let place = place.to_string();
            gauges
                .placings
                .with_label_values(&[league.name.as_str(), game, bot, place.as_str()])
                .set(n);
            series
                .placings
                .insert((game.to_owned(), bot.to_owned(), place));
        }
        series.from = Some(view.played.clone());
    }
    Ok(())
}
