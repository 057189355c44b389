//! Reading matches back: listing (keyset pages), one match, its log, its seat results and
//! a bot's results.

use knobel_engine::{ForfeitReason, MatchLog, Outcome};

use crate::{
    BotResult, BotTotals, MatchFilter, MatchRecord, MatchStatus, MatchSummary, SeatResult, Store,
    StoreError,
};

use super::{corrupt, parse_seat_names};

/// The columns of a match row, in [`MatchRow`] order.
macro_rules! match_columns {
    () => {
        "id, game, preset, seat_names, status, placings, abort_reason, started_at_ms, \
         finished_at_ms, rules_json, seed, outcome_json"
    };
}

/// A match row without its log: id, game, preset, seat_names, status, placings,
/// abort_reason, started_at_ms, finished_at_ms, rules_json, seed, outcome_json.
type MatchRow = (
    String,
    String,
    String,
    String,
    String,
    Option<String>,
    Option<String>,
    i64,
    Option<i64>,
    String,
    i64,
    Option<String>,
);

/// A `seat_results` row as read: seat, bot_name, place, strikes, timeouts, forfeit_reason,
/// tokens, chips.
type SeatResultRow = (
    i32,
    String,
    i32,
    i32,
    i32,
    Option<String>,
    Option<i64>,
    Option<i64>,
);

/// Whose results to read: by seat name or by bot id.
#[derive(Clone, Copy)]
enum ResultsOf<'a> {
    Name(&'a str),
    Id(i64),
}

/// A results row: match_id, game, seat, place, seats, finished_at_ms.
type ResultRow = (String, String, i32, i32, i64, i64);

/// `log` in the current match log format if it is an unversioned (format 0) match log, else
/// as it is: a log stored before `format_version` existed is served with it.
fn current_format(id: &str, log: String) -> String {
    if !matches!(MatchLog::format_of(&log), Ok(0)) {
        return log;
    }
    match MatchLog::upgrade_json(&log) {
        Ok(upgraded) => upgraded.into_owned(),
        Err(e) => {
            tracing::warn!(match_id = id, error = %e, "a stored log without format_version does not read as a match log: served as stored");
            log
        }
    }
}

fn unpack_log(id: &str, packed: &[u8]) -> Result<String, StoreError> {
    let bytes = lz4_flex::decompress_size_prepended(packed)
        .map_err(|e| corrupt(format!("the log of match {id:?} does not decompress: {e}")))?;
    String::from_utf8(bytes)
        .map_err(|_| corrupt(format!("the log of match {id:?} is not UTF-8 text")))
}

fn parse_status(id: &str, status: &str) -> Result<MatchStatus, StoreError> {
    status
        .parse()
        .map_err(|e| corrupt(format!("match \"{id}\": {e}")))
}

/// The match of a row, as a [`MatchRecord`].
fn record_from_row(row: MatchRow) -> Result<MatchRecord, StoreError> {
    let (
        id,
        game,
        preset,
        seat_names,
        status,
        placings,
        abort_reason,
        started_at_ms,
        finished_at_ms,
        rules_json,
        seed,
        outcome_json,
    ) = row;
    let status = parse_status(&id, &status)?;
    let seat_names = parse_seat_names(&id, &seat_names)?;
    let placings = placings
        .map(|json| {
            serde_json::from_str::<Vec<u8>>(&json).map_err(|e| {
                corrupt(format!(
                    "match \"{id}\": placings are not a JSON array of places: {e}"
                ))
            })
        })
        .transpose()?;
    let outcome = outcome_json
        .map(|json| {
            serde_json::from_str::<Outcome>(&json).map_err(|e| {
                corrupt(format!(
                    "match \"{id}\": the outcome is not an outcome's JSON: {e}"
                ))
            })
        })
        .transpose()?;
    let summary = MatchSummary {
        id,
        game,
        preset,
        seat_names,
        status,
        placings,
        outcome,
        abort_reason,
        started_at_ms,
        finished_at_ms,
        rules_json,
    };
    Ok(MatchRecord { summary, seed })
}

fn small(id: &str, what: &str, value: i64) -> Result<u8, StoreError> {
    u8::try_from(value)
        .map_err(|_| corrupt(format!("match \"{id}\": {what} {value} is out of range")))
}

impl Store {
    /// The matches that pass `filter`, newest (latest start) first and, among matches that
    /// started in the same millisecond, by id, largest first: at most `filter.limit` of them
    /// (clamped to `1..=`[`MatchFilter::MAX_LIMIT`]), from just after `filter.after` if it
    /// is given (keyset paging: the order is total, so a page never repeats a match of an
    /// earlier one, and matches stored meanwhile, being newer, never turn up in later
    /// pages).
    pub async fn list_matches(
        &self,
        filter: &MatchFilter,
    ) -> Result<Vec<MatchSummary>, StoreError> {
        self.list_matches_page(filter).await.map(|(page, _)| page)
    }

    /// [`Store::list_matches`], and whether more matches pass the filter after the last one
    /// listed (false: this is the last page).
    pub async fn list_matches_page(
        &self,
        filter: &MatchFilter,
    ) -> Result<(Vec<MatchSummary>, bool), StoreError> {
        let limit = filter.limit.clamp(1, MatchFilter::MAX_LIMIT);
        // One more than the page, to tell whether another page follows.
        let fetch = i64::from(limit) + 1;
        let status = filter.status.map(MatchStatus::as_str);
        let (after_ms, after_id) = match &filter.after {
            Some(cursor) => (Some(cursor.started_at_ms), Some(cursor.id.as_str())),
            None => (None, None),
        };
        let rows: Vec<MatchRow> = with_pool!(self, pool => {
            sqlx::query_as(concat!(
                "SELECT ",
                match_columns!(),
                " FROM matches \
                 WHERE ($1 IS NULL OR game = $1) AND ($2 IS NULL OR status = $2) \
                   AND ($3 IS NULL OR EXISTS (SELECT 1 FROM match_seats s \
                                              WHERE s.match_id = matches.id AND s.bot_name = $3)) \
                   AND ($4 IS NULL OR started_at_ms < $4 OR (started_at_ms = $4 AND id < $5)) \
                 ORDER BY started_at_ms DESC, id DESC \
                 LIMIT $6"
            ))
            .bind(filter.game.as_deref())
            .bind(status)
            .bind(filter.bot_name.as_deref())
            .bind(after_ms)
            .bind(after_id)
            .bind(fetch)
            .fetch_all(pool)
            .await
        })
        .map_err(StoreError::db("listing matches"))?;
        let more = rows.len() > limit as usize;
        let page = rows
            .into_iter()
            .take(limit as usize)
            .map(|row| record_from_row(row).map(|record| record.summary))
            .collect::<Result<_, _>>()?;
        Ok((page, more))
    }

    /// The match `id` with everything but its log, if it is stored.
    pub async fn get_match(&self, id: &str) -> Result<Option<MatchRecord>, StoreError> {
        let row: Option<MatchRow> = with_pool!(self, pool => {
            sqlx::query_as(concat!(
                "SELECT ",
                match_columns!(),
                " FROM matches WHERE id = $1"
            ))
            .bind(id)
            .fetch_optional(pool)
            .await
        })
        .map_err(StoreError::db("reading a match"))?;
        row.map(record_from_row).transpose()
    }

    /// The status and stored log of match `id`, if it is stored. A running match has no log
    /// yet; an aborted one has whatever log was given when it was aborted. A match log of the
    /// unversioned format 0 (stored before logs had a `format_version`) comes back in the
    /// current format ([`MatchLog::upgrade_json`]); anything else comes back as stored.
    pub async fn match_log(
        &self,
        id: &str,
    ) -> Result<Option<(MatchStatus, Option<String>)>, StoreError> {
        let row: Option<(String, Option<Vec<u8>>, Option<String>)> = with_pool!(self, pool => {
            sqlx::query_as("SELECT status, log_lz4, log_json FROM matches WHERE id = $1")
                .bind(id)
                .fetch_optional(pool)
                .await
        })
        .map_err(StoreError::db("reading a match log"))?;
        let Some((status, packed, plain)) = row else {
            return Ok(None);
        };
        let log = match packed {
            Some(packed) => Some(unpack_log(id, &packed)?),
            // Stored before logs were compressed.
            None => plain,
        };
        Ok(Some((
            parse_status(id, &status)?,
            log.map(|l| current_format(id, l)),
        )))
    }

    /// The seats of the finished match `id` as `seat_results` holds them, in seat order:
    /// place, strikes, timeouts, forfeit, tokens or chips. Empty for a match that is not
    /// finished (or was started without seat names).
    pub async fn seat_results(&self, id: &str) -> Result<Vec<SeatResult>, StoreError> {
        let rows: Vec<SeatResultRow> = with_pool!(self, pool => {
            sqlx::query_as(
                "SELECT seat, bot_name, place, strikes, timeouts, forfeit_reason, tokens, chips \
                 FROM seat_results WHERE match_id = $1 ORDER BY seat",
            )
            .bind(id)
            .fetch_all(pool)
            .await
        })
        .map_err(StoreError::db("reading a match's seat results"))?;
        rows.into_iter()
            .map(
                |(seat, bot_name, place, strikes, timeouts, forfeit, tokens, chips)| {
                    let count = |what: &str, value: i32| {
                        u32::try_from(value).map_err(|_| {
                            corrupt(format!("match \"{id}\": {what} {value} is out of range"))
                        })
                    };
                    Ok(SeatResult {
                        seat: small(id, "seat", seat.into())?,
                        bot_name,
                        place: small(id, "place", place.into())?,
                        strikes: count("strikes", strikes)?,
                        timeouts: count("timeouts", timeouts)?,
                        forfeit: forfeit
                            .map(|name| {
                                ForfeitReason::from_name(&name).ok_or_else(|| {
                                    corrupt(format!(
                                        "match \"{id}\": unknown forfeit reason {name:?}"
                                    ))
                                })
                            })
                            .transpose()?,
                        tokens,
                        chips,
                    })
                },
            )
            .collect()
    }

    /// The totals of every seat the bot named `name` held in a finished match (matched by
    /// the name recorded with each seat): one grouped query, however many matches.
    pub async fn bot_totals(&self, name: &str) -> Result<BotTotals, StoreError> {
        let rows: Vec<(i32, i64, i64, i64, i64)> = with_pool!(self, pool => {
            sqlx::query_as(
                "SELECT s.place, CAST(COUNT(*) AS BIGINT), CAST(SUM(s.strikes) AS BIGINT), \
                        CAST(SUM(s.timeouts) AS BIGINT), \
                        CAST(SUM(CASE WHEN s.forfeit_reason IS NULL THEN 0 ELSE 1 END) AS BIGINT) \
                 FROM seat_results s JOIN matches m ON m.id = s.match_id \
                 WHERE s.bot_name = $1 AND m.status = 'finished' \
                 GROUP BY s.place ORDER BY s.place",
            )
            .bind(name)
            .fetch_all(pool)
            .await
        })
        .map_err(StoreError::db("summing a bot's results"))?;
        let mut totals = BotTotals::default();
        for (place, matches, strikes, timeouts, forfeits) in rows {
            let count = |what: &str, value: i64| {
                u64::try_from(value)
                    .map_err(|_| corrupt(format!("bot {name:?}: {what} {value} is out of range")))
            };
            let matches = count("matches", matches)?;
            let place = u8::try_from(place)
                .map_err(|_| corrupt(format!("bot {name:?}: place {place} is out of range")))?;
            totals.matches += matches;
            totals.places.push((place, matches));
            totals.strikes += count("strikes", strikes)?;
            totals.timeouts += count("timeouts", timeouts)?;
            totals.forfeits += count("forfeits", forfeits)?;
        }
        Ok(totals)
    }

    /// Every seat the bot named `name` held in a finished match, oldest match first (the
    /// order to replay them in for ratings). Matched by the name recorded with each seat;
    /// [`Store::results_for_bot_id`] attributes seats by bot id.
    pub async fn results_for_bot(&self, name: &str) -> Result<Vec<BotResult>, StoreError> {
        self.results_where(ResultsOf::Name(name)).await
    }

    /// Every seat the registered bot `bot_id` ([`crate::BotRecord::id`]) held in a
    /// finished match, oldest match first. Built-in players have no id and never count.
    pub async fn results_for_bot_id(&self, bot_id: i64) -> Result<Vec<BotResult>, StoreError> {
        self.results_where(ResultsOf::Id(bot_id)).await
    }

    async fn results_where(&self, of: ResultsOf<'_>) -> Result<Vec<BotResult>, StoreError> {
        let (name, bot_id) = match of {
            ResultsOf::Name(name) => (Some(name), None),
            ResultsOf::Id(id) => (None, Some(id)),
        };
        let rows: Vec<ResultRow> = with_pool!(self, pool => {
            sqlx::query_as(
                "SELECT s.match_id, m.game, s.seat, s.place, \
                        (SELECT COUNT(*) FROM seat_results c WHERE c.match_id = s.match_id), \
                        m.finished_at_ms \
                 FROM seat_results s JOIN matches m ON m.id = s.match_id \
                 WHERE (s.bot_name = $1 OR s.bot_id = $2) AND m.status = 'finished' \
                 ORDER BY m.finished_at_ms, s.match_id, s.seat",
            )
            .bind(name)
            .bind(bot_id)
            .fetch_all(pool)
            .await
        })
        .map_err(StoreError::db("reading a bot's results"))?;
        rows.into_iter()
            .map(|(match_id, game, seat, place, seats, finished_at_ms)| {
                Ok(BotResult {
                    seat: small(&match_id, "seat", seat.into())?,
                    place: small(&match_id, "place", place.into())?,
                    seats: small(&match_id, "seat count", seats)?,
                    match_id,
                    game,
                    finished_at_ms,
                })
            })
            .collect()
    }
}
