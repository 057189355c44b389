//! Reading matches back: listing (keyset pages), one match, its log, its seat results and
//! a bot's results.

use std::collections::HashMap;

use knobel_engine::{ForfeitReason, MatchLog, Outcome};

use crate::{
    BotResult, BotTotals, MatchFilter, MatchRecord, MatchStatus, MatchSummary, SeatResult, Store,
    StoreError,
};

use super::corrupt;

/// The columns of a match row, in [`MatchRow`] order.
macro_rules! match_columns {
    () => {
        "id, game, preset, status, abort_reason, started_at_ms, finished_at_ms, rules_json, \
         seed, outcome_json"
    };
}

/// A match row without its log and seats: id, game, preset, status, abort_reason,
/// started_at_ms, finished_at_ms, rules_json, seed, outcome_json.
type MatchRow = (
    String,
    String,
    String,
    String,
    Option<String>,
    i64,
    Option<i64>,
    String,
    i64,
    Option<String>,
);

/// A seat of a listed match: its bot's name and its place (`None` until the match has
/// finished), in seat order.
type ListedSeat = (String, Option<i32>);

/// Matches read by one statement of [`Store::seats_of`] (well within the parameter limits).
const MATCHES_PER_SEATS_QUERY: usize = 500;

/// A finished seat's `match_seats` row as read: seat, bot_name, place, strikes, timeouts,
/// forfeit_reason, tokens, chips.
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

/// The seat names and, if every seat has one, the places of a match's `seats`.
fn names_and_placings(
    id: &str,
    seats: Vec<ListedSeat>,
) -> Result<(Vec<String>, Option<Vec<u8>>), StoreError> {
    let placed = seats.iter().filter(|(_, place)| place.is_some()).count();
    if placed != 0 && placed != seats.len() {
        return Err(corrupt(format!(
            "match \"{id}\": {placed} of its {} seats have a place",
            seats.len()
        )));
    }
    let mut placings = (placed != 0).then(Vec::new);
    let mut names = Vec::with_capacity(seats.len());
    for (name, place) in seats {
        if let (Some(placings), Some(place)) = (placings.as_mut(), place) {
            placings.push(small(id, "place", place.into())?);
        }
        names.push(name);
    }
    Ok((names, placings))
}

/// The match of a row and its seats, as a [`MatchRecord`].
fn record_from_row(row: MatchRow, seats: Vec<ListedSeat>) -> Result<MatchRecord, StoreError> {
    let (
        id,
        game,
        preset,
        status,
        abort_reason,
        started_at_ms,
        finished_at_ms,
        rules_json,
        seed,
        outcome_json,
    ) = row;
    let status = parse_status(&id, &status)?;
    let (seat_names, placings) = names_and_placings(&id, seats)?;
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
        let rows: Vec<MatchRow> = rows.into_iter().take(limit as usize).collect();
        let ids: Vec<&str> = rows.iter().map(|row| row.0.as_str()).collect();
        let mut seats = self.seats_of(&ids).await?;
        let page = rows
            .into_iter()
            .map(|row| {
                let seats = seats.remove(&row.0).unwrap_or_default();
                record_from_row(row, seats).map(|record| record.summary)
            })
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
        let Some(row) = row else {
            return Ok(None);
        };
        let seats = self.seats_of(&[id]).await?.remove(id).unwrap_or_default();
        record_from_row(row, seats).map(Some)
    }

    /// The seats of the matches `ids`, in seat order, by match id (a match without seats
    /// is left out).
    async fn seats_of(&self, ids: &[&str]) -> Result<HashMap<String, Vec<ListedSeat>>, StoreError> {
        let mut seats: HashMap<String, Vec<ListedSeat>> = HashMap::new();
        for chunk in ids.chunks(MATCHES_PER_SEATS_QUERY) {
            let rows: Vec<(String, String, Option<i32>)> = with_pool!(self, pool => {
                let mut select = sqlx::QueryBuilder::new(
                    "SELECT match_id, bot_name, place FROM match_seats WHERE match_id IN (",
                );
                let mut listed = select.separated(", ");
                for id in chunk {
                    listed.push_bind(*id);
                }
                select.push(") ORDER BY match_id, seat");
                select.build_query_as().fetch_all(pool).await
            })
            .map_err(StoreError::db("reading the seats of matches"))?;
            for (id, name, place) in rows {
                seats.entry(id).or_default().push((name, place));
            }
        }
        Ok(seats)
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

    /// The seats of the finished match `id` with their results, in seat order:
    /// place, strikes, timeouts, forfeit, tokens or chips. Empty for a match that is not
    /// finished (or was started without seat names).
    pub async fn seat_results(&self, id: &str) -> Result<Vec<SeatResult>, StoreError> {
        let rows: Vec<SeatResultRow> = with_pool!(self, pool => {
            sqlx::query_as(
                "SELECT seat, bot_name, place, COALESCE(strikes, 0), COALESCE(timeouts, 0), \
                        forfeit_reason, tokens, chips \
                 FROM match_seats WHERE match_id = $1 AND place IS NOT NULL ORDER BY seat",
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
                 FROM match_seats s JOIN matches m ON m.id = s.match_id \
                 WHERE s.bot_name = $1 AND m.status = 'finished' AND s.place IS NOT NULL \
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
                        (SELECT COUNT(*) FROM match_seats c WHERE c.match_id = s.match_id), \
                        m.finished_at_ms \
                 FROM match_seats s JOIN matches m ON m.id = s.match_id \
                 WHERE (s.bot_name = $1 OR s.bot_id = $2) AND m.status = 'finished' \
                   AND s.place IS NOT NULL \
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
