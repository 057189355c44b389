//! Leagues and their schedules (`leagues`, `league_matches`; migration 0008).
//!
//! A league's schedule is stored once, when the league is created. An arena plays a league
//! match by claiming it ([`Store::claim_league_match`]: the row is taken for one match id,
//! atomically, so two arenas on one database never play it both) and recording its end as
//! [`MatchWrite::FinishLeague`](super::MatchWrite::FinishLeague), which marks the league match
//! finished in the same transaction as the result. A claim whose match was aborted (the arena
//! stopped or crashed and its orphaned match was aborted), or whose match never started, can
//! be claimed again: the match is played again (each attempt its own seed with independent dice), and a result is counted
//! once.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use knobel_engine::{Game, Rules};

use super::league_schedule::{InsertSchedule, ScheduleRows, league_creation_timeout};
use super::{Store, StoreError, now_ms};
use knobel_league::{
    DiceMode, LeagueConfig, LeagueDice, LeagueSecret, PlayedMatch, PlayedSeat, ScheduledMatch,
    SeedSource,
};

/// How long a claim whose match row never appeared holds (the arena that claimed it stopped
/// between the claim and the match's start), in milliseconds.
pub const UNSTARTED_CLAIM_MS: i64 = 60_000;

/// Where a league stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LeagueStatus {
    /// Created, not started.
    Created,
    /// Its matches are being played.
    Running,
    /// Started, and paused: no new matches start.
    Paused,
    /// Cancelled: no new matches start, ever.
    Cancelled,
    /// Every scheduled match has a result.
    Finished,
}

impl LeagueStatus {
    /// Every status.
    pub const ALL: [LeagueStatus; 5] = [
        LeagueStatus::Created,
        LeagueStatus::Running,
        LeagueStatus::Paused,
        LeagueStatus::Cancelled,
        LeagueStatus::Finished,
    ];

    /// Finished or cancelled: no new match of the league starts (one already running may
    /// still play on: [`LeagueRecord::has_ended`]).
    pub fn is_over(self) -> bool {
        matches!(self, LeagueStatus::Finished | LeagueStatus::Cancelled)
    }

    /// The name stored and shown.
    pub fn as_str(self) -> &'static str {
        match self {
            LeagueStatus::Created => "created",
            LeagueStatus::Running => "running",
            LeagueStatus::Paused => "paused",
            LeagueStatus::Cancelled => "cancelled",
            LeagueStatus::Finished => "finished",
        }
    }
}

impl fmt::Display for LeagueStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for LeagueStatus {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s {
            "created" => LeagueStatus::Created,
            "running" => LeagueStatus::Running,
            "paused" => LeagueStatus::Paused,
            "cancelled" => LeagueStatus::Cancelled,
            "finished" => LeagueStatus::Finished,
            other => return Err(format!("unknown league status {other:?}")),
        })
    }
}

/// A league to create.
#[derive(Debug, Clone)]
pub struct NewLeague<'a> {
    /// Its unique name.
    pub name: &'a str,
    /// The league file as given.
    pub config_toml: &'a str,
    /// The bots it resolved to.
    pub bots: &'a [String],
    /// Its schedule ([`knobel_league::expand`]).
    pub schedule: &'a [ScheduledMatch],
    /// The dice its schedule was expanded with.
    pub dice: &'a LeagueDice,
    /// Where the dice secret came from.
    pub seed_source: SeedSource,
}

/// A stored league.
#[derive(Debug, Clone, PartialEq)]
pub struct LeagueRecord {
    /// Its id.
    pub id: i64,
    /// Its name.
    pub name: String,
    /// The league file as given.
    pub config_toml: String,
    /// The league file, read once by the store: a stored file was checked when the league
    /// was created, and one that no longer reads is [`StoreError::Corrupt`], naming it.
    pub config: Arc<LeagueConfig>,
    /// Its bots.
    pub bots: Vec<String>,
    /// Where it stands.
    pub status: LeagueStatus,
    /// When it was created, unix milliseconds.
    pub created_at_ms: i64,
    /// Matches scheduled.
    pub total_matches: u64,
    /// Matches with a result.
    pub finished_matches: u64,
    /// Its matches in play now, in any arena on this database: claimed, their match
    /// running or about to start (its seats being reserved). What every arena shows as the
    /// league's progress and counts towards its concurrency; while any is in play the league
    /// has not ended, even once cancelled.
    pub playing: u64,
    /// Independent dice or duplicate sets.
    pub dice: DiceMode,
    /// Where its dice secret came from ([`SeedSource::is_public`]: public dice).
    pub seed_source: SeedSource,
    /// The commitment to its dice secret published at creation (`None` for a legacy league).
    pub commitment: Option<String>,
    /// Its dice secret (none for a legacy league). Never shown while the league may still
    /// play: see [`LeagueRecord::revealed_secret`].
    pub secret: HeldSecret,
}

/// A league's dice secret as the store holds it: readable only through
/// [`LeagueRecord::revealed_secret`] (once the league has ended) and the store's own paths
/// that play its matches; outside the store one can only make an empty one.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HeldSecret(Option<LeagueSecret>);

impl HeldSecret {
    /// No secret: a legacy league's, or a record made outside the store (tests).
    pub fn none() -> HeldSecret {
        HeldSecret(None)
    }
}

impl LeagueRecord {
    /// Whether the league has ended: finished, or cancelled with none of its matches still
    /// in play (a cancelled league's running matches play on). Only then are its secret
    /// and its logs shown: a match still playing must not have its dice told.
    pub fn has_ended(&self) -> bool {
        self.status.is_over() && self.playing == 0
    }

    /// The dice secret, once the league has ended; `None` before (and for a legacy league).
    pub fn revealed_secret(&self) -> Option<&LeagueSecret> {
        self.secret.0.as_ref().filter(|_| self.has_ended())
    }

    /// What every view of the league shows of its dice: the commitment and, once the league
    /// has ended, the secret in hex (each empty where there is none).
    pub fn shown_dice(&self) -> (String, String) {
        let secret = self.revealed_secret().map(|s| s.to_hex());
        (
            self.commitment.clone().unwrap_or_default(),
            secret.unwrap_or_default(),
        )
    }

    /// The league's dice, for the arena that plays it (`None` for a legacy league, whose
    /// stored seeds are played as they are).
    pub fn dice(&self) -> Option<LeagueDice> {
        self.secret.0.clone().map(|secret| LeagueDice {
            secret,
            mode: self.dice,
        })
    }
}

/// A league match that can be claimed: not finished, and not held by a live claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenLeagueMatch {
    /// The league.
    pub league_id: i64,
    /// Its place in the schedule.
    pub ordinal: u32,
    /// The preset its rules start from.
    pub preset: String,
    /// Its rules.
    pub rules: Rules,
    /// Its duplicate set.
    pub set: u32,
    /// Its bots, in seat order.
    pub seats: Vec<String>,
    /// Its seed.
    pub seed: u64,
}

fn corrupt(what: String) -> StoreError {
    StoreError::Corrupt { what }
}

/// A league result row: ordinal, game, set, rules JSON, seat, bot name, place, chips,
/// luck-adjusted score.
type ResultRow = (
    i32,
    String,
    i32,
    String,
    i32,
    String,
    i32,
    Option<i64>,
    Option<f64>,
);

type LeagueRow = (
    i64,
    String,
    String,
    String,
    String,
    i64,
    i64,
    i64,
    String,
    String,
    Option<String>,
    Option<String>,
    i64,
);

/// The stored file of league `name`, read (what it was checked to be at creation).
fn stored_config(name: &str, config_toml: &str) -> Result<Arc<LeagueConfig>, StoreError> {
    LeagueConfig::from_toml(config_toml)
        .map(Arc::new)
        .map_err(|e| {
            corrupt(format!(
                "league {name:?}: its stored league file does not read: {e}"
            ))
        })
}

fn league_from_row(row: LeagueRow) -> Result<LeagueRecord, StoreError> {
    let (id, name, config_toml, bots_json, status, created_at_ms, total, finished) =
        (row.0, row.1, row.2, row.3, row.4, row.5, row.6, row.7);
    let (dice, seed_source, secret, commitment, playing) = (row.8, row.9, row.10, row.11, row.12);
    let config = stored_config(&name, &config_toml)?;
    let bots = serde_json::from_str(&bots_json).map_err(|e| {
        corrupt(format!(
            "league {name:?}: bots are not a JSON string array: {e}"
        ))
    })?;
    let status = status
        .parse()
        .map_err(|e| corrupt(format!("league {name:?}: {e}")))?;
    let dice = dice
        .parse()
        .map_err(|e| corrupt(format!("league {name:?}: {e}")))?;
    let seed_source = seed_source
        .parse()
        .map_err(|e| corrupt(format!("league {name:?}: {e}")))?;
    let secret = secret
        .map(|s| LeagueSecret::from_hex(&s))
        .transpose()
        .map_err(|e| corrupt(format!("league {name:?}: {e}")))?;
    Ok(LeagueRecord {
        id,
        name,
        config_toml,
        config,
        bots,
        status,
        created_at_ms,
        total_matches: total.max(0) as u64,
        finished_matches: finished.max(0) as u64,
        playing: playing.max(0) as u64,
        dice,
        seed_source,
        commitment,
        secret: HeldSecret(secret),
    })
}

/// Marks league `$1` finished if it is running or paused and no match of it is pending or
/// claimed (the index on (league_id, status, ordinal) answers that without the finished).
pub(crate) const FINISH_LEAGUE: &str = "UPDATE leagues SET status = 'finished' \
     WHERE id = $1 AND status IN ('running', 'paused') AND NOT EXISTS \
     (SELECT 1 FROM league_matches o WHERE o.league_id = $1 \
      AND o.status IN ('pending', 'claimed'))";

/// The columns of a league row, with its count of finished matches: once the league has
/// been started, its scheduled matches less those not finished (pending or claimed), which
/// costs what the league has left to play, not what it has stored (nothing once it is
/// finished); before it starts, counted (there are none: nothing to count). Then its
/// matches in play in any arena ([`in_play_sql`]).
fn league_select(postgres: bool) -> String {
    format!(
        "SELECT l.id, l.name, l.config_toml, l.bots_json, l.status, \
         l.created_at_ms, CAST(l.total_matches AS BIGINT), \
         CASE WHEN l.status = 'created' \
           THEN (SELECT COUNT(*) FROM league_matches f \
                 WHERE f.league_id = l.id AND f.status = 'finished') \
           ELSE CAST(l.total_matches AS BIGINT) - (SELECT COUNT(*) FROM league_matches o \
                 WHERE o.league_id = l.id AND o.status IN ('pending', 'claimed')) END, \
         l.dice, l.seed_source, l.dice_secret, l.dice_commitment, {} \
         FROM leagues l",
        in_play_sql(postgres, "l.id")
    )
}

/// SQL text counting the matches of the league whose id is `league` (a column) in play in
/// any arena: claimed, and running, or not started yet but claimed less than
/// [`UNSTARTED_CLAIM_MS`] ago (its seats are being reserved: it may still start). Such a
/// match keeps its league's secret and logs back even once the league is cancelled.
fn in_play_sql(postgres: bool, league: &str) -> String {
    let now = if postgres {
        db_now_ms_sql!(postgres)
    } else {
        db_now_ms_sql!(sqlite)
    };
    format!(
        "(SELECT COUNT(*) FROM league_matches p LEFT JOIN matches m ON m.id = p.match_id \
          WHERE p.league_id = {league} AND p.status = 'claimed' AND (m.status = 'running' \
          OR (m.id IS NULL AND p.claimed_at_ms > {now} - {UNSTARTED_CLAIM_MS})))"
    )
}

/// The condition under which a league match `lm` may be claimed at `$now` (SQL text: the
/// database's clock, `db_now_ms_sql!`): pending, or claimed for a match that was aborted or, after
/// [`UNSTARTED_CLAIM_MS`], never started.
macro_rules! claimable {
    ($($now:tt)+) => {
        concat!(
            "(lm.status = 'pending' OR (lm.status = 'claimed' AND (\
               EXISTS (SELECT 1 FROM matches m WHERE m.id = lm.match_id AND m.status = 'aborted') \
               OR (NOT EXISTS (SELECT 1 FROM matches m WHERE m.id = lm.match_id) \
                   AND lm.claimed_at_ms < ",
            $($now)+,
            " - 60000))))"
        )
    };
}

/// The context of the errors of [`Store::create_league`].
const CREATING_A_LEAGUE: &str = "creating a league";

/// Inserts the `leagues` row of `new` (with its dice commitment, which names the id) in
/// transaction `tx`; its id. A name that is taken gives [`StoreError::LeagueExists`].
async fn insert_league<'c, DB>(
    tx: &mut sqlx::Transaction<'c, DB>,
    new: &NewLeague<'_>,
    created_at_ms: i64,
) -> Result<i64, StoreError>
where
    DB: sqlx::Database,
    for<'e> &'e mut DB::Connection: sqlx::Executor<'e, Database = DB>,
    for<'q> &'q str: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    for<'q> String: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    for<'q> i64: sqlx::Encode<'q, DB> + sqlx::Type<DB> + sqlx::Decode<'q, DB>,
    for<'q> DB::Arguments: sqlx::IntoArguments<DB>,
    (i64,): for<'r> sqlx::FromRow<'r, DB::Row>,
{
    let bots_json = serde_json::to_string(new.bots).expect("names serialize");
    let inserted = sqlx::query_scalar::<DB, i64>(
        "INSERT INTO leagues (name, config_toml, bots_json, status, created_at_ms, \
         total_matches, dice, seed_source, dice_secret, luck_version) \
         VALUES ($1, $2, $3, 'created', $4, $5, $6, $7, $8, $9) RETURNING id",
    )
    .bind(new.name)
    .bind(new.config_toml)
    .bind(bots_json)
    .bind(created_at_ms)
    .bind(new.schedule.len() as i64)
    .bind(new.dice.mode.as_str())
    .bind(new.seed_source.as_str())
    .bind(new.dice.secret.to_hex())
    .bind(knobel_engine::LUCK_VERSION)
    .fetch_one(&mut **tx)
    .await;
    let id = match inserted {
        Ok(id) => id,
        Err(e) if super::error::is_unique_violation(&e) => {
            return Err(StoreError::LeagueExists {
                name: new.name.to_owned(),
            });
        }
        Err(e) => return Err(StoreError::db(CREATING_A_LEAGUE)(e)),
    };
    // The commitment names the league's id, known only now.
    sqlx::query::<DB>("UPDATE leagues SET dice_commitment = $1 WHERE id = $2")
        .bind(new.dice.secret.commitment(id, new.name))
        .bind(id)
        .execute(&mut **tx)
        .await
        .map_err(StoreError::db(CREATING_A_LEAGUE))?;
    Ok(id)
}

impl Store {
    /// Creates a league with its schedule, in one transaction, with status "created".
    /// Gives [`StoreError::LeagueExists`] if the name is taken; nothing is written then, nor
    /// when any other error ends the creation.
    ///
    /// The call may take the store's timeout plus an allowance per scheduled match (see
    /// [`league_creation_timeout`]): 200,000 matches take a few seconds to store
    /// (docs/leagues.md, "Large leagues").
    pub async fn create_league(&self, new: &NewLeague<'_>) -> Result<LeagueRecord, StoreError> {
        // Read as every later read reads it: a file that does not read is never stored.
        let config = stored_config(new.name, new.config_toml)?;
        let rows = ScheduleRows::new(new.schedule);
        let created_at_ms = now_ms();
        let store = self
            .clone()
            .with_timeout(league_creation_timeout(self.timeout, rows.len()));
        let id: i64 = with_writer!(store, pool => async {
            let mut tx = pool.begin().await.map_err(StoreError::db(CREATING_A_LEAGUE))?;
            let id = insert_league(&mut tx, new, created_at_ms).await?;
            tx.insert_schedule(id, &rows)
                .await
                .map_err(StoreError::db(CREATING_A_LEAGUE))?;
            tx.commit().await.map_err(StoreError::db(CREATING_A_LEAGUE))?;
            Ok::<i64, StoreError>(id)
        }
        .await)
        .map_err(|error| match error {
            StoreError::Timeout { ms, .. } => StoreError::Timeout {
                context: CREATING_A_LEAGUE,
                ms,
            },
            error => error,
        })?;
        Ok(LeagueRecord {
            id,
            name: new.name.to_owned(),
            config_toml: new.config_toml.to_owned(),
            config,
            bots: new.bots.to_vec(),
            status: LeagueStatus::Created,
            created_at_ms,
            total_matches: new.schedule.len() as u64,
            finished_matches: 0,
            playing: 0,
            dice: new.dice.mode,
            seed_source: new.seed_source,
            commitment: Some(new.dice.secret.commitment(id, new.name)),
            secret: HeldSecret(Some(new.dice.secret.clone())),
        })
    }

    /// The league named `name`, if there is one.
    pub async fn league(&self, name: &str) -> Result<Option<LeagueRecord>, StoreError> {
        let sql = format!(
            "{} WHERE l.name = $1",
            league_select(self.backend_name() == "postgres")
        );
        let row: Option<LeagueRow> = with_pool!(self, pool => {
            sqlx::query_as(sqlx::AssertSqlSafe(sql.as_str())).bind(name).fetch_optional(pool).await
        })
        .map_err(StoreError::db("reading a league"))?;
        row.map(league_from_row).transpose()
    }

    /// Every league, oldest first.
    pub async fn list_leagues(&self) -> Result<Vec<LeagueRecord>, StoreError> {
        self.leagues_where("", "listing leagues").await
    }

    /// The running leagues, oldest first (what a league scheduler reads on every tick: the
    /// leagues that are over are not read again).
    pub async fn running_leagues(&self) -> Result<Vec<LeagueRecord>, StoreError> {
        self.leagues_where("WHERE l.status = 'running'", "listing the running leagues")
            .await
    }

    /// The leagues that `filter` (SQL text of this module, never input) admits, oldest first.
    async fn leagues_where(
        &self,
        filter: &'static str,
        context: &'static str,
    ) -> Result<Vec<LeagueRecord>, StoreError> {
        let sql = format!(
            "{} {filter} ORDER BY l.id",
            league_select(self.backend_name() == "postgres")
        );
        let rows: Vec<LeagueRow> = with_pool!(self, pool => {
            sqlx::query_as(sqlx::AssertSqlSafe(sql.as_str())).fetch_all(pool).await
        })
        .map_err(StoreError::db(context))?;
        rows.into_iter().map(league_from_row).collect()
    }

    /// Ends running league `id` before its schedule is played out (`stop = "settled"`), unless
    /// a match of it is in play in any arena (see [`LeagueRecord::playing`]): whether it
    /// ended. Another arena may still be playing a match this one does not know of; the
    /// league ends once that match is over.
    pub async fn finish_league_early(&self, id: i64) -> Result<bool, StoreError> {
        let sql = format!(
            "UPDATE leagues SET status = 'finished' WHERE id = $1 AND status = 'running' \
             AND {} = 0",
            in_play_sql(self.backend_name() == "postgres", "leagues.id")
        );
        let rows = with_writer!(self, pool => {
            sqlx::query(sqlx::AssertSqlSafe(sql.as_str()))
                .bind(id)
                .execute(pool)
                .await
                .map(|r| r.rows_affected())
        })
        .map_err(StoreError::db("ending a league"))?;
        Ok(rows == 1)
    }

    /// Sets the status of league `name` to `to` if it is one of `from`; whether it was.
    pub async fn set_league_status(
        &self,
        name: &str,
        from: &[LeagueStatus],
        to: LeagueStatus,
    ) -> Result<bool, StoreError> {
        if from.is_empty() {
            return Ok(false);
        }
        let rows = with_writer!(self, pool => {
            let mut update = sqlx::QueryBuilder::new("UPDATE leagues SET status = ");
            update.push_bind(to.as_str()).push(" WHERE name = ").push_bind(name);
            update.push(" AND status IN (");
            let mut statuses = update.separated(", ");
            for status in from {
                statuses.push_bind(status.as_str());
            }
            update.push(")");
            update.build().execute(pool).await.map(|r| r.rows_affected())
        })
        .map_err(StoreError::db("changing a league's status"))?;
        Ok(rows > 0)
    }

    /// Marks league `league_id` finished if every match of it is ([`FINISH_LEAGUE`]); whether
    /// it did. For last results committed at once, each seeing the other's match unfinished.
    pub async fn finish_league_if_done(&self, league_id: i64) -> Result<bool, StoreError> {
        let rows = with_writer!(self, pool => {
            let done = sqlx::query(FINISH_LEAGUE).bind(league_id).execute(pool).await;
            done.map(|r| r.rows_affected())
        })
        .map_err(StoreError::db("finishing a league"))?;
        Ok(rows > 0)
    }

    /// The matches of league `league_id` that can be claimed now, in schedule order, at most
    /// `limit`.
    pub async fn open_league_matches(
        &self,
        league_id: i64,
        limit: u32,
    ) -> Result<Vec<OpenLeagueMatch>, StoreError> {
        macro_rules! open_matches {
            ($backend:ident) => {
                concat!(
                    "SELECT lm.ordinal, lm.preset, lm.rules_json, lm.set_index, lm.seats_json, \
                     lm.seed FROM league_matches lm \
                     WHERE lm.league_id = $1 AND lm.status IN ('pending', 'claimed') AND ",
                    claimable!(db_now_ms_sql!($backend)),
                    " ORDER BY lm.ordinal LIMIT $2"
                )
            };
        }
        // The database's clock, as the claim judges it.
        let sql = match self.backend_name() {
            "postgres" => open_matches!(postgres),
            _ => open_matches!(sqlite),
        };
        let rows: Vec<(i32, String, String, i32, String, i64)> = with_pool!(self, pool => {
            sqlx::query_as(sql)
            .bind(league_id)
            .bind(i64::from(limit))
            .fetch_all(pool)
            .await
        })
        .map_err(StoreError::db("reading a league's open matches"))?;
        // A league's matches share a few rules (one per preset): each distinct text is
        // parsed once per call, not once per row (the scheduler reads up to hundreds of rows
        // on every look); every row is still checked against its number of seats.
        let mut rules_read: Vec<(String, Rules)> = Vec::new();
        rows.into_iter()
            .map(|(ordinal, preset, rules_json, set, seats_json, seed)| {
                let what = |e: serde_json::Error, of: &str| {
                    corrupt(format!(
                        "league {league_id} match {ordinal}: {of} do not read: {e}"
                    ))
                };
                let seats: Vec<String> =
                    serde_json::from_str(&seats_json).map_err(|e| what(e, "seats"))?;
                let rules = match rules_read.iter().find(|(text, _)| *text == rules_json) {
                    Some((_, rules)) => rules.clone(),
                    None => {
                        let rules: Rules =
                            serde_json::from_str(&rules_json).map_err(|e| what(e, "rules"))?;
                        rules_read.push((rules_json, rules.clone()));
                        rules
                    }
                };
                // What the referee will be given must be playable: a stored row that is not
                // would otherwise fail only once its match has started.
                knobel_engine::Match::check_setup(&rules, seats.len()).map_err(|e| {
                    corrupt(format!(
                        "league {league_id} match {ordinal}: its rules and {} seats cannot be \
                         played: {e}",
                        seats.len()
                    ))
                })?;
                Ok(OpenLeagueMatch {
                    league_id,
                    ordinal: ordinal as u32,
                    preset,
                    rules,
                    set: set as u32,
                    seats,
                    seed: seed as u64,
                })
            })
            .collect()
    }

    /// Claims league match (`league_id`, `ordinal`) to be played as match `match_id` by
    /// `instance`, if it can be claimed and its league is running: the attempt it is (from
    /// 1), or `None` if it was not claimed (a paused, cancelled or finished league's match
    /// is never claimed: once it has ended its secret may be shown). Atomic: of several arenas claiming
    /// one league match at once, one gets it. On PostgreSQL the row is locked with
    /// `FOR UPDATE SKIP LOCKED`, so an arena never waits for another's claim.
    pub async fn claim_league_match(
        &self,
        league_id: i64,
        ordinal: u32,
        match_id: &str,
        instance: Option<&str>,
    ) -> Result<Option<u32>, StoreError> {
        // The database's clock, in the statement: arenas whose clocks disagree still agree
        // on stale claims.
        let attempt: Option<i32> = with_writer!(self, pool => {
            let sql = if self.backend_name() == "postgres" {
                // The league row is read FOR SHARE: a status change waits for the claim,
                // and a claim after it sees the new status.
                concat!(
                    "UPDATE league_matches SET status = 'claimed', match_id = $3, claimed_by = $4, \
                     claimed_at_ms = ", db_now_ms_sql!(postgres), ", attempts = attempts + 1 \
                     WHERE (league_id, ordinal) IN (SELECT lm.league_id, lm.ordinal \
                       FROM league_matches lm \
                       WHERE lm.league_id = $1 AND lm.ordinal = $2 AND ",
                    claimable!(db_now_ms_sql!(postgres)),
                    " FOR UPDATE SKIP LOCKED) \
                     AND EXISTS (SELECT 1 FROM leagues l WHERE l.id = $1 \
                       AND l.status = 'running' FOR SHARE) RETURNING attempts"
                )
            } else {
                concat!(
                    "UPDATE league_matches AS lm SET status = 'claimed', match_id = $3, \
                     claimed_by = $4, claimed_at_ms = ", db_now_ms_sql!(sqlite), ", \
                     attempts = attempts + 1 \
                     WHERE lm.league_id = $1 AND lm.ordinal = $2 AND ",
                    claimable!(db_now_ms_sql!(sqlite)),
                    " AND EXISTS (SELECT 1 FROM leagues l WHERE l.id = $1 \
                       AND l.status = 'running') RETURNING attempts"
                )
            };
            sqlx::query_scalar(sql)
                .bind(league_id)
                .bind(ordinal as i32)
                .bind(match_id)
                .bind(instance)
                .fetch_optional(pool)
                .await
        })
        .map_err(StoreError::db("claiming a league match"))?;
        Ok(attempt.map(|a| a.max(1) as u32))
    }

    /// Gives back the claim of league match (`league_id`, `ordinal`) for match `match_id`
    /// (its match did not start): it is open again at once.
    pub async fn release_league_match(
        &self,
        league_id: i64,
        ordinal: u32,
        match_id: &str,
    ) -> Result<(), StoreError> {
        with_writer!(self, pool => {
            sqlx::query(
                "UPDATE league_matches SET status = 'pending', match_id = NULL, claimed_by = NULL \
                 WHERE league_id = $1 AND ordinal = $2 AND match_id = $3 AND status = 'claimed'",
            )
            .bind(league_id)
            .bind(ordinal as i32)
            .bind(match_id)
            .execute(pool)
            .await
            .map(|r| r.rows_affected())
        })
        .map_err(StoreError::db("releasing a league match"))?;
        Ok(())
    }

    /// The finished matches of league `league_id` with their seats' results, in schedule
    /// order: what its standings are computed from. Each league match counts once: with the
    /// result of the match its row names.
    ///
    /// A seat's luck-adjusted score ([`PlayedSeat::adjusted`]) is read only if the league's
    /// luck version is this arena's [`knobel_engine::LUCK_VERSION`] (else `None`: scores of
    /// different versions are never mixed, and a league created before has no version).
    pub async fn league_results(&self, league_id: i64) -> Result<Vec<PlayedMatch>, StoreError> {
        let rows: Vec<ResultRow> = with_pool!(self, pool => {
            sqlx::query_as(
                "SELECT lm.ordinal, lm.game, lm.set_index, lm.rules_json, s.seat, s.bot_name, \
                        s.place, s.chips, \
                        CASE WHEN l.luck_version = $2 THEN s.adjusted_score END \
                 FROM league_matches lm JOIN match_seats s ON s.match_id = lm.match_id \
                 JOIN leagues l ON l.id = lm.league_id \
                 WHERE lm.league_id = $1 AND lm.status = 'finished' AND s.place IS NOT NULL \
                 ORDER BY lm.ordinal, s.seat",
            )
            .bind(league_id)
            .bind(knobel_engine::LUCK_VERSION)
            .fetch_all(pool)
            .await
        })
        .map_err(StoreError::db("reading a league's results"))?;
        let mut played: Vec<PlayedMatch> = Vec::new();
        for (ordinal, game, set, rules_json, _seat, bot, place, chips, adjusted) in rows {
            let ordinal = ordinal as u32;
            if played.last().is_none_or(|m| m.ordinal != ordinal) {
                let game: Game = game
                    .parse()
                    .map_err(|e| corrupt(format!("league {league_id} match {ordinal}: {e}")))?;
                let rules: Rules = serde_json::from_str(&rules_json).map_err(|e| {
                    corrupt(format!(
                        "league {league_id} match {ordinal}: rules do not read: {e}"
                    ))
                })?;
                let rounds = match &rules {
                    Rules::Zokken(z) => z.rounds,
                    _ => 1,
                };
                played.push(PlayedMatch {
                    ordinal,
                    game,
                    set: set as u32,
                    rounds,
                    seats: Vec::new(),
                });
            }
            let m = played.last_mut().expect("pushed above");
            m.seats.push(PlayedSeat {
                bot,
                place: u8::try_from(place).map_err(|_| {
                    corrupt(format!("league {league_id} match {ordinal}: place {place}"))
                })?,
                chips,
                adjusted,
            });
        }
        Ok(played)
    }

    /// The finished league match rows (ordinal, match id) of league `league_id`: for tests
    /// and tools that check every scheduled match has exactly one result.
    pub async fn league_match_ids(
        &self,
        league_id: i64,
    ) -> Result<Vec<(u32, String, Option<String>)>, StoreError> {
        let rows: Vec<(i32, String, Option<String>)> = with_pool!(self, pool => {
            sqlx::query_as(
                "SELECT ordinal, status, match_id FROM league_matches WHERE league_id = $1 ORDER BY ordinal",
            )
            .bind(league_id)
            .fetch_all(pool)
            .await
        })
        .map_err(StoreError::db("reading a league's matches"))?;
        Ok(rows.into_iter().map(|(o, s, m)| (o as u32, s, m)).collect())
    }
}

impl Store {
    /// Forfeits in the finished matches of league `league_id`: per game and bot, how many
    /// of its seats forfeited (bots without a forfeit are left out).
    pub async fn league_forfeits(
        &self,
        league_id: i64,
    ) -> Result<Vec<(Game, String, u64)>, StoreError> {
        let rows: Vec<(String, String, i64)> = with_pool!(self, pool => {
            sqlx::query_as(
                "SELECT lm.game, s.bot_name, COUNT(*) \
                 FROM league_matches lm JOIN match_seats s ON s.match_id = lm.match_id \
                 WHERE lm.league_id = $1 AND lm.status = 'finished' \
                   AND s.forfeit_reason IS NOT NULL \
                 GROUP BY lm.game, s.bot_name ORDER BY lm.game, s.bot_name",
            )
            .bind(league_id)
            .fetch_all(pool)
            .await
        })
        .map_err(StoreError::db("reading a league's forfeits"))?;
        rows.into_iter()
            .map(|(game, bot, count)| {
                let game: Game = game
                    .parse()
                    .map_err(|e| corrupt(format!("league {league_id}: {e}")))?;
                Ok((game, bot, count.max(0) as u64))
            })
            .collect()
    }
}

/// The league a match played for, as far as serving its log depends on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatchLeague {
    /// The league's name.
    pub league: String,
    /// Where the league stands.
    pub status: LeagueStatus,
    /// Its dice.
    pub dice: DiceMode,
    /// The match's duplicate set.
    pub set: u32,
    /// Matches of that set without a result yet.
    pub set_unfinished: u64,
    /// The league's matches in play now (see [`LeagueRecord::playing`]).
    pub league_playing: u64,
}

impl MatchLeague {
    /// Whether the league has ended (see [`LeagueRecord::has_ended`]): its logs are public.
    pub fn has_ended(&self) -> bool {
        self.status.is_over() && self.league_playing == 0
    }
}

impl Store {
    /// The league match `id` played for, if it played for one (see [`MatchLeague`]).
    pub async fn match_league(&self, id: &str) -> Result<Option<MatchLeague>, StoreError> {
        let sql = format!(
            "SELECT l.name, l.status, l.dice, lm.set_index, \
               (SELECT COUNT(*) FROM league_matches o WHERE o.league_id = lm.league_id \
                  AND o.set_index = lm.set_index AND o.status <> 'finished'), {} \
             FROM matches m \
             JOIN leagues l ON l.id = m.league_id \
             JOIN league_matches lm ON lm.league_id = m.league_id \
               AND lm.ordinal = m.league_ordinal \
             WHERE m.id = $1",
            in_play_sql(self.backend_name() == "postgres", "lm.league_id")
        );
        let row: Option<(String, String, String, i32, i64, i64)> = with_pool!(self, pool => {
            sqlx::query_as(sqlx::AssertSqlSafe(sql.as_str()))
            .bind(id)
            .fetch_optional(pool)
            .await
        })
        .map_err(StoreError::db("reading a match's league"))?;
        row.map(|(league, status, dice, set, unfinished, playing)| {
            let bad = |e: String| corrupt(format!("league {league:?}: {e}"));
            Ok(MatchLeague {
                status: status.parse().map_err(bad)?,
                dice: dice.parse().map_err(bad)?,
                set: set.max(0) as u32,
                set_unfinished: unfinished.max(0) as u64,
                league_playing: playing.max(0) as u64,
                league,
            })
        })
        .transpose()
    }
}

/// A scheduled league match as an archive shows it (see [`Store::league_archive_page`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchiveRow {
    /// Its place in the schedule.
    pub ordinal: u32,
    /// The scheduled match.
    pub scheduled: ScheduledMatch,
    /// "pending", "claimed" or "finished".
    pub status: String,
    /// How many times it was claimed: for a finished match, the attempt that finished it.
    pub attempts: u32,
    /// The match id of its last claim.
    pub match_id: Option<String>,
}

impl Store {
    /// At most `limit` scheduled matches of league `league_id` from ordinal `from` on, in
    /// schedule order: a page of its archive.
    pub async fn league_archive_page(
        &self,
        league_id: i64,
        from: u32,
        limit: u32,
    ) -> Result<Vec<ArchiveRow>, StoreError> {
        type Row = (
            i32,
            String,
            String,
            String,
            i32,
            i32,
            String,
            i64,
            String,
            i32,
            Option<String>,
        );
        let rows: Vec<Row> = with_pool!(self, pool => {
            sqlx::query_as(
                "SELECT ordinal, game, preset, rules_json, set_index, rotation, seats_json, seed, \
                        status, attempts, match_id \
                 FROM league_matches WHERE league_id = $1 AND ordinal >= $2 \
                 ORDER BY ordinal LIMIT $3",
            )
            .bind(league_id)
            .bind(from as i32)
            .bind(i64::from(limit))
            .fetch_all(pool)
            .await
        })
        .map_err(StoreError::db("reading a league's schedule"))?;
        rows.into_iter()
            .map(
                |(
                    ordinal,
                    game,
                    preset,
                    rules_json,
                    set,
                    rotation,
                    seats_json,
                    seed,
                    status,
                    attempts,
                    match_id,
                )| {
                    let ordinal = ordinal.max(0) as u32;
                    let bad = |what: String| {
                        corrupt(format!("league {league_id} match {ordinal}: {what}"))
                    };
                    let rules: Rules = serde_json::from_str(&rules_json)
                        .map_err(|e| bad(format!("rules do not read: {e}")))?;
                    Ok(ArchiveRow {
                        ordinal,
                        scheduled: ScheduledMatch {
                            ordinal,
                            game: game
                                .parse()
                                .map_err(|e: knobel_engine::RulesError| bad(e.to_string()))?,
                            preset,
                            rules,
                            set: set.max(0) as u32,
                            rotation: rotation.max(0) as u32,
                            seats: serde_json::from_str(&seats_json)
                                .map_err(|e| bad(format!("seats do not read: {e}")))?,
                            seed: seed as u64,
                        },
                        status,
                        attempts: attempts.max(0) as u32,
                        match_id,
                    })
                },
            )
            .collect()
    }
}
