-- Room on match_seats' pages for each seat's one update (issue 24). Keep in step with
-- ../postgres/0014_match_seats_fillfactor.sql.
--
-- SQLite rewrites a row in place and has no fill factor: nothing to change. The planner's
-- statistics are brought up to date after 0013 moved the seat results into match_seats.
ANALYZE match_seats;
