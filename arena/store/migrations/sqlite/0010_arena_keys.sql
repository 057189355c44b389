-- Keys the arenas sharing this database share (docs/hostile-clients.md). Keep in step with
-- ../postgres/0010_arena_keys.sql.
--
-- name 'page_tokens': the HMAC key of ListMatches's page tokens (64 hex digits), made by the
-- first arena that needs it, so that every arena on the database accepts the others' tokens.
CREATE TABLE arena_keys (
    name    TEXT PRIMARY KEY,
    key_hex TEXT NOT NULL
);
