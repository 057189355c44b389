-- The full outcome of a finished match (issue 8: results that agree). Keep in step with
-- ../postgres/0003_seat_outcomes.sql.
--
-- matches.outcome_json: the engine's Outcome as JSON (placings, loser, tokens, halves_lost,
-- chips, strikes, timeouts, forfeits); NULL while running, when aborted, and for matches
-- finished before this migration (they have their placings only).
ALTER TABLE matches ADD COLUMN outcome_json TEXT;

-- Per seat: strikes and timeouts given, why the seat forfeited (NULL when it did not; one
-- of strikes, disconnected, not_reading, revoked, absent), and the seat's tokens
-- (Schocken, Sjokken) or net chips (Zokken), NULL where the game has none. Seats finished
-- before this migration have 0 strikes and timeouts and NULL for the rest.
ALTER TABLE seat_results ADD COLUMN strikes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE seat_results ADD COLUMN timeouts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE seat_results ADD COLUMN forfeit_reason TEXT;
ALTER TABLE seat_results ADD COLUMN tokens INTEGER;
ALTER TABLE seat_results ADD COLUMN chips INTEGER;
