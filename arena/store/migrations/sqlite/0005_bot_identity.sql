-- Bots are identified by id everywhere, and names are unique up to case and look-alikes.
-- Keep in step with ../postgres/0005_bot_identity.sql.
--
-- bots.name_key: the key of the one name rule (knobel_proto::names::name_key: the UTS #39
-- skeleton of the case-folded NFC name), unique. It is computed in Rust, so this migration
-- leaves it NULL; the store fills it in right after migrating (Store::connect), oldest bot
-- first. A bot whose key an older bot already holds (registered before this rule) keeps
-- NULL and its name: its results stay attributable, and no new bot can take the key.
ALTER TABLE bots ADD COLUMN name_key TEXT;
CREATE UNIQUE INDEX bots_name_key_idx ON bots (name_key);

-- The registered bot in each seat, in seat order: a JSON array of ids, null for a built-in
-- player. NULL for matches started before this migration.
ALTER TABLE matches ADD COLUMN seat_bot_ids TEXT;

-- The registered bot of a seat result; NULL for a built-in player. Seats recorded before
-- this migration get the id of the bot of that name, if one is registered.
ALTER TABLE seat_results ADD COLUMN bot_id INTEGER REFERENCES bots (id);
UPDATE seat_results SET bot_id = (SELECT b.id FROM bots b WHERE b.name = seat_results.bot_name);
CREATE INDEX seat_results_bot_id_idx ON seat_results (bot_id);
