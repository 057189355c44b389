-- Arena instances and their leases: several arenas may share one database. Each arena
-- process registers a random id, renews its lease (heartbeat_at_ms) well before
-- heartbeat_at_ms + lease_ms, and owns the matches it starts; a running match whose owner's
-- lease has run out (or that has no owner: rows from before this migration) is aborted by
-- any arena. Times are unix milliseconds. Keep in step with ../postgres/0004_instances.sql.
CREATE TABLE arena_instances (
    id              TEXT   PRIMARY KEY,
    started_at_ms   BIGINT NOT NULL,
    heartbeat_at_ms BIGINT NOT NULL,
    lease_ms        BIGINT NOT NULL
);

ALTER TABLE matches ADD COLUMN owner_instance TEXT;

CREATE INDEX matches_running_owner_idx ON matches (owner_instance) WHERE status = 'running';
