//! Writing a league's schedule (`league_matches`) when the league is created: in large
//! statements (on PostgreSQL one array per column, on SQLite thousands of rows per
//! `INSERT`), within a time allowance sized to the schedule ([`league_creation_timeout`]).

use std::time::Duration;

use knobel_engine::Rules;
use sqlx::{PgConnection, SqliteConnection};

use knobel_league::ScheduledMatch;

/// A `league_matches` row to write: ordinal, game, preset, rules (an index into
/// [`ScheduleRows::rules_json`]), set, rotation, seats JSON, seed.
type ScheduleRow<'a> = (i32, &'a str, &'a str, usize, i32, i32, String, i64);

/// A league's schedule as `league_matches` rows. Its matches share a few rules (one per
/// game), each serialized once.
pub(super) struct ScheduleRows<'a> {
    /// The distinct rules of the schedule, as JSON.
    rules_json: Vec<String>,
    /// The rows, in schedule order.
    rows: Vec<ScheduleRow<'a>>,
}

impl<'a> ScheduleRows<'a> {
    /// The rows of `schedule`.
    pub(super) fn new(schedule: &'a [ScheduledMatch]) -> ScheduleRows<'a> {
        let mut distinct_rules: Vec<&Rules> = Vec::new();
        let mut rules_json = Vec::new();
        let mut rules_index =
            |rules: &'a Rules| match distinct_rules.iter().position(|&known| known == rules) {
                Some(index) => index,
                None => {
                    distinct_rules.push(rules);
                    rules_json.push(serde_json::to_string(rules).expect("rules serialize"));
                    rules_json.len() - 1
                }
            };
        let rows = schedule
            .iter()
            .map(|m| {
                (
                    m.ordinal as i32,
                    m.game.name(),
                    m.preset.as_str(),
                    rules_index(&m.rules),
                    m.set as i32,
                    m.rotation as i32,
                    serde_json::to_string(&m.seats).expect("names serialize"),
                    m.seed as i64,
                )
            })
            .collect();
        ScheduleRows { rules_json, rows }
    }

    /// How many rows there are.
    pub(super) fn len(&self) -> usize {
        self.rows.len()
    }
}

/// Schedule rows one SQLite `INSERT` writes: nine parameters each, under SQLite's limit of
/// 32,766 parameters per statement.
const SQLITE_ROWS_PER_STATEMENT: usize = 3_000;

/// Schedule rows one PostgreSQL `INSERT ... SELECT FROM UNNEST(...)` writes.
const POSTGRES_ROWS_PER_STATEMENT: usize = 20_000;

/// The time creating a league may take per scheduled match, beyond the store's timeout
/// for one call: 200,000 matches (the most a league has) get 20 s more, several times what
/// they take on SQLite and on PostgreSQL even in a debug build (docs/leagues.md, "Large
/// leagues"). Only a database that is down or stuck makes a creation wait that long.
pub const LEAGUE_CREATION_TIME_PER_MATCH: Duration = Duration::from_micros(100);

/// How long creating a league of `matches` scheduled matches may take, with `call_timeout`
/// the store's timeout for one call: that, plus [`LEAGUE_CREATION_TIME_PER_MATCH`] per
/// match.
pub fn league_creation_timeout(call_timeout: Duration, matches: usize) -> Duration {
    let matches = u32::try_from(matches).unwrap_or(u32::MAX);
    call_timeout.saturating_add(LEAGUE_CREATION_TIME_PER_MATCH.saturating_mul(matches))
}

/// A connection that can write a league's schedule, in its backend's fastest way.
pub(super) trait InsertSchedule {
    /// Inserts `rows` as the schedule of league `league_id`.
    async fn insert_schedule(
        &mut self,
        league_id: i64,
        schedule: &ScheduleRows<'_>,
    ) -> Result<(), sqlx::Error>;
}

impl InsertSchedule for SqliteConnection {
    async fn insert_schedule(
        &mut self,
        league_id: i64,
        schedule: &ScheduleRows<'_>,
    ) -> Result<(), sqlx::Error> {
        for chunk in schedule.rows.chunks(SQLITE_ROWS_PER_STATEMENT) {
            let mut insert = sqlx::QueryBuilder::new(
                "INSERT INTO league_matches (league_id, ordinal, game, preset, rules_json, \
                 set_index, rotation, seats_json, seed) ",
            );
            insert.push_values(chunk, |mut row, r| {
                row.push_bind(league_id)
                    .push_bind(r.0)
                    .push_bind(r.1)
                    .push_bind(r.2)
                    .push_bind(schedule.rules_json[r.3].as_str())
                    .push_bind(r.4)
                    .push_bind(r.5)
                    .push_bind(&r.6)
                    .push_bind(r.7);
            });
            insert.build().execute(&mut *self).await?;
        }
        Ok(())
    }
}

impl InsertSchedule for PgConnection {
    async fn insert_schedule(
        &mut self,
        league_id: i64,
        schedule: &ScheduleRows<'_>,
    ) -> Result<(), sqlx::Error> {
        // The distinct rules are sent once per statement, each row naming its rules by
        // their place in that array (from 1).
        let rules_json: Vec<&str> = schedule.rules_json.iter().map(String::as_str).collect();
        for chunk in schedule.rows.chunks(POSTGRES_ROWS_PER_STATEMENT) {
            sqlx::query(
                "INSERT INTO league_matches (league_id, ordinal, game, preset, rules_json, \
                 set_index, rotation, seats_json, seed) \
                 SELECT $1, r.ordinal, r.game, r.preset, ($10::TEXT[])[r.rules], r.set_index, \
                 r.rotation, r.seats, r.seed \
                 FROM UNNEST($2::INTEGER[], $3::TEXT[], $4::TEXT[], $5::INTEGER[], \
                 $6::INTEGER[], $7::INTEGER[], $8::TEXT[], $9::BIGINT[]) \
                 AS r(ordinal, game, preset, rules, set_index, rotation, seats, seed)",
            )
            .bind(league_id)
            .bind(chunk.iter().map(|r| r.0).collect::<Vec<i32>>())
            .bind(chunk.iter().map(|r| r.1).collect::<Vec<&str>>())
            .bind(chunk.iter().map(|r| r.2).collect::<Vec<&str>>())
            .bind(chunk.iter().map(|r| r.3 as i32 + 1).collect::<Vec<i32>>())
            .bind(chunk.iter().map(|r| r.4).collect::<Vec<i32>>())
            .bind(chunk.iter().map(|r| r.5).collect::<Vec<i32>>())
            .bind(chunk.iter().map(|r| r.6.as_str()).collect::<Vec<&str>>())
            .bind(chunk.iter().map(|r| r.7).collect::<Vec<i64>>())
            .bind(&rules_json)
            .execute(&mut *self)
            .await?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_creation_timeout_grows_with_the_schedule() {
        let call = Duration::from_secs(2);
        assert_eq!(league_creation_timeout(call, 0), call);
        assert_eq!(
            league_creation_timeout(call, 200_000),
            Duration::from_secs(22)
        );
        assert_eq!(
            league_creation_timeout(Duration::MAX, usize::MAX),
            Duration::MAX
        );
    }
}
