-- Knobel arena store, SQLite flavour. Keep in step with ../postgres/0001_init.sql.
-- Migrations are append-only: never edit an applied file, add 0002_*.sql instead.
-- Timestamps are unix milliseconds (INTEGER); JSON values are stored as TEXT.

CREATE TABLE bots (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    name          TEXT    NOT NULL UNIQUE,
    -- SHA-256 hex of the bot's token; the clear token is never stored.
    token_hash    TEXT    NOT NULL UNIQUE,
    created_at_ms INTEGER NOT NULL,
    revoked_at_ms INTEGER
);

CREATE TABLE matches (
    id             TEXT    PRIMARY KEY,
    game           TEXT    NOT NULL,
    preset         TEXT    NOT NULL,
    rules_json     TEXT    NOT NULL,
    -- The engine's u64 seed, stored as the i64 with the same bit pattern.
    seed           INTEGER NOT NULL,
    -- JSON array of strings, one per seat.
    seat_names     TEXT    NOT NULL,
    status         TEXT    NOT NULL CHECK (status IN ('running', 'finished', 'aborted')),
    -- JSON array of places (1 = first), one per seat; set when finished.
    placings       TEXT,
    log_json       TEXT,
    abort_reason   TEXT,
    started_at_ms  INTEGER NOT NULL,
    finished_at_ms INTEGER
);

CREATE INDEX matches_started_idx ON matches (started_at_ms DESC, id DESC);
CREATE INDEX matches_game_started_idx ON matches (game, started_at_ms DESC);
CREATE INDEX matches_status_idx ON matches (status);

CREATE TABLE seat_results (
    match_id TEXT    NOT NULL REFERENCES matches (id) ON DELETE CASCADE,
    seat     INTEGER NOT NULL,
    bot_name TEXT    NOT NULL,
    place    INTEGER NOT NULL,
    PRIMARY KEY (match_id, seat)
);

CREATE INDEX seat_results_bot_idx ON seat_results (bot_name);
