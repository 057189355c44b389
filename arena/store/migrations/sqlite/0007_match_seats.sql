-- The bot in each seat of every match, from its start: ListMatches filters by bot name
-- (running, finished and aborted matches alike). Keep in step with
-- ../postgres/0007_match_seats.sql.
--
-- match_seats: one row per seat, written with the match row; bot_id is NULL for a built-in
-- player and for matches started before seat bot ids were kept. Matches already stored get
-- their rows from their seat_names and seat_bot_ids JSON arrays.
CREATE TABLE match_seats (
    match_id TEXT    NOT NULL REFERENCES matches (id) ON DELETE CASCADE,
    seat     INTEGER NOT NULL,
    bot_name TEXT    NOT NULL,
    bot_id   INTEGER,
    PRIMARY KEY (match_id, seat)
);
INSERT INTO match_seats (match_id, seat, bot_name, bot_id)
SELECT m.id, CAST(n.key AS INTEGER), n.value,
       CASE WHEN m.seat_bot_ids IS NULL THEN NULL
            ELSE json_extract(m.seat_bot_ids, '$[' || n.key || ']') END
FROM matches m, json_each(m.seat_names) n;
CREATE INDEX match_seats_bot_name_idx ON match_seats (bot_name, match_id);
