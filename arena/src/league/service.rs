//! The league RPCs: Admin's CreateLeague, StartLeague, PauseLeague and CancelLeague, and the
//! read-only GetStandings and ListLeagues; and the one place league types become wire types.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use knobel_proto::v1 as pb;
use tonic::Status;
use tracing::info;

use super::confidence::Bounds;
use super::scheduler::Scheduler;
use super::settle::{PairVerdict, Stop};
use super::standings::{
    BotStanding, GameStandings, Interval, Neighbours, PairComparison, ScoreBasis, Standings,
};
use super::{LeagueConfig, LeagueDice, PlayedMatch, expand, standings_with};
use crate::store::{
    LeagueRecord, LeagueStatus, NewLeague, Store, StoreError, StoreObserver, StoreOperation,
};

/// How old a running league's standings may be for the web pages and the metrics
/// ([`Leagues::league_standings_within`]): computing them reads every result of the league,
/// so a large league's are computed again at most this often, for all of them together.
pub const RUNNING_STANDINGS_MAX_AGE: Duration = Duration::from_secs(5);

/// A running league's standings that took long to compute are computed again at most once
/// per this many times the time they took (and [`RUNNING_STANDINGS_MAX_AGE`]), however
/// often pages or the metrics ask: computing them takes at most a twentieth of the time,
/// however many results the league has stored.
pub const STANDINGS_AGE_PER_COMPUTE: u32 = 20;

/// A league with its progress, results and standings ([`Leagues::league_standings`]).
#[derive(Clone, Debug)]
pub struct LeagueView {
    /// The stored league.
    pub record: LeagueRecord,
    /// Its progress as ListLeagues shows it (live progress included).
    pub info: pb::LeagueInfo,
    /// Its results and what is computed from them.
    pub played: Arc<Played>,
}

/// A league's results and what is computed from them: they change only when another of
/// its matches finishes, so they are kept per league until then.
#[derive(Debug)]
pub struct Played {
    /// Its finished matches, in schedule order.
    pub results: Vec<PlayedMatch>,
    /// The standings computed from them.
    pub standings: Standings,
    /// Forfeited seats in them.
    pub forfeits: Forfeits,
}

/// A league's results as last read ([`Leagues::league_standings_within`]).
#[derive(Debug)]
struct Kept {
    /// Matches finished and the status when they were read.
    finished: u64,
    status: LeagueStatus,
    /// When.
    at: Instant,
    /// How long reading and computing them took.
    took: Duration,
    /// Whether a caller is reading them again.
    refreshing: bool,
    played: Arc<Played>,
}

impl Kept {
    /// Whether these standings are young enough for a caller that takes them up to
    /// `max_age` old: `max_age` (none if zero), or [`STANDINGS_AGE_PER_COMPUTE`] times what
    /// they took to compute if that is more.
    fn young_enough(&self, max_age: Duration) -> bool {
        max_age > Duration::ZERO
            && self.at.elapsed() < max_age.max(self.took * STANDINGS_AGE_PER_COMPUTE)
    }
}

/// Clears the `refreshing` mark of a league's kept results when dropped.
struct Refreshing<'a> {
    cache: &'a Mutex<HashMap<i64, Kept>>,
    league: i64,
}

impl Drop for Refreshing<'_> {
    fn drop(&mut self) {
        if let Ok(mut cache) = self.cache.lock()
            && let Some(kept) = cache.get_mut(&self.league)
        {
            kept.refreshing = false;
        }
    }
}

/// Forfeited seats per (game, or `None` for all games, bot).
pub type Forfeits = HashMap<(Option<knobel_engine::Game>, String), u64>;

/// The largest league file accepted, in bytes.
pub const MAX_CONFIG_BYTES: usize = 64 * 1024;

/// The league operations of one arena.
#[derive(Clone)]
pub struct Leagues {
    store: Store,
    scheduler: Arc<Scheduler>,
    /// Maps a store failure to a status (the server's: it logs and counts it).
    failed: fn(StoreError) -> Status,
    /// Per league id: its results as last read, and what was computed from them.
    played: Arc<Mutex<HashMap<i64, Kept>>>,
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

/// When the league of file `config_toml` ends, and its budget: as its file says (a stored
/// file always reads; a fixed league without a budget if not).
fn stop_rule(config_toml: &str) -> (Stop, Option<u32>) {
    LeagueConfig::from_toml(config_toml).map_or((Stop::Fixed, None), |c| (c.stop, c.budget))
}

fn no_league(name: &str) -> Status {
    Status::not_found(format!(
        "no league named {}: `knobel league list` (the ListLeagues RPC) lists the leagues",
        knobel_engine::quoted(name)
    ))
}

/// Standings as the wire carries them.
pub fn wire_standings(league: pb::LeagueInfo, s: &Standings) -> pb::GetStandingsResponse {
    pb::GetStandingsResponse {
        league: Some(league),
        games: s.games.iter().map(wire_game).collect(),
        overall: s.overall.iter().map(wire_bot).collect(),
    }
}

impl Leagues {
    /// League operations on `store`, with `scheduler`'s live progress; `failed` turns a
    /// store error into the status a client gets.
    pub fn new(
        store: Store,
        scheduler: Arc<Scheduler>,
        failed: fn(StoreError) -> Status,
    ) -> Leagues {
        Leagues {
            store,
            scheduler,
            failed,
            played: Arc::default(),
        }
    }

    /// These league operations with their store calls that fail because the database is
    /// unavailable counted under `operation` (see [`Store::counting_errors`]); the kept
    /// standings are shared with `self`.
    pub fn counting_errors<O: StoreObserver + Clone>(
        &self,
        observer: &O,
        operation: StoreOperation,
    ) -> Leagues {
        Leagues {
            store: self.store.clone().counting_errors(observer, operation),
            ..self.clone()
        }
    }

    /// The league as ListLeagues and GetStandings show it: the stored record with this
    /// arena's live progress.
    pub fn info(&self, league: &LeagueRecord) -> pb::LeagueInfo {
        let live = self.scheduler.progress(league.id);
        let (stop, budget) = stop_rule(&league.config_toml);
        pb::LeagueInfo {
            name: league.name.clone(),
            status: wire_status(league.status) as i32,
            bots: league.bots.clone(),
            total_matches: league.total_matches as u32,
            finished_matches: league.finished_matches as u32,
            playing: live.playing as u32,
            waiting_for: live.waiting_for,
            waiting_for_connected: live.waiting_for_connected,
            created_unix_ms: league.created_at_ms.max(0) as u64,
            dice: league.dice.as_str().to_owned(),
            public_dice: league.seed_source.is_public(),
            dice_commitment: league.commitment.clone().unwrap_or_default(),
            dice_secret: league
                .revealed_secret()
                .map(|s| s.to_hex())
                .unwrap_or_default(),
            stop: stop.name().to_owned(),
            budget,
        }
    }

    async fn find(&self, name: &str) -> Result<LeagueRecord, Status> {
        self.store
            .league(name)
            .await
            .map_err(self.failed)?
            .ok_or_else(|| no_league(name))
    }

    /// CreateLeague.
    pub async fn create(&self, config_toml: &str) -> Result<pb::LeagueInfo, Status> {
        if config_toml.len() > MAX_CONFIG_BYTES {
            return Err(Status::invalid_argument(format!(
                "the league file has {} bytes: a league file has at most {MAX_CONFIG_BYTES} \
                 bytes (64 KiB)",
                config_toml.len()
            )));
        }
        let config = LeagueConfig::from_toml(config_toml)
            .map_err(|e| Status::invalid_argument(format!("league file: {e}")))?;
        let registered: Vec<String> = self
            .store
            .list_bots()
            .await
            .map_err(self.failed)?
            .into_iter()
            .filter(|b| !b.is_revoked())
            .map(|b| b.name)
            .collect();
        let bots = config
            .resolve_bots(&registered)
            .map_err(|e| Status::invalid_argument(format!("league file: {e}")))?;
        // A balanced design may take a second to find (docs/leagues.md, "Schedule"): off the
        // async threads.
        let (dice, seed_source) = LeagueDice::for_config(&config);
        let (config, bots, schedule, dice) = blocking(move || {
            let schedule = expand(&config, &bots, &dice);
            (config, bots, schedule, dice)
        })
        .await;
        let schedule = schedule.map_err(|e| Status::invalid_argument(e.to_string()))?;
        config
            .check_budget(schedule.len() as u128)
            .map_err(|e| Status::invalid_argument(format!("league file: {e}")))?;
        let new = NewLeague {
            name: &config.name,
            config_toml,
            bots: &bots,
            schedule: &schedule,
            dice: &dice,
            seed_source,
        };
        let league = match self.store.create_league(&new).await {
            Ok(league) => league,
            Err(error @ StoreError::LeagueExists { .. }) => {
                return Err(Status::already_exists(error.to_string()));
            }
            Err(error) => return Err((self.failed)(error)),
        };
        info!(league = %league.name, matches = league.total_matches, bots = ?league.bots, "league created");
        Ok(self.info(&league))
    }

    /// StartLeague, PauseLeague, CancelLeague: moves league `name` to `to` from one of
    /// `from`.
    pub async fn transition(
        &self,
        name: &str,
        from: &[LeagueStatus],
        to: LeagueStatus,
    ) -> Result<pb::LeagueInfo, Status> {
        let league = self.find(name).await?;
        if league.status != to {
            if !from.contains(&league.status) {
                let legal: Vec<&str> = from.iter().map(|s| s.as_str()).collect();
                return Err(Status::failed_precondition(format!(
                    "league {name:?} is {}: it can become {to} only when {}",
                    league.status,
                    legal.join(" or ")
                )));
            }
            self.store
                .set_league_status(name, from, to)
                .await
                .map_err(self.failed)?;
            info!(league = %name, from = %league.status, to = %to, "league status changed");
        }
        let league = self.find(name).await?;
        Ok(self.info(&league))
    }

    /// StartLeague.
    pub async fn start(&self, name: &str) -> Result<pb::LeagueInfo, Status> {
        let league = self
            .transition(
                name,
                &[LeagueStatus::Created, LeagueStatus::Paused],
                LeagueStatus::Running,
            )
            .await?;
        self.scheduler.wake();
        Ok(league)
    }

    /// PauseLeague.
    pub async fn pause(&self, name: &str) -> Result<pb::LeagueInfo, Status> {
        self.transition(name, &[LeagueStatus::Running], LeagueStatus::Paused)
            .await
    }

    /// CancelLeague.
    pub async fn cancel(&self, name: &str) -> Result<pb::LeagueInfo, Status> {
        self.transition(
            name,
            &[
                LeagueStatus::Created,
                LeagueStatus::Running,
                LeagueStatus::Paused,
            ],
            LeagueStatus::Cancelled,
        )
        .await
    }

    /// League `name` with its results and standings (`None` if there is no such league):
    /// what GetStandings serves. The results are read and the standings computed again only
    /// once another match of the league has finished.
    pub async fn league_standings(&self, name: &str) -> Result<Option<LeagueView>, StoreError> {
        self.league_standings_within(name, Duration::ZERO).await
    }

    /// [`Leagues::league_standings`], where standings computed less than `max_age` ago do
    /// for a league that is still in the same status although more of its matches have
    /// finished since (the web pages: a running league's standings are computed again at
    /// most once per `max_age`, however many pages ask). While they are computed again,
    /// other callers get the previous ones.
    pub async fn league_standings_within(
        &self,
        name: &str,
        max_age: Duration,
    ) -> Result<Option<LeagueView>, StoreError> {
        let Some(record) = self.store.league(name).await? else {
            return Ok(None);
        };
        self.standings_of(record, max_age).await.map(Some)
    }

    /// [`Leagues::league_standings_within`] for the league of `record`, as just read (the
    /// metrics' refresh reads every league at once).
    pub async fn standings_of(
        &self,
        record: LeagueRecord,
        max_age: Duration,
    ) -> Result<LeagueView, StoreError> {
        let known = {
            let mut cache = self.played.lock().expect("standings lock");
            match cache.get_mut(&record.id) {
                Some(kept) if kept.status == record.status => {
                    let exact = kept.finished == record.finished_matches;
                    if exact
                        || kept.young_enough(max_age)
                        || (max_age > Duration::ZERO && kept.refreshing)
                    {
                        Some(kept.played.clone())
                    } else {
                        // The pages wait for this caller's standings; GetStandings
                        // computes its own.
                        kept.refreshing |= max_age > Duration::ZERO;
                        None
                    }
                }
                _ => None,
            }
        };
        let played = match known {
            Some(played) => played,
            None => {
                // However this ends (a failure, or a page whose client went away dropping
                // it mid-way), the next caller may compute them again.
                let _refreshing = (max_age > Duration::ZERO).then_some(Refreshing {
                    cache: &self.played,
                    league: record.id,
                });
                let started = Instant::now();
                let played = self.compute(&record).await?;
                self.played.lock().expect("standings lock").insert(
                    record.id,
                    Kept {
                        finished: record.finished_matches,
                        status: record.status,
                        at: Instant::now(),
                        took: started.elapsed(),
                        refreshing: false,
                        played: played.clone(),
                    },
                );
                played
            }
        };
        Ok(LeagueView {
            info: self.info(&record),
            record,
            played,
        })
    }

    /// The results of `league`, its standings and forfeits, read and computed.
    async fn compute(&self, league: &LeagueRecord) -> Result<Arc<Played>, StoreError> {
        let results = self.store.league_results(league.id).await?;
        let forfeits = self.forfeits(league.id).await?;
        // Thousands of results take a while: off the runtime's workers, which referee
        // the matches meanwhile.
        // The league file's margins (a stored file always reads; the defaults if not).
        let margins = LeagueConfig::from_toml(&league.config_toml)
            .map(|c| c.margins())
            .unwrap_or_default();
        let (standings, results) =
            blocking(move || (standings_with(&results, &margins), results)).await;
        Ok(Arc::new(Played {
            standings,
            results,
            forfeits,
        }))
    }

    /// Every league with its progress: what ListLeagues serves.
    pub async fn leagues(&self) -> Result<Vec<(LeagueRecord, pb::LeagueInfo)>, StoreError> {
        let leagues = self.store.list_leagues().await?;
        Ok(leagues
            .into_iter()
            .map(|l| {
                let info = self.info(&l);
                (l, info)
            })
            .collect())
    }

    /// Forfeits in league `league_id`'s finished matches, per game and bot (the standings
    /// pages show them beside the standings).
    async fn forfeits(&self, league_id: i64) -> Result<Forfeits, StoreError> {
        let mut forfeits = Forfeits::new();
        for (game, bot, count) in self.store.league_forfeits(league_id).await? {
            *forfeits.entry((Some(game), bot.clone())).or_default() += count;
            *forfeits.entry((None, bot)).or_default() += count;
        }
        Ok(forfeits)
    }

    /// GetStandings.
    pub async fn standings(&self, name: &str) -> Result<pb::GetStandingsResponse, Status> {
        let view = self
            .league_standings(name)
            .await
            .map_err(self.failed)?
            .ok_or_else(|| no_league(name))?;
        Ok(wire_standings(view.info, &view.played.standings))
    }

    /// ListLeagues.
    pub async fn list(&self) -> Result<pb::ListLeaguesResponse, Status> {
        let leagues = self.leagues().await.map_err(self.failed)?;
        Ok(pb::ListLeaguesResponse {
            leagues: leagues.into_iter().map(|(_, info)| info).collect(),
        })
    }
}

/// Runs `work` on a blocking thread, off the runtime's workers; a panic in it goes on here.
async fn blocking<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
    match tokio::task::spawn_blocking(work).await {
        Ok(done) => done,
        Err(panicked) => std::panic::resume_unwind(panicked.into_panic()),
    }
}

impl Leagues {
    /// The archive's first line of league `name`, which must have ended (ExportLeague).
    pub async fn archive_header(&self, name: &str) -> Result<(LeagueRecord, String), Status> {
        super::export::header(&self.store, name)
            .await
            .map_err(|e| match e {
                super::export::ExportError::Store(e) => (self.failed)(e),
                e @ super::export::ExportError::NoLeague { .. } => Status::not_found(e.to_string()),
                e @ super::export::ExportError::NotEnded { .. } => {
                    Status::failed_precondition(e.to_string())
                }
            })
    }

    /// The archive's match lines of `league` from ordinal `from` on (see
    /// [`super::export::page`]).
    pub async fn archive_page(
        &self,
        league: &LeagueRecord,
        from: u32,
    ) -> Result<Vec<String>, StoreError> {
        super::export::page(&self.store, league, from).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::league::PlayedSeat;
    use knobel_engine::Game;

    fn kept(age: Duration, took: Duration) -> Kept {
        Kept {
            finished: 0,
            status: LeagueStatus::Running,
            at: Instant::now() - age,
            took,
            refreshing: false,
            played: Arc::new(Played {
                results: Vec::new(),
                standings: crate::league::standings(&[]),
                forfeits: Forfeits::new(),
            }),
        }
    }

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

    #[test]
    fn the_stop_rule_is_read_from_the_league_file() {
        let file = "name = \"x\"\nbots = [\"a\", \"b\"]\nstop = \"settled\"\nbudget = 40\n\
                    repetitions = 100\n[games.zokken]\n";
        assert_eq!(stop_rule(file), (Stop::Settled, Some(40)));
        let fixed = "name = \"x\"\nbots = [\"a\", \"b\"]\n[games.zokken]\n";
        assert_eq!(stop_rule(fixed), (Stop::Fixed, None));
    }

    #[test]
    fn standings_that_took_long_are_kept_longer() {
        let max_age = RUNNING_STANDINGS_MAX_AGE;
        let quick = Duration::from_millis(10);
        // Quickly computed: young for `max_age`.
        assert!(kept(Duration::from_secs(1), quick).young_enough(max_age));
        assert!(!kept(max_age + Duration::from_secs(1), quick).young_enough(max_age));
        // Computed in a second: young for twenty.
        let slow = Duration::from_secs(1);
        assert!(kept(Duration::from_secs(19), slow).young_enough(max_age));
        assert!(!kept(Duration::from_secs(21), slow).young_enough(max_age));
        // Never for a caller that wants them exact.
        assert!(!kept(Duration::ZERO, slow).young_enough(Duration::ZERO));
    }
}
