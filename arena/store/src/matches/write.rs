//! Recording matches: starts, finishes and aborts, in one transaction per batch. The
//! transaction's body is written once and expanded per backend (`with_writer!`), so its
//! parts are macros (`start_in_batch!`, `finish_in_batch!`, `abort_in_batch!`,
//! `insert_seats!`, `record_seat_results!`) rather than functions generic
//! over sqlx's databases.
//!
//! A match's seats are stored once, in `match_seats`: a start inserts one row per seat (its
//! bot), a finish fills in each row's result (migration 0013).

use knobel_engine::{ForfeitReason, Outcome};

use crate::{
    AbortedMatch, FinishedMatch, LeagueSlot, MatchWrite, NewMatch, Store, StoreError, now_ms,
};

/// Seat rows written by one statement (at most nine parameters each: 9 000 per statement,
/// well within SQLite's 32 766 and PostgreSQL's 65 535).
const SEAT_ROWS_PER_STATEMENT: usize = 1_000;

/// A started seat to insert into `match_seats`: match id, seat, bot name, bot id (`None`: a
/// built-in player, or not known).
type StartedSeat<'a> = (&'a str, i32, &'a str, Option<i64>);

/// A finished seat's result to set on its `match_seats` row: match id, seat, place, strikes,
/// timeouts, forfeit reason, tokens, chips, luck-adjusted score.
type SeatResultRow<'a> = (
    &'a str,
    i32,
    i32,
    i32,
    i32,
    Option<&'static str>,
    Option<i64>,
    Option<i64>,
    Option<f64>,
);

/// A [`MatchWrite`] with its values encoded for the database, ready to be bound.
enum Prepared<'a> {
    /// The match.
    Start(&'a NewMatch),
    /// The match, its packed log, its outcome as JSON in the form of each game
    /// (`Game::ALL`'s order, see [`outcome_forms`]) and its league match, if it is one.
    Finish(&'a FinishedMatch, Vec<u8>, [String; 3], Option<LeagueSlot>),
    /// The match and its packed log, if one is given.
    Abort(&'a AbortedMatch, Option<Vec<u8>>),
}

impl<'a> Prepared<'a> {
    fn finish(finished: &'a FinishedMatch, league: Option<LeagueSlot>) -> Prepared<'a> {
        Prepared::Finish(
            finished,
            pack_log(&finished.log_json),
            outcome_forms(&finished.outcome),
            league,
        )
    }

    fn new(write: &'a MatchWrite) -> Prepared<'a> {
        match write {
            MatchWrite::Start(new) => Prepared::Start(new),
            MatchWrite::Finish(finished) => Prepared::finish(finished, None),
            MatchWrite::FinishLeague(finished, slot) => Prepared::finish(finished, Some(*slot)),
            MatchWrite::Abort(aborted) => {
                Prepared::Abort(aborted, aborted.log_json.as_deref().map(pack_log))
            }
        }
    }
}

/// Marks the league match `slot` finished by match `id`, if the match still holds its claim
/// (else its result is stored but not counted: another attempt's counts); whether it was
/// counted. Expanded in a transaction `$tx` of either backend.
macro_rules! finish_league_match_sql {
    ($tx:expr, $id:expr, $slot:expr) => {{
        let counted = sqlx::query(
            "UPDATE league_matches SET status = 'finished' \
             WHERE league_id = $1 AND ordinal = $2 AND match_id = $3 AND status = 'claimed'",
        )
        .bind($slot.league_id)
        .bind($slot.ordinal as i32)
        .bind($id)
        .execute(&mut *$tx)
        .await
        .map_err(StoreError::db(LEAGUE))?
        .rows_affected();
        if counted == 0 {
            tracing::warn!(match_id = $id, league_id = $slot.league_id, ordinal = $slot.ordinal,
                "a league match's result came from a match that no longer holds its claim: stored, not counted");
        }
        Ok::<bool, StoreError>(counted > 0)
    }};
}

/// Marks league `$league_id` finished if all of its matches are: once per league per batch.
/// Transactions committing at once may each miss the other's last match; the scheduler
/// finishes such a league ([`Store::finish_league_if_done`]).
macro_rules! finish_league_sql {
    ($tx:expr, $league_id:expr) => {
        sqlx::query(crate::leagues::FINISH_LEAGUE)
            .bind($league_id)
            .execute(&mut *$tx)
            .await
            .map_err(StoreError::db(LEAGUE))
    };
}

/// The stored form of a match log: lz4 (block format, uncompressed length in front). JSON
/// logs shrink about tenfold.
///
/// The same bytes as `lz4_flex::compress_prepend_size`, but the compressor's hash table and
/// its output buffer are kept per thread and reused: made anew for every log (thousands a
/// second in a busy arena), their zeroed allocations cost more than the compression.
fn pack_log(log_json: &str) -> Vec<u8> {
    use lz4_flex::block::{CompressTable, compress_into_with_table, get_maximum_output_size};
    use std::cell::RefCell;
    thread_local! {
        static PACKER: RefCell<(CompressTable, Vec<u8>)> =
            RefCell::new((CompressTable::default(), Vec::new()));
    }
    let input = log_json.as_bytes();
    PACKER.with_borrow_mut(|(table, buffer)| {
        let needed = 4 + get_maximum_output_size(input.len());
        if buffer.len() < needed {
            buffer.resize(needed, 0);
        }
        let size = u32::try_from(input.len()).expect("a match log is under 4 GiB");
        buffer[..4].copy_from_slice(&size.to_le_bytes());
        let packed = compress_into_with_table(input, &mut buffer[4..needed], table)
            .expect("the buffer holds the largest possible output");
        buffer[..4 + packed].to_vec()
    })
}

/// What a finish or abort is checked against when it finds its match not running: the
/// match's status, game, outcome, abort reason and end time.
const ALREADY: &str = "SELECT status, game, outcome_json, abort_reason, finished_at_ms \
                       FROM matches WHERE id = $1";

/// A stored [`ALREADY`] row.
type AlreadyRow = (String, String, Option<String>, Option<String>, Option<i64>);

/// The end a finish or an abort would write.
enum End<'a> {
    /// Finished with this outcome, in the stored form of each game ([`outcome_forms`]).
    Finished(&'a [String; 3]),
    /// Aborted for this reason.
    Aborted(&'a str),
}

/// Whether `row` shows the very write that found its match not running already done: the
/// `end` it would have written (the same outcome, or the same abort reason), at the same
/// end time.
fn already(row: Option<AlreadyRow>, end: End<'_>, finished_at_ms: i64) -> bool {
    row.is_some_and(|(status, game, outcome, reason, at)| {
        let same = match end {
            End::Finished(forms) => {
                let form = knobel_engine::Game::ALL
                    .iter()
                    .position(|g| g.name() == game)
                    .map(|i| forms[i].as_str());
                status == "finished"
                    && reason.is_none()
                    && outcome.is_some()
                    && outcome.as_deref() == form
            }
            End::Aborted(wanted) => status == "aborted" && reason.as_deref() == Some(wanted),
        };
        same && at == Some(finished_at_ms)
    })
}

/// The stored JSON of `outcome` for a match of each game, in `Game::ALL`'s order: the
/// finish's UPDATE picks the one of the match's stored game (RULES.md A.7: a value the game
/// does not have is left out, never zero-filled).
fn outcome_forms(outcome: &knobel_engine::Outcome) -> [String; 3] {
    knobel_engine::Game::ALL.map(|game| outcome.to_json(game))
}

/// The result of a write that changed `rows` rows: none means it was `refused`.
fn written(rows: u64, refused: impl FnOnce() -> StoreError) -> Result<(), StoreError> {
    if rows == 0 { Err(refused()) } else { Ok(()) }
}

/// Checks that every per-seat list of a finished match's outcome has one entry per
/// placing ([`StoreError::OutcomeMismatch`]).
fn check_outcome(finished: &FinishedMatch) -> Result<(), StoreError> {
    let o = &finished.outcome;
    let placings = o.placings.len();
    let lists = [
        ("tokens", o.tokens.len()),
        ("halves_lost", o.halves_lost.len()),
        ("chips", o.chips.len()),
        ("strikes", o.strikes.len()),
        ("timeouts", o.timeouts.len()),
        ("forfeits", o.forfeits.len()),
    ];
    match lists.into_iter().find(|&(_, len)| len != placings) {
        Some((field, len)) => Err(StoreError::OutcomeMismatch {
            id: finished.id.clone(),
            field,
            len,
            placings,
        }),
        None => Ok(()),
    }
}

/// The seat results of a finished match of `game` with `seats` stored seats: none for a
/// match started without seat names. Tokens are kept for Schocken and Sjokken, chips for
/// Zokken (NULL where the game has none), and the luck-adjusted scores given with it
/// ([`FinishedMatch::adjusted`]; NULL without). Gives [`StoreError::PlacingsMismatch`] if
/// the placings do not fit the seats.
fn seat_results<'a>(
    finished: &'a FinishedMatch,
    game: &str,
    seats: usize,
) -> Result<Vec<SeatResultRow<'a>>, StoreError> {
    let id = finished.id.as_str();
    let o = &finished.outcome;
    if seats != 0 && seats != o.placings.len() {
        return Err(StoreError::PlacingsMismatch {
            id: id.to_owned(),
            seats,
            placings: o.placings.len(),
        });
    }
    let zokken = game == knobel_engine::Game::Zokken.name();
    let adjusted = adjusted_scores(finished, seats);
    Ok((0..seats)
        .map(|i| {
            (
                id,
                i32::try_from(i).expect("seat counts are small"),
                i32::from(o.placings[i]),
                i32::try_from(o.strikes[i]).unwrap_or(i32::MAX),
                i32::try_from(o.timeouts[i]).unwrap_or(i32::MAX),
                o.forfeits[i].map(ForfeitReason::name),
                (!zokken).then_some(o.tokens[i]),
                zokken.then_some(o.chips[i]),
                adjusted.and_then(|scores| scores.get(i).copied()),
            )
        })
        .collect())
}

/// The luck-adjusted scores of a finished match with `seats` seats, if it has one per seat
/// (else none, with a warning: a result is never refused for its adjusted scores).
fn adjusted_scores(finished: &FinishedMatch, seats: usize) -> Option<&[f64]> {
    let scores = finished.adjusted.as_deref()?;
    if scores.len() != seats {
        tracing::warn!(
            match_id = %finished.id,
            scores = scores.len(),
            seats,
            "the luck-adjusted scores do not fit the seats: stored without them"
        );
        return None;
    }
    Some(scores)
}

/// What failed, in the errors of a batch's statements.
const START: &str = "recording a new match";
const FINISH: &str = "recording the end of a match";
const ABORT: &str = "aborting a match";
const LEAGUE: &str = "recording the end of a league match";

/// How many seats finished match `finished` has: `stored` (counted when its end was
/// written), or, if none were, those its start in the same batch inserts after the finishes.
fn seats_of(finished: &FinishedMatch, stored: i64, started: &[StartedSeat<'_>]) -> usize {
    match usize::try_from(stored) {
        Ok(0) | Err(_) => started.iter().filter(|s| s.0 == finished.id).count(),
        Ok(stored) => stored,
    }
}

/// The seats of a match just started, as `match_seats` rows.
fn started_seats(new: &NewMatch) -> impl Iterator<Item = StartedSeat<'_>> {
    new.seat_names.iter().enumerate().map(|(seat, name)| {
        (
            new.id.as_str(),
            i32::try_from(seat).expect("seat counts are small"),
            name.as_str(),
            new.seat_bot_ids.get(seat).copied().flatten(),
        )
    })
}

/// A start in the batch's transaction `$tx`: the match row (its seats added to `$seats`, for
/// one insert at the end). The write's result; `?` for what fails the whole batch.
macro_rules! start_in_batch {
    ($tx:ident, $store:expr, $new:expr, $seats:ident) => {{
        let new: &NewMatch = $new;
        let inserted = sqlx::query(
            "INSERT INTO matches \
             (id, game, preset, rules_json, seed, status, \
              started_at_ms, owner_instance, league_id, league_ordinal) \
             VALUES ($1, $2, $3, $4, $5, 'running', $6, $7, $8, $9) \
             ON CONFLICT (id) DO NOTHING",
        )
        .bind(&new.id)
        .bind(&new.game)
        .bind(&new.preset)
        .bind(&new.rules_json)
        .bind(new.seed)
        .bind(new.started_at_ms)
        .bind($store.owner.as_ref().map(|owner| owner.as_str()))
        .bind(new.league.map(|slot| slot.league_id))
        .bind(new.league.map(|slot| slot.ordinal as i32))
        .execute(&mut *$tx)
        .await
        .map_err(StoreError::db(START))?
        .rows_affected();
        if inserted > 0 {
            $seats.extend(started_seats(new));
        }
        written(inserted, || StoreError::MatchExists { id: new.id.clone() })
    }};
}

/// A finish in the batch's transaction `$tx`: the match row, its league match counted (its
/// league added to `$leagues`); the match, its game and how many seats it has stored are
/// added to `$finished_matches`, for their seat results at the end. A second, identical finish (a retry whose commit was not
/// confirmed) is a no-op.
macro_rules! finish_in_batch {
    ($tx:ident, $finished:expr, $log:expr, $forms:expr, $league:expr,
     $finished_matches:ident, $leagues:ident) => {{
        let finished: &FinishedMatch = $finished;
        let id = finished.id.as_str();
        check_outcome(finished)?;
        let row: Option<(String, i64)> = sqlx::query_as(
            "UPDATE matches \
             SET status = 'finished', log_lz4 = $2, finished_at_ms = $3, \
                 outcome_json = CASE game WHEN 'schocken' THEN $4 \
                     WHEN 'sjokken' THEN $5 ELSE $6 END \
             WHERE id = $1 AND status = 'running' \
             RETURNING game, \
                 (SELECT COUNT(*) FROM match_seats s WHERE s.match_id = matches.id)",
        )
        .bind(id)
        .bind($log)
        .bind(finished.finished_at_ms)
        .bind(&$forms[0])
        .bind(&$forms[1])
        .bind(&$forms[2])
        .fetch_optional(&mut *$tx)
        .await
        .map_err(StoreError::db(FINISH))?;
        match row {
            None => {
                let found = sqlx::query_as(ALREADY)
                    .bind(id)
                    .fetch_optional(&mut *$tx)
                    .await
                    .map_err(StoreError::db(FINISH))?;
                if already(found, End::Finished($forms), finished.finished_at_ms) {
                    Ok(())
                } else {
                    Err(StoreError::MatchNotRunning { id: id.to_owned() })
                }
            }
            Some((game, seats)) => {
                $finished_matches.push((finished, game, seats));
                if let Some(slot) = $league
                    && finish_league_match_sql!($tx, id, *slot)?
                {
                    $leagues.insert(slot.league_id);
                }
                Ok(())
            }
        }
    }};
}

/// An abort in the batch's transaction `$tx`; a second, identical abort is a no-op.
macro_rules! abort_in_batch {
    ($tx:ident, $aborted:expr, $log:expr) => {{
        let aborted: &AbortedMatch = $aborted;
        let updated = sqlx::query(
            "UPDATE matches \
             SET status = 'aborted', abort_reason = $2, \
                 log_lz4 = COALESCE($3, log_lz4), finished_at_ms = $4 \
             WHERE id = $1 AND status = 'running'",
        )
        .bind(&aborted.id)
        .bind(&aborted.reason)
        .bind($log)
        .bind(aborted.finished_at_ms)
        .execute(&mut *$tx)
        .await
        .map_err(StoreError::db(ABORT))?
        .rows_affected();
        let again = updated == 0 && {
            let found = sqlx::query_as(ALREADY)
                .bind(&aborted.id)
                .fetch_optional(&mut *$tx)
                .await
                .map_err(StoreError::db(ABORT))?;
            already(found, End::Aborted(&aborted.reason), aborted.finished_at_ms)
        };
        written(updated.max(u64::from(again)), || {
            StoreError::MatchNotRunning {
                id: aborted.id.clone(),
            }
        })
    }};
}

/// The batch's started seats, inserted into `match_seats` in chunks.
macro_rules! insert_seats {
    ($tx:ident, $started_seats:expr) => {{
        for rows in $started_seats.chunks(SEAT_ROWS_PER_STATEMENT) {
            let mut insert = sqlx::QueryBuilder::new(
                "INSERT INTO match_seats (match_id, seat, bot_name, bot_id) ",
            );
            insert.push_values(rows, |mut row, &(id, seat, bot_name, bot_id)| {
                row.push_bind(id)
                    .push_bind(seat)
                    .push_bind(bot_name)
                    .push_bind(bot_id);
            });
            insert
                .build()
                .execute(&mut *$tx)
                .await
                .map_err(StoreError::db(START))?;
        }
    }};
}

/// Sets the results of the batch's finished seats on their `match_seats` rows, in chunks.
macro_rules! record_seat_results {
    ($tx:ident, $seat_results:expr) => {{
        for rows in $seat_results.chunks(SEAT_ROWS_PER_STATEMENT) {
            let mut update = sqlx::QueryBuilder::new(
                "UPDATE match_seats SET place = r.column3, strikes = r.column4, \
                 timeouts = r.column5, forfeit_reason = r.column6, tokens = r.column7, \
                 chips = r.column8, adjusted_score = r.column9 FROM (",
            );
            update.push_values(rows, |mut row, r| {
                let (id, seat, place, strikes, timeouts, forfeit, tokens, chips, adjusted) = *r;
                row.push_bind(id)
                    .push_bind(seat)
                    .push_bind(place)
                    .push_bind(strikes)
                    .push_bind(timeouts)
                    .push_bind(forfeit)
                    .push_bind(tokens)
                    .push_bind(chips)
                    .push_bind(adjusted);
            });
            update.push(
                ") AS r WHERE match_seats.match_id = r.column1 AND match_seats.seat = r.column2",
            );
            update
                .build()
                .execute(&mut *$tx)
                .await
                .map_err(StoreError::db(FINISH))?;
        }
    }};
}

impl Store {
    /// Records a match as it starts, with status "running".
    ///
    /// Gives [`StoreError::MatchExists`] if the id is taken.
    pub async fn insert_match(&self, new: &NewMatch) -> Result<(), StoreError> {
        self.write_one(&MatchWrite::Start(new.clone())).await
    }

    /// Records the end of a running match: its log, its outcome (the place of each seat, 1 =
    /// first, ties share a place; tokens or chips, strikes, timeouts and forfeits) and when
    /// it finished; status becomes "finished".
    ///
    /// Unless the match was started without seat names, the outcome must have one place per
    /// seat, and each seat's result is recorded with the seat (for ratings, see
    /// [`Store::results_for_bot`], and [`Store::seat_results`]), without luck-adjusted scores
    /// (a [`MatchWrite`] can carry them: [`FinishedMatch::adjusted`]). Everything is written in one
    /// transaction: either all of it is stored or nothing is. Gives
    /// [`StoreError::MatchNotRunning`] if the match is unknown or already over,
    /// [`StoreError::PlacingsMismatch`] if the counts differ and
    /// [`StoreError::OutcomeMismatch`] if the outcome's lists differ in length.
    pub async fn finish_match(
        &self,
        id: &str,
        log_json: &str,
        outcome: &Outcome,
        finished_at_ms: i64,
    ) -> Result<(), StoreError> {
        self.write_one(&MatchWrite::Finish(FinishedMatch {
            id: id.to_owned(),
            log_json: log_json.to_owned(),
            outcome: outcome.clone(),
            finished_at_ms,
            adjusted: None,
        }))
        .await
    }

    /// Marks a running match as aborted for `reason`, keeping `log_json` if one is given (else
    /// whatever log was stored). Gives [`StoreError::MatchNotRunning`] if the match is unknown
    /// or already over (e.g. aborted by [`Store::mark_running_as_aborted`]).
    pub async fn abort_match(
        &self,
        id: &str,
        reason: &str,
        log_json: Option<&str>,
        finished_at_ms: i64,
    ) -> Result<(), StoreError> {
        self.write_one(&MatchWrite::Abort(AbortedMatch {
            id: id.to_owned(),
            reason: reason.to_owned(),
            log_json: log_json.map(str::to_owned),
            finished_at_ms,
        }))
        .await
    }

    /// Carries out one write in a transaction of its own.
    async fn write_one(&self, write: &MatchWrite) -> Result<(), StoreError> {
        self.write_batch(std::slice::from_ref(write))
            .await
            .and_then(|mut results| results.pop().expect("one result per write"))
    }

    /// Carries out several writes, in order, in as few transactions as it can (group commit):
    /// the result of each write, in the same order, is what [`Store::insert_match`],
    /// [`Store::finish_match`] or [`Store::abort_match`] would have given for it alone.
    ///
    /// All writes go into one transaction. A write refused for what it finds (a match id
    /// that is taken, a match that is not running) writes nothing and does not hold up the
    /// others. If the transaction as a whole fails (a database error, placings that do not
    /// fit the seats, an outcome whose lists do not fit its placings, a damaged row),
    /// nothing of it is stored and each write is retried in a transaction of its own, so
    /// that one bad write never costs the others; if it failed because the database is
    /// unavailable, every write gets an error that says so ([`StoreError::is_unavailable`])
    /// without being tried alone. Writes to the same match take effect in order: a start and
    /// the end of that match can share a batch.
    ///
    /// Finishing or aborting a match again with the very same values (placings or reason,
    /// and end time) is a no-op that succeeds: a write retried because its commit was not
    /// confirmed is written once, never twice (and no second set of seat results).
    pub async fn write_matches(&self, writes: &[MatchWrite]) -> Vec<Result<(), StoreError>> {
        match self.write_batch(writes).await {
            Ok(results) => results,
            Err(error) if writes.len() == 1 => vec![Err(error)],
            // Without a database, one by one would fail as well, each after a timeout.
            Err(error) if error.is_unavailable() => {
                let reason = error.to_string();
                let maybe_written = error.maybe_written();
                std::iter::once(Err(error))
                    .chain(writes[1..].iter().map(|_| {
                        Err(StoreError::Unavailable {
                            context: "writing match records",
                            reason: reason.clone(),
                            maybe_written,
                        })
                    }))
                    .collect()
            }
            Err(error) => {
                tracing::debug!(
                    error = %error,
                    writes = writes.len(),
                    "a batch of match writes failed: writing them one by one"
                );
                let mut results = Vec::with_capacity(writes.len());
                for write in writes {
                    results.push(self.write_one(write).await);
                }
                results
            }
        }
    }

    /// Carries out `writes` in one transaction. `Err` if it was rolled back (nothing
    /// written); else the result of each write, where an `Err` wrote nothing.
    async fn write_batch(
        &self,
        writes: &[MatchWrite],
    ) -> Result<Vec<Result<(), StoreError>>, StoreError> {
        // Everything that can be prepared is prepared before the transaction starts.
        let prepared: Vec<Prepared<'_>> = writes.iter().map(Prepared::new).collect();
        with_writer!(self, pool => async {
            let mut tx = pool
                .begin()
                .await
                .map_err(StoreError::db("opening a transaction for match records"))?;
            let mut results = Vec::with_capacity(writes.len());
            // The seats of every started match, inserted by one statement at the end.
            let mut started_seats: Vec<StartedSeat<'_>> = Vec::new();
            // Every finished match, its game and its stored seats, for the seats' results.
            let mut finished_matches: Vec<(&FinishedMatch, String, i64)> = Vec::new();
            // The leagues a counted result of this batch may have finished.
            let mut leagues = std::collections::BTreeSet::new();
            for prepared in &prepared {
                let result = match prepared {
                    Prepared::Start(new) => start_in_batch!(tx, self, new, started_seats),
                    Prepared::Finish(finished, log, outcome_forms, league) => finish_in_batch!(
                        tx, finished, log, outcome_forms, league, finished_matches, leagues
                    ),
                    Prepared::Abort(aborted, log) => abort_in_batch!(tx, aborted, log),
                };
                results.push(result);
            }
            // The seats first: a match started and finished in one batch is in both.
            insert_seats!(tx, started_seats);
            // A result that does not fit its seats rolls the whole batch back.
            let mut seat_rows: Vec<SeatResultRow<'_>> = Vec::new();
            for (finished, game, stored) in &finished_matches {
                let seats = seats_of(finished, *stored, &started_seats);
                seat_rows.extend(seat_results(finished, game, seats)?);
            }
            record_seat_results!(tx, seat_rows);
            for league_id in leagues {
                finish_league_sql!(tx, league_id)?;
            }
            tx.commit()
                .await
                .map_err(StoreError::db(crate::error::COMMITTING))?;
            Ok(results)
        }
        .await)
    }

    /// Marks every running match as aborted for `reason`, now, whoever runs it: for tools
    /// and tests. The arena itself uses [`Store::abort_orphaned_matches`], which spares the
    /// matches of other arenas that are alive. Returns how many were aborted.
    pub async fn mark_running_as_aborted(&self, reason: &str) -> Result<u64, StoreError> {
        with_writer!(self, pool => {
            sqlx::query(
                "UPDATE matches SET status = 'aborted', abort_reason = $1, finished_at_ms = $2 \
                 WHERE status = 'running'",
            )
            .bind(reason)
            .bind(now_ms())
            .execute(pool)
            .await
            .map(|r| r.rows_affected())
        })
        .map_err(StoreError::db("aborting the running matches"))
    }
}

#[cfg(test)]
mod tests {
    use super::pack_log;

    #[test]
    fn packed_logs_are_the_lz4_size_prepended_format_and_unpack() {
        let small = r#"{"format_version":1,"entries":[]}"#.to_owned();
        // Over 64 KiB: the compressor's table grows to its large form, and back.
        let large: String = (0..20_000).map(|i| format!("{i},")).collect();
        for log in [&small, &large, &small, &String::new()] {
            let packed = pack_log(log);
            assert_eq!(packed, lz4_flex::compress_prepend_size(log.as_bytes()));
            let unpacked = lz4_flex::decompress_size_prepended(&packed).expect("unpacks");
            assert_eq!(unpacked, log.as_bytes());
        }
    }
}
