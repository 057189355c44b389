-- A match's seats and their results, stored once (issue 24). Keep in step with
-- ../postgres/0013_seats_stored_once.sql.
--
-- match_seats is the one place of a seat: its bot (name, id) from the match's start, and its
-- result once the match has finished (place, strikes, timeouts, forfeit reason, tokens or
-- chips, luck-adjusted score; NULL while the match runs and when it was aborted). Until now
-- the same was also kept in matches.seat_names, matches.seat_bot_ids and matches.placings
-- (JSON arrays) and in seat_results, which the store wrote in step.
--
-- Rows stored before stay readable: every seat result moves onto its seat's row (a result
-- whose seat has no row, which the store never wrote, gets one), and a seat whose bot id its
-- start did not keep takes the id its result had (0005 filled those in by name).
ALTER TABLE match_seats ADD COLUMN place INTEGER;
ALTER TABLE match_seats ADD COLUMN strikes INTEGER;
ALTER TABLE match_seats ADD COLUMN timeouts INTEGER;
ALTER TABLE match_seats ADD COLUMN forfeit_reason TEXT;
ALTER TABLE match_seats ADD COLUMN tokens BIGINT;
ALTER TABLE match_seats ADD COLUMN chips BIGINT;
ALTER TABLE match_seats ADD COLUMN adjusted_score REAL;

INSERT INTO match_seats (match_id, seat, bot_name, bot_id)
SELECT r.match_id, r.seat, r.bot_name, r.bot_id
FROM seat_results r
WHERE NOT EXISTS (SELECT 1 FROM match_seats s WHERE s.match_id = r.match_id AND s.seat = r.seat);

UPDATE match_seats
SET place = r.place, strikes = r.strikes, timeouts = r.timeouts,
    forfeit_reason = r.forfeit_reason, tokens = r.tokens, chips = r.chips,
    adjusted_score = r.adjusted_score, bot_id = COALESCE(match_seats.bot_id, r.bot_id)
FROM seat_results r
WHERE r.match_id = match_seats.match_id AND r.seat = match_seats.seat;

DROP TABLE seat_results;
ALTER TABLE matches DROP COLUMN seat_names;
ALTER TABLE matches DROP COLUMN seat_bot_ids;
ALTER TABLE matches DROP COLUMN placings;

-- A bot's results by id (was seat_results_bot_id_idx); by name: match_seats_bot_name_idx.
CREATE INDEX match_seats_bot_id_idx ON match_seats (bot_id);
