//! League metrics: every shown league's progress, and each bot's standing in it per game
//! and overall (rank, rating, matches, mean place, loss ratio or net chips per 100 rounds,
//! placings), set by [`refresh`] from the league snapshot the live pages read too
//! ([`LeagueSnapshots`]: one task takes it for both, every
//! [`SNAPSHOT_EVERY`](crate::league::snapshot::SNAPSHOT_EVERY); a running league's
//! standings are at most
//! [`RUNNING_STANDINGS_MAX_AGE`](crate::league::service::RUNNING_STANDINGS_MAX_AGE) old, an
//! ended league's exact). The metrics never read the store for them.
//!
//! Leagues are a bounded label set: the [`MAX_LEAGUE_LABELS`] leagues the snapshot shows are
//! the running and paused ones first, then the newest; the series of a league no longer
//! shown are removed. A league's series are set again only when its standings were computed
//! anew. Where several arenas share a database only the lead one (the snapshot's `lead`:
//! the oldest live arena) exports league series; the others remove theirs.
//!
//! The league series are in a registry of their own, rendered to text by the refresh when
//! they changed ([`LeagueGauges::publish`]): a scrape copies that text after the arena's
//! other series, so what it costs does not depend on the leagues, their bots or how many
//! of their matches are stored.
//!
//! Bots are bounded per league and game too: the first [`MAX_BOT_LABELS`] of the
//! standings' order have series (ranks 1 to [`MAX_BOT_LABELS`]), the others none, so the
//! leaderboard is exact for the best bots. Every entrant has its series for each of the
//! league's games from the league's creation: bots yet to play a game follow those that
//! have (by name) with the initial rating, 0 matches and 0 at every place.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use prometheus::{Encoder, GaugeVec, IntGaugeVec, Registry, TextEncoder};
use tokio::sync::watch;

use knobel_engine::Game;

use super::{MAX_BOT_LABELS, Metrics, Register};
use crate::league::PlayedMatch;
use crate::league::ratings::Rating;
use crate::league::service::Played;
use crate::league::settle::PairVerdict;
use crate::league::snapshot::{LeagueSnapshot, LeagueSnapshots, MAX_SHOWN_LEAGUES};
use crate::league::standings::{BotStanding, GameStandings};
use crate::store::{LeagueRecord, LeagueStatus};

/// Leagues that have series of their own: those the league snapshot shows.
pub const MAX_LEAGUE_LABELS: usize = MAX_SHOWN_LEAGUES;

/// The `game` label value of a league's overall standings.
pub const OVERALL: &str = "overall";

/// The league gauges, in a registry of their own, and their text as last published.
pub(crate) struct LeagueGauges {
    registry: Registry,
    /// The registry's text as [`LeagueGauges::publish`] last rendered it.
    published: Mutex<Bytes>,
    matches: IntGaugeVec,
    status: IntGaugeVec,
    info: IntGaugeVec,
    rank: IntGaugeVec,
    mu: GaugeVec,
    sigma: GaugeVec,
    conservative: GaugeVec,
    bot_matches: IntGaugeVec,
    mean_place: GaugeVec,
    loss_ratio: GaugeVec,
    chips: GaugeVec,
    placings: IntGaugeVec,
    neighbours: IntGaugeVec,
    settled: IntGaugeVec,
}

impl LeagueGauges {
    pub(super) fn new() -> LeagueGauges {
        let registry = Registry::new_custom(Some("knobel".to_owned()), None).expect("valid prefix");
        let r = Register(&registry);
        let standing = ["league", "game", "bot"];
        let (matches, status, info) = league_state_gauges(&r);
        let (rank, mu, sigma, conservative) = rating_gauges(&r, &standing);
        let (bot_matches, mean_place, loss_ratio, chips) = result_gauges(&r, &standing);
        let (placings, neighbours, settled) = verdict_gauges(&r);
        LeagueGauges {
            published: Mutex::new(Bytes::new()),
            matches,
            status,
            info,
            rank,
            mu,
            sigma,
            conservative,
            bot_matches,
            mean_place,
            loss_ratio,
            chips,
            placings,
            neighbours,
            settled,
            registry,
        }
    }

    /// The league series now, in Prometheus' text format.
    pub(super) fn render(&self) -> Vec<u8> {
        let mut buffer = Vec::new();
        TextEncoder::new()
            .encode(&self.registry.gather(), &mut buffer)
            .expect("text encoding cannot fail");
        buffer
    }

    /// Renders the league series for the scrapes to serve ([`LeagueGauges::published`]).
    pub(crate) fn publish(&self) {
        let text = Bytes::from(self.render());
        *self.published.lock().expect("league text lock") = text;
    }

    /// The league series' text as last published: what a scrape serves.
    pub(crate) fn published(&self) -> Bytes {
        self.published.lock().expect("league text lock").clone()
    }

    fn set_info(&self, league: &LeagueRecord) {
        let public = if league.seed_source.is_public() {
            "true"
        } else {
            "false"
        };
        self.info
            .with_label_values(&[&league.name, league.dice.as_str(), public])
            .set(1);
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

    fn set_line(&self, league: &str, game: &str, line: &Line<'_>) {
        let labels = [league, game, line.bot];
        let count = |n: u64| n.min(i64::MAX as u64) as i64;
        self.rank.with_label_values(&labels).set(count(line.rank));
        self.mu.with_label_values(&labels).set(line.mu);
        self.sigma.with_label_values(&labels).set(line.sigma);
        self.conservative
            .with_label_values(&labels)
            .set(line.conservative);
        self.bot_matches
            .with_label_values(&labels)
            .set(count(line.matches));
        if let Some(played) = line.played {
            self.mean_place
                .with_label_values(&labels)
                .set(played.mean_place);
            if let Some(loss) = played.loss_rate {
                self.loss_ratio
                    .with_label_values(&labels)
                    .set(loss.estimate);
            }
            if let Some(chips) = played.chips_per_100_rounds {
                self.chips.with_label_values(&labels).set(chips.estimate);
            }
        }
    }

    /// Sets the verdict series of `game` in `league` from its standings (`None`: no results
    /// yet, so no pair and not settled).
    fn set_verdicts(&self, league: &str, game: Game, standings: Option<&GameStandings>) {
        let neighbours = standings.map_or(&[][..], |g| &g.neighbours[..]);
        for verdict in PairVerdict::ALL {
            let pairs = neighbours.iter().filter(|n| n.verdict == verdict).count();
            self.neighbours
                .with_label_values(&[league, game.name(), verdict.name()])
                .set(pairs as i64);
        }
        self.settled
            .with_label_values(&[league, game.name()])
            .set(i64::from(standings.is_some_and(GameStandings::settled)));
    }

    /// Removes the verdict series of `game` in `league`.
    fn remove_verdicts(&self, league: &str, game: &str) {
        for verdict in PairVerdict::ALL {
            let _ = self
                .neighbours
                .remove_label_values(&[league, game, verdict.name()]);
        }
        let _ = self.settled.remove_label_values(&[league, game]);
    }

    /// Removes the series of `bot` in `league` and `game` (placings apart).
    fn remove_line(&self, league: &str, game: &str, bot: &str) {
        let labels = [league, game, bot];
        for gauge in [
            &self.mu,
            &self.sigma,
            &self.conservative,
            &self.mean_place,
            &self.loss_ratio,
            &self.chips,
        ] {
            let _ = gauge.remove_label_values(&labels);
        }
        let _ = self.rank.remove_label_values(&labels);
        let _ = self.bot_matches.remove_label_values(&labels);
    }

    /// Removes every series of `league`.
    fn forget(&self, league: &str, shown: &Shown) {
        for state in ["pending", "running", "done"] {
            let _ = self.matches.remove_label_values(&[league, state]);
        }
        for status in LeagueStatus::ALL {
            let _ = self.status.remove_label_values(&[league, status.as_str()]);
        }
        for dice in crate::league::DiceMode::ALL {
            for public in ["true", "false"] {
                let _ = self
                    .info
                    .remove_label_values(&[league, dice.as_str(), public]);
            }
        }
        for (game, bot) in &shown.standings {
            self.remove_line(league, game, bot);
        }
        for (game, bot, place) in &shown.placings {
            let _ = self
                .placings
                .remove_label_values(&[league, game, bot, place]);
        }
        for game in &shown.games {
            self.remove_verdicts(league, game);
        }
    }
}

/// A league's series: its matches by state, its status and its dice: `(matches, status, info)`.
fn league_state_gauges(r: &Register<'_>) -> (IntGaugeVec, IntGaugeVec, IntGaugeVec) {
    let matches = r.gauge(
        "league_matches",
        "A league's scheduled matches by state: pending (not started), running (playing \
         now, in any arena on the database) and done (with a result).",
        &["league", "state"],
    );
    let status = r.gauge(
        "league_status",
        "Where a league stands: 1 for its status (created, running, paused, cancelled, \
         finished), 0 for the others.",
        &["league", "status"],
    );
    let info = r.gauge(
        "league_info",
        "1 for every league, with its dice (independent or duplicate) and whether they \
         are public (public_dice=\"true\": its seed is known, not for a contest).",
        &["league", "dice", "public_dice"],
    );
    (matches, status, info)
}

/// A bot's place and rating in a league's standings: `(rank, mu, sigma, conservative)`.
fn rating_gauges(
    r: &Register<'_>,
    standing: &[&str],
) -> (IntGaugeVec, GaugeVec, GaugeVec, GaugeVec) {
    let rank = r.gauge(
        "league_rank",
        "A bot's place in a league's standings (1 is best), per game and overall, as \
         GetStandings orders them: by the luck-adjusted score where every match of the \
         game has one, else by mean place (Zokken: by net chips per 100 rounds), then \
         conservative rating, then name; bots yet to play a game of it after those that \
         have, by name.",
        standing,
    );
    let mu = r.float_gauge(
        "league_rating_mu",
        "A bot's rating in a league (Weng-Lin, from its results in schedule order): mu, \
         per game and overall (game=\"overall\").",
        standing,
    );
    let sigma = r.float_gauge(
        "league_rating_sigma",
        "A bot's rating uncertainty in a league: sigma, per game and overall.",
        standing,
    );
    let conservative = r.float_gauge(
        "league_rating_conservative",
        "A bot's conservative rating in a league: mu - 3 sigma, per game and overall.",
        standing,
    );
    (rank, mu, sigma, conservative)
}

/// A bot's results in a league: `(bot_matches, mean_place, loss_ratio, chips)`.
fn result_gauges(
    r: &Register<'_>,
    standing: &[&str],
) -> (IntGaugeVec, GaugeVec, GaugeVec, GaugeVec) {
    let bot_matches = r.gauge(
        "league_bot_matches",
        "Matches a bot has played in a league, per game and overall.",
        standing,
    );
    let mean_place = r.float_gauge(
        "league_mean_place",
        "A bot's mean place in a league (1 is best), per game and overall, once it has \
         played; what the standings rank by except in Zokken.",
        standing,
    );
    let loss_ratio = r.float_gauge(
        "league_loss_ratio",
        "The share of its matches a bot lost in a league (0 to 1; Schocken, Sjokken), \
         once it has played.",
        standing,
    );
    let chips = r.float_gauge(
        "league_net_chips_per_100_rounds",
        "A bot's mean net chips per 100 rounds in a league (Zokken), once it has \
         played: what Zokken's standings rank by.",
        standing,
    );
    (bot_matches, mean_place, loss_ratio, chips)
}

/// A game's placings and verdicts in a league: `(placings, neighbours, settled)`.
fn verdict_gauges(r: &Register<'_>) -> (IntGaugeVec, IntGaugeVec, IntGaugeVec) {
    let placings = r.gauge(
        "league_placings",
        "Matches a bot finished at each place in a league, per game (every place of \
         the game's tables, from 0).",
        &["league", "game", "bot", "place"],
    );
    let neighbours = r.gauge(
        "league_neighbours",
        "Adjacent pairs of a game's standings (each bot and the next below it) by \
         verdict: separated (their order is known), equivalent (they play alike, within \
         the game's margin) or open.",
        &["league", "game", "verdict"],
    );
    let settled = r.gauge(
        "league_settled",
        "1 if a game's standings are settled (no two neighbours open), else 0 (also \
         before it has results).",
        &["league", "game"],
    );
    (placings, neighbours, settled)
}

/// The series one league has, to remove them when it is no longer shown.
#[derive(Default)]
struct Shown {
    /// The standings its series were set from.
    from: Option<Arc<Played>>,
    /// The progress (pending, running, done) and status its series show.
    progress: Option<(u64, u64, u64, LeagueStatus)>,
    /// (game, bot) of its standing series.
    standings: HashSet<(String, String)>,
    /// (game, bot, place) of its placings.
    placings: HashSet<(String, String, String)>,
    /// The games of its verdict series.
    games: HashSet<String>,
}

/// One bot's series in one game of a league (or overall).
#[derive(Clone, Debug, PartialEq)]
struct Line<'a> {
    bot: &'a str,
    /// 1 is best.
    rank: u64,
    mu: f64,
    sigma: f64,
    conservative: f64,
    matches: u64,
    /// Its line in the standings, once it has played.
    played: Option<&'a BotStanding>,
}

/// The lines of one game (or overall, `game` `None`): the bots of `ranked` (the standings,
/// best first) with their standings, then the `entrants` yet to play, by name, with the
/// initial rating; at most [`MAX_BOT_LABELS`], the best.
fn lines<'a>(ranked: &'a [BotStanding], entrants: &'a [String]) -> Vec<Line<'a>> {
    let mut lines: Vec<Line<'a>> = ranked
        .iter()
        .map(|b| Line {
            bot: &b.bot,
            rank: 0,
            mu: b.mu,
            sigma: b.sigma,
            conservative: b.conservative,
            matches: b.matches,
            played: Some(b),
        })
        .collect();
    let played: std::collections::HashSet<&str> = ranked.iter().map(|b| b.bot.as_str()).collect();
    let mut waiting: Vec<&String> = entrants
        .iter()
        .filter(|e| !played.contains(e.as_str()))
        .collect();
    // A league's bots are distinct (the league file refuses a bot named twice).
    waiting.sort();
    let initial = Rating::default();
    lines.extend(waiting.into_iter().map(|bot| Line {
        bot,
        rank: 0,
        mu: initial.mu,
        sigma: initial.sigma,
        conservative: initial.conservative(),
        matches: 0,
        played: None,
    }));
    lines.truncate(MAX_BOT_LABELS);
    for (i, line) in lines.iter_mut().enumerate() {
        line.rank = i as u64 + 1;
    }
    lines
}

/// A league's games and their table sizes, from its file.
fn games_of(record: &LeagueRecord) -> Vec<(Game, u32)> {
    record
        .config
        .games
        .iter()
        .map(|plan| (plan.game, plan.table_size))
        .collect()
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

/// Keeps the league series of `metrics` up to date with each league snapshot `snapshots`
/// publishes, until `shutdown` turns true.
pub async fn refresh(
    metrics: Metrics,
    snapshots: LeagueSnapshots,
    mut shutdown: watch::Receiver<bool>,
) {
    let Some(gauges) = metrics.leagues() else {
        return;
    };
    let mut published = snapshots.subscribe();
    let mut shown: HashMap<String, Shown> = HashMap::new();
    loop {
        tokio::select! {
            changed = published.changed() => {
                if changed.is_err() {
                    return;
                }
            }
            _ = shutdown.wait_for(|&down| down) => return,
        }
        let snapshot = published.borrow_and_update().clone();
        if apply_snapshot(gauges, &snapshot, &mut shown) {
            gauges.publish();
        }
    }
}

/// Brings the league series up to date with `snapshot`; whether any changed (then they are
/// to be published). A league's series are set again only when its standings were
/// computed anew (another [`Played`]) or its progress changed.
fn apply_snapshot(
    gauges: &LeagueGauges,
    snapshot: &LeagueSnapshot,
    shown: &mut HashMap<String, Shown>,
) -> bool {
    // Another arena on the database leads: it exports the league series, this one none.
    let views = if snapshot.lead {
        snapshot.shown.as_slice()
    } else {
        &[]
    };
    let names: HashSet<&str> = views
        .iter()
        .map(|view| view.info.record.name.as_str())
        .collect();
    let before = shown.len();
    shown.retain(|name, series| {
        let keep = names.contains(name.as_str());
        if !keep {
            gauges.forget(name, series);
        }
        keep
    });
    let mut changed = shown.len() != before;
    for view in views {
        let league = &view.info.record;
        let running = view.info.live.playing as u64;
        let done = league.finished_matches;
        let pending = league.total_matches.saturating_sub(done + running);
        let series = shown.entry(league.name.clone()).or_default();
        let progress = (pending, running, done, league.status);
        if series.progress != Some(progress) {
            gauges.set_progress(&league.name, pending, running, done);
            gauges.set_status(&league.name, league.status);
            gauges.set_info(league);
            series.progress = Some(progress);
            changed = true;
        }
        if series
            .from
            .as_ref()
            .is_some_and(|from| Arc::ptr_eq(from, &view.played))
        {
            continue;
        }
        set_standings(gauges, &league.name, league, &view.played, series);
        series.from = Some(view.played.clone());
        changed = true;
    }
    changed
}

/// Sets the standing and placing series of `league` from `played`, and removes those of
/// bots no longer among the [`MAX_BOT_LABELS`] shown.
fn set_standings(
    gauges: &LeagueGauges,
    name: &str,
    league: &LeagueRecord,
    played: &Played,
    series: &mut Shown,
) {
    let s = &played.standings;
    let games = games_of(league);
    let counts = placings(&played.results);
    let mut standings = HashSet::new();
    let mut places = HashSet::new();
    let no_bots = Vec::new();
    for &(game, table_size) in &games {
        let of_game = s.games.iter().find(|g| g.game == game);
        gauges.set_verdicts(name, game, of_game);
        let ranked = of_game.map_or(&no_bots, |g| &g.bots);
        for line in lines(ranked, &league.bots) {
            gauges.set_line(name, game.name(), &line);
            standings.insert((game.name().to_owned(), line.bot.to_owned()));
            // Every place of the game's tables, and any other a result holds.
            let seen = counts
                .range((game.name(), line.bot, 0)..=(game.name(), line.bot, u8::MAX))
                .map(|((_, _, place), _)| u32::from(*place))
                .max()
                .unwrap_or(0);
            for place in 1..=table_size.max(seen) {
                let n = u8::try_from(place)
                    .ok()
                    .and_then(|p| counts.get(&(game.name(), line.bot, p)))
                    .copied()
                    .unwrap_or(0);
                let place = place.to_string();
                gauges
                    .placings
                    .with_label_values(&[name, game.name(), line.bot, place.as_str()])
                    .set(n);
                places.insert((game.name().to_owned(), line.bot.to_owned(), place));
            }
        }
    }
    for line in lines(&s.overall, &league.bots) {
        gauges.set_line(name, OVERALL, &line);
        standings.insert((OVERALL.to_owned(), line.bot.to_owned()));
    }
    for (game, bot) in series.standings.difference(&standings) {
        gauges.remove_line(name, game, bot);
    }
    for (game, bot, place) in series.placings.difference(&places) {
        let _ = gauges
            .placings
            .remove_label_values(&[name, game, bot, place]);
    }
    let shown_games: HashSet<String> = games.iter().map(|(g, _)| g.name().to_owned()).collect();
    for game in series.games.difference(&shown_games) {
        gauges.remove_verdicts(name, game);
    }
    series.standings = standings;
    series.placings = places;
    series.games = shown_games;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::league::service::{Leagues, NotPlayed};
    use crate::league::{PlayedSeat, standings};
    use crate::metrics::tests::value;
    use crate::store::{Store, StoreOperation};

    fn record(bots: &[String], games: &str) -> LeagueRecord {
        let config_toml = format!(
            "name = \"big\"\nseed = 1\nbots = [{}]\n{games}",
            bots.iter()
                .map(|b| format!("\"{b}\""))
                .collect::<Vec<_>>()
                .join(", ")
        );
        LeagueRecord {
            id: 1,
            name: "big".to_owned(),
            config: std::sync::Arc::new(
                crate::league::LeagueConfig::from_toml(&config_toml).unwrap(),
            ),
            config_toml,
            bots: bots.to_vec(),
            status: LeagueStatus::Created,
            created_at_ms: 0,
            total_matches: 0,
            finished_matches: 0,
            playing: 0,
            dice: crate::league::DiceMode::Duplicate,
            seed_source: crate::league::SeedSource::LeagueFile,
            commitment: None,
            secret: crate::store::HeldSecret::none(),
        }
    }

    fn played(results: Vec<PlayedMatch>) -> Arc<Played> {
        Arc::new(Played {
            standings: standings(&results),
            results,
            forfeits: Default::default(),
        })
    }

    /// A Schocken match of three seats, placed in seat order.
    fn schocken(ordinal: u32, bots: [&str; 3]) -> PlayedMatch {
        PlayedMatch {
            ordinal,
            game: Game::Schocken,
            set: ordinal,
            rounds: 0,
            seats: bots
                .iter()
                .enumerate()
                .map(|(i, bot)| PlayedSeat {
                    bot: (*bot).to_owned(),
                    place: i as u8 + 1,
                    chips: None,
                    adjusted: None,
                })
                .collect(),
        }
    }

    fn bots_in(text: &str, metric: &str, game: &str) -> Vec<(String, f64)> {
        let prefix = format!("knobel_{metric}{{bot=\"");
        let game = format!("\",game=\"{game}\",league=\"big\"}} ");
        text.lines()
            .filter_map(|line| {
                let (bot, value) = line.strip_prefix(&prefix)?.split_once(game.as_str())?;
                Some((bot.to_owned(), value.parse().ok()?))
            })
            .collect()
    }

    /// The league snapshot of a store of its own that counts its failures under
    /// `league_snapshot`, as `serve` takes it; the league operations; and the store, to
    /// close it.
    async fn counted_snapshots(
        metrics: &Metrics,
        dir: &std::path::Path,
    ) -> (LeagueSnapshots, Leagues, Store) {
        let url = format!("sqlite://{}", dir.join("knobel.db").display());
        let store = Store::connect(&url).await.unwrap();
        // No league plays here: the snapshot reads the store alone.
        let leagues = Leagues::new(store.clone(), std::sync::Arc::new(NotPlayed));
        let snapshots =
            LeagueSnapshots::new(leagues.counting_errors(metrics, StoreOperation::LeagueSnapshot));
        (snapshots, leagues, store)
    }

    #[tokio::test]
    async fn a_store_failure_of_the_league_snapshot_is_counted_under_its_operation() {
        let dir = tempfile::tempdir().unwrap();
        let metrics = Metrics::default();
        let (snapshots, _, store) = counted_snapshots(&metrics, dir.path()).await;
        let errors = |metrics: &Metrics, operation: &str| {
            let series = format!(r#"knobel_store_errors_total{{operation="{operation}"}}"#);
            value(&metrics.render(), &series)
        };
        snapshots.take().await.unwrap();
        assert_eq!(errors(&metrics, "league_snapshot"), Some(0.0));
        // The database goes away (its pool is closed): the snapshot fails, and is counted.
        store.close().await;
        snapshots.take().await.unwrap_err();
        snapshots.take().await.unwrap_err();
        assert_eq!(errors(&metrics, "league_snapshot"), Some(2.0));
        // ...under its own operation only.
        for operation in StoreOperation::ALL
            .iter()
            .filter(|o| **o != StoreOperation::LeagueSnapshot)
        {
            assert_eq!(
                errors(&metrics, operation.name()),
                Some(0.0),
                "{operation:?}"
            );
        }
    }

    #[tokio::test]
    async fn the_refresh_publishes_the_league_series_only_when_they_changed() {
        let dir = tempfile::tempdir().unwrap();
        let metrics = Metrics::default();
        let (snapshots, leagues, store) = counted_snapshots(&metrics, dir.path()).await;
        for (i, bot) in ["ada", "bert", "crook"].into_iter().enumerate() {
            store.add_bot(bot, &format!("{i:064}")).await.unwrap();
        }
        let gauges = metrics.leagues().unwrap();
        let mut shown = HashMap::new();
        let apply = async |shown: &mut HashMap<String, Shown>| {
            apply_snapshot(gauges, &snapshots.take().await.unwrap(), shown)
        };
        assert!(!apply(&mut shown).await);
        leagues
            .create(
                "name = \"big\"\nseed = 1\nbots = [\"ada\", \"bert\", \"crook\"]\n\
                 [games.schocken]\ntable_size = 3\n",
            )
            .await
            .unwrap();
        // A new league: its series are set, to be published.
        assert!(apply(&mut shown).await);
        // Nothing happened since: nothing to publish again.
        assert!(!apply(&mut shown).await);
        assert!(!apply(&mut shown).await);
        // It starts: its status series change.
        leagues.start("big").await.unwrap();
        assert!(apply(&mut shown).await);
        assert!(!apply(&mut shown).await);
        let series = r#"knobel_league_status{league="big",status="running"} 1"#;
        assert!(metrics.render().contains(series));
        // Another arena on the database leads: this one exports no league series.
        let mut follower = snapshots.take().await.unwrap();
        follower.lead = false;
        assert!(apply_snapshot(gauges, &follower, &mut shown));
        assert!(
            !metrics.render().contains("league=\"big\""),
            "{}",
            metrics.render()
        );
        assert!(!apply_snapshot(gauges, &follower, &mut shown));
        // It leads again (the lead arena went away): the series are back.
        assert!(apply(&mut shown).await);
        assert!(metrics.render().contains(series));
        store.close().await;
    }

    #[test]
    fn a_scrape_serves_the_league_series_as_last_published() {
        let metrics = Metrics::default();
        let gauges = metrics.leagues().unwrap();
        let bots: Vec<String> = ["ada", "bert", "crook"].map(str::to_owned).to_vec();
        let league = record(&bots, "[games.schocken]\ntable_size = 3\n");
        let mut shown = Shown::default();
        set_standings(gauges, "big", &league, &played(Vec::new()), &mut shown);
        let scraped = |metrics: &Metrics| String::from_utf8(metrics.scrape().to_vec()).unwrap();
        // Set, not yet published: a scrape does not render them...
        let text = scraped(&metrics);
        assert!(!text.contains("league=\"big\""), "{text}");
        assert!(text.contains("knobel_build_info"), "{text}");
        // ...(render does, as they are now).
        assert!(metrics.render().contains("league=\"big\""));
        gauges.publish();
        let text = scraped(&metrics);
        let series = r#"knobel_league_rank{bot="ada",game="schocken",league="big"}"#;
        assert_eq!(value(&text, series), Some(1.0), "{text}");
        // The arena's own series stay live.
        metrics.match_started(Game::Schocken);
        let started = r#"knobel_matches_started_total{game="schocken"}"#;
        assert_eq!(value(&scraped(&metrics), started), Some(1.0));
    }

    #[test]
    fn a_created_league_has_every_entrants_series_at_their_initial_values() {
        let metrics = Metrics::default();
        let gauges = metrics.leagues().unwrap();
        let bots: Vec<String> = ["ada", "bert", "crook"].map(str::to_owned).to_vec();
        let league = record(
            &bots,
            "[games.schocken]\ntable_size = 3\n[games.zokken]\ntable_size = 2\n",
        );
        let mut shown = Shown::default();
        set_standings(gauges, "big", &league, &played(Vec::new()), &mut shown);
        let text = metrics.render();
        let initial = Rating::default();
        for game in ["schocken", "zokken", "overall"] {
            for (rank, bot) in bots.iter().enumerate() {
                let labels = format!(r#"{{bot="{bot}",game="{game}",league="big"}}"#);
                let get = |metric: &str| value(&text, &format!("knobel_{metric}{labels}"));
                assert_eq!(get("league_rating_mu"), Some(initial.mu), "{labels}");
                assert_eq!(get("league_rating_sigma"), Some(initial.sigma));
                assert_eq!(
                    get("league_rating_conservative"),
                    Some(initial.conservative())
                );
                assert_eq!(get("league_bot_matches"), Some(0.0));
                // By name, as the standings break ties.
                assert_eq!(get("league_rank"), Some(rank as f64 + 1.0));
                // No mean of no matches.
                assert_eq!(get("league_mean_place"), None);
            }
        }
        for (game, places) in [("schocken", 3), ("zokken", 2)] {
            for bot in &bots {
                for place in 1..=places {
                    let series = format!(
                        r#"knobel_league_placings{{bot="{bot}",game="{game}",league="big",place="{place}"}}"#
                    );
                    assert_eq!(value(&text, &series), Some(0.0), "{series}\n{text}");
                }
                let beyond = format!(
                    r#"knobel_league_placings{{bot="{bot}",game="{game}",league="big",place="{}"}}"#,
                    places + 1
                );
                assert_eq!(value(&text, &beyond), None);
            }
        }
        assert!(
            bots_in(&text, "league_rank", "sjokken").is_empty(),
            "not its game"
        );
    }

    #[test]
    fn each_game_counts_its_neighbours_by_verdict_and_says_whether_it_is_settled() {
        let metrics = Metrics::default();
        let gauges = metrics.leagues().unwrap();
        let bots: Vec<String> = ["ada", "bert", "crook"].map(str::to_owned).to_vec();
        let league = record(
            &bots,
            "[games.schocken]\ntable_size = 3\n[games.zokken]\ntable_size = 2\n",
        );
        // Schocken: ada, bert and crook place in that order in every set, and their adjusted
        // scores (0.1 or 0.2 apart) say so too; Zokken has no results.
        let results: Vec<PlayedMatch> = (0..40)
            .map(|i| {
                let mut m = schocken(i, ["ada", "bert", "crook"]);
                let luck = [0.0, 0.1][i as usize % 2];
                for (seat, adjusted) in m.seats.iter_mut().zip([0.1, 0.4, 0.9]) {
                    seat.adjusted = Some(adjusted + luck);
                }
                m
            })
            .collect();
        let mut shown = Shown::default();
        set_standings(gauges, "big", &league, &played(results.clone()), &mut shown);
        let text = metrics.render();
        let pairs = |game: &str, verdict: &str| {
            let series = format!(
                r#"knobel_league_neighbours{{game="{game}",league="big",verdict="{verdict}"}}"#
            );
            value(&text, &series)
        };
        let settled = |game: &str| {
            value(
                &text,
                &format!(r#"knobel_league_settled{{game="{game}",league="big"}}"#),
            )
        };
        assert_eq!(pairs("schocken", "separated"), Some(2.0), "{text}");
        assert_eq!(pairs("schocken", "equivalent"), Some(0.0));
        assert_eq!(pairs("schocken", "open"), Some(0.0));
        assert_eq!(settled("schocken"), Some(1.0));
        // A game without results: no pairs, not settled.
        for verdict in ["separated", "equivalent", "open"] {
            assert_eq!(pairs("zokken", verdict), Some(0.0), "{verdict}");
        }
        assert_eq!(settled("zokken"), Some(0.0));
        // Overall has no verdicts, and no game outside the league has series.
        assert_eq!(settled("overall"), None);
        assert_eq!(settled("sjokken"), None);

        // Fewer sets than a verdict needs: both pairs open, not settled.
        set_standings(
            gauges,
            "big",
            &league,
            &played(results[..4].to_vec()),
            &mut shown,
        );
        let text = metrics.render();
        let series = r#"knobel_league_neighbours{game="schocken",league="big",verdict="open"}"#;
        assert_eq!(value(&text, series), Some(2.0), "{text}");
        let series = r#"knobel_league_settled{game="schocken",league="big"}"#;
        assert_eq!(value(&text, series), Some(0.0));

        gauges.forget("big", &shown);
        let text = metrics.render();
        assert!(!text.contains("league=\"big\""), "{text}");
    }

    #[test]
    fn a_league_of_more_bots_than_the_cap_shows_the_best_in_the_standings_order() {
        let metrics = Metrics::default();
        let gauges = metrics.leagues().unwrap();
        let bots: Vec<String> = (0..256).map(|i| format!("bot-{i:03}")).collect();
        let league = record(&bots, "[games.schocken]\ntable_size = 3\n");
        // Three bots have played: bot-255 won, bot-254 came second, bot-253 lost.
        let results = vec![schocken(0, ["bot-255", "bot-254", "bot-253"])];
        let first = played(results.clone());
        let mut shown = Shown::default();
        set_standings(gauges, "big", &league, &first, &mut shown);
        let text = metrics.render();
        for game in ["schocken", "overall"] {
            for metric in [
                "league_rank",
                "league_rating_mu",
                "league_rating_sigma",
                "league_rating_conservative",
                "league_bot_matches",
            ] {
                assert_eq!(
                    bots_in(&text, metric, game).len(),
                    MAX_BOT_LABELS,
                    "{metric}"
                );
            }
            let mut ranks = bots_in(&text, "league_rank", game);
            ranks.sort_by(|a, b| a.1.total_cmp(&b.1));
            let order: Vec<&str> = ranks.iter().map(|(bot, _)| bot.as_str()).collect();
            // The standings' order first, then the bots yet to play by name.
            let ranked = if game == "overall" {
                &first.standings.overall
            } else {
                &first.standings.games[0].bots
            };
            let expected: Vec<&str> = ranked
                .iter()
                .map(|b| b.bot.as_str())
                .chain(bots.iter().map(String::as_str).filter(|b| *b < "bot-253"))
                .take(MAX_BOT_LABELS)
                .collect();
            assert_eq!(order, expected, "{game}");
            assert_eq!(order[..3], ["bot-255", "bot-254", "bot-253"]);
            let ranks: Vec<f64> = ranks.iter().map(|(_, rank)| *rank).collect();
            assert_eq!(
                ranks,
                (1..=MAX_BOT_LABELS).map(|r| r as f64).collect::<Vec<_>>()
            );
        }
        assert_eq!(
            bots_in(&text, "league_mean_place", "schocken"),
            [
                ("bot-253".to_owned(), 3.0),
                ("bot-254".to_owned(), 2.0),
                ("bot-255".to_owned(), 1.0)
            ]
        );
        assert_eq!(
            bots_in(&text, "league_loss_ratio", "schocken"),
            [
                ("bot-253".to_owned(), 1.0),
                ("bot-254".to_owned(), 0.0),
                ("bot-255".to_owned(), 0.0)
            ]
        );
        let placings = text
            .lines()
            .filter(|l| l.starts_with("knobel_league_placings{"))
            .count();
        assert_eq!(
            placings,
            MAX_BOT_LABELS * 3,
            "three places each, capped bots only"
        );
        assert!(!text.contains("bot-199\""), "rank 201: left out");

        // Three bots beyond the cap play: they enter, and the last three of the bots yet to
        // play leave, every one of their series with them.
        let mut more = results;
        more.push(schocken(1, ["bot-250", "bot-251", "bot-252"]));
        set_standings(gauges, "big", &league, &played(more), &mut shown);
        let text = metrics.render();
        assert!(text.contains("bot-250\""));
        assert!(text.contains("bot-193\""));
        for gone in ["bot-194\"", "bot-196\""] {
            assert!(!text.contains(gone), "{gone} in {text}");
        }
        for metric in ["league_rank", "league_rating_mu", "league_bot_matches"] {
            assert_eq!(bots_in(&text, metric, "schocken").len(), MAX_BOT_LABELS);
        }
        let placings = text
            .lines()
            .filter(|l| l.starts_with("knobel_league_placings{"))
            .count();
        assert_eq!(placings, MAX_BOT_LABELS * 3);

        gauges.forget("big", &shown);
        assert!(!metrics.render().contains("league=\"big\""));
    }
}
