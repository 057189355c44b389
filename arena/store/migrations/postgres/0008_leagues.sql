-- Leagues and their schedules. Keep in step with ../sqlite/0008_leagues.sql.
--
-- leagues: one row per league; config_toml is the league file as given, bots_json the bots
-- it resolved to (a JSON array of names). status: created, running, paused, cancelled or
-- finished.
--
-- league_matches: the schedule, expanded once when the league is created (ordinal is the
-- place in the schedule). A match is 'pending' until an arena claims it ('claimed', with the
-- id of the matches row it plays it as) and 'finished' when that match's result is stored,
-- in the same transaction. A claim whose match was aborted (or never started) is claimed
-- again, and the match is played again from the same seed.
CREATE TABLE leagues (
    id            BIGSERIAL PRIMARY KEY,
    name          TEXT    NOT NULL UNIQUE,
    config_toml   TEXT    NOT NULL,
    bots_json     TEXT    NOT NULL,
    status        TEXT    NOT NULL
                  CHECK (status IN ('created', 'running', 'paused', 'cancelled', 'finished')),
    created_at_ms BIGINT  NOT NULL,
    total_matches INTEGER NOT NULL
);

CREATE TABLE league_matches (
    league_id     BIGINT  NOT NULL REFERENCES leagues (id) ON DELETE CASCADE,
    ordinal       INTEGER NOT NULL,
    game          TEXT    NOT NULL,
    preset        TEXT    NOT NULL,
    rules_json    TEXT    NOT NULL,
    set_index     INTEGER NOT NULL,
    rotation      INTEGER NOT NULL,
    -- JSON array of bot names, in seat order.
    seats_json    TEXT    NOT NULL,
    -- The engine's u64 seed, stored as the i64 with the same bit pattern.
    seed          BIGINT  NOT NULL,
    status        TEXT    NOT NULL DEFAULT 'pending'
                  CHECK (status IN ('pending', 'claimed', 'finished')),
    match_id      TEXT,
    claimed_by    TEXT,
    claimed_at_ms BIGINT,
    attempts      INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (league_id, ordinal)
);

CREATE INDEX league_matches_open_idx ON league_matches (league_id, status, ordinal);
CREATE INDEX league_matches_match_idx ON league_matches (match_id);
