-- Luck-adjusted scores (docs/luck.md). Keep in step with
-- ../postgres/0012_luck_adjusted_scores.sql.
--
-- seat_results.adjusted_score: the seat's luck-adjusted score (knobel_engine::match_luck),
-- computed when a league match's result is recorded; NULL for other matches, for results
-- recorded before, for a match with a forfeit, and when the luck could not be computed.
--
-- leagues.luck_version: the knobel_engine::LUCK_VERSION its adjusted scores are computed
-- with, set when the league is created; NULL for leagues created before. A league's
-- adjusted scores are read only while it equals the arena's LUCK_VERSION: scores of
-- different versions are never mixed.
ALTER TABLE seat_results ADD COLUMN adjusted_score REAL;
ALTER TABLE leagues ADD COLUMN luck_version TEXT;
