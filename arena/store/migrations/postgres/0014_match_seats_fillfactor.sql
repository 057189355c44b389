-- Room on match_seats' pages for each seat's one update (issue 24). Keep in step with
-- ../sqlite/0014_match_seats_fillfactor.sql.
--
-- A seat's row is inserted when its match starts and updated once, with its result, when
-- the match finishes (0013). With pages filled to 70%, that update usually fits on the row's
-- own page: PostgreSQL then writes it without new entries in match_seats' three indexes
-- (a heap-only tuple), and recording results is as fast as it was when they were inserted
-- into a table of their own (docs/benchmarks.md, "Stored results per second"). Pages
-- written before keep their fill until they are rewritten.
ALTER TABLE match_seats SET (fillfactor = 70);
ANALYZE match_seats;
