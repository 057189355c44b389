-- The bot in each seat of every match, from its start: ListMatches filters by bot name
-- (running, finished and aborted matches alike). Keep in step with
-- ../sqlite/0007_match_seats.sql.
--
-- match_seats: one row per seat, written with the match row; bot_id is NULL for a built-in
-- player and for matches started before seat bot ids were kept. Matches already stored get
-- their rows from their seat_names and seat_bot_ids JSON arrays.
CREATE TABLE match_seats (
    match_id TEXT    NOT NULL REFERENCES matches (id) ON DELETE CASCADE,
    seat     INTEGER NOT NULL,
    bot_name TEXT    NOT NULL,
    bot_id   BIGINT,
    PRIMARY KEY (match_id, seat)
);
INSERT INTO match_seats (match_id, seat, bot_name, bot_id)
SELECT m.id, (n.ord - 1)::INTEGER, n.name,
       (m.seat_bot_ids::json ->> (n.ord - 1)::INTEGER)::BIGINT
FROM matches m, json_array_elements_text(m.seat_names::json) WITH ORDINALITY AS n (name, ord);
CREATE INDEX match_seats_bot_name_idx ON match_seats (bot_name, match_id);
