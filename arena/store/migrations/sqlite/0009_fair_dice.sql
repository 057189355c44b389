-- Secret league dice (docs/fair-play.md). Keep in step with ../postgres/0009_fair_dice.sql.
--
-- leagues.dice: 'independent' (every match its own seed) or 'duplicate' (the seat orders of
-- a set share their seed). seed_source: 'secret' (256 bits from the operating system's
-- random source, published as dice_secret once the league has ended), 'league-file' (the
-- league file named a seed: public dice) or 'legacy' (created before this migration: its
-- stored seeds came from a public chain of the league file's seed; duplicate sets).
-- dice_secret: 64 hex digits (NULL for legacy leagues); dice_commitment: the SHA-256
-- commitment to it published at creation.
--
-- matches.league_id, league_ordinal: the league match a match played (NULL for pick-up and
-- practice matches), so that what a match's log may show follows its league's status.
ALTER TABLE leagues ADD COLUMN dice TEXT NOT NULL DEFAULT 'duplicate'
    CHECK (dice IN ('independent', 'duplicate'));
ALTER TABLE leagues ADD COLUMN seed_source TEXT NOT NULL DEFAULT 'legacy'
    CHECK (seed_source IN ('secret', 'league-file', 'legacy'));
ALTER TABLE leagues ADD COLUMN dice_secret TEXT;
ALTER TABLE leagues ADD COLUMN dice_commitment TEXT;
ALTER TABLE matches ADD COLUMN league_id BIGINT;
ALTER TABLE matches ADD COLUMN league_ordinal INTEGER;
CREATE INDEX matches_league_idx ON matches (league_id, league_ordinal);
