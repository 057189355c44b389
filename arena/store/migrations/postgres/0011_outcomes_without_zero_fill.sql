-- Stored outcomes leave out what their game does not have (RULES.md A.7: never
-- zero-filled): Schocken has no chips; Sjokken no halves lost or chips; Zokken no loser,
-- tokens or halves lost. Outcomes stored before this migration had them as zeros (and a
-- null loser); the engine reads both forms. Keep in step with
-- ../sqlite/0011_outcomes_without_zero_fill.sql.
UPDATE matches SET outcome_json = (outcome_json::jsonb - 'chips')::text
 WHERE outcome_json IS NOT NULL AND game = 'schocken';
UPDATE matches SET outcome_json = (outcome_json::jsonb - ARRAY['halves_lost', 'chips'])::text
 WHERE outcome_json IS NOT NULL AND game = 'sjokken';
UPDATE matches SET outcome_json = (outcome_json::jsonb - ARRAY['loser', 'tokens', 'halves_lost'])::text
 WHERE outcome_json IS NOT NULL AND game = 'zokken';
