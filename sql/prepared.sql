--
-- prepared: cached (generic) plans keep their CompSpill Sort after
-- compspill.enabled changes; the node looks at the setting again when the
-- plan starts and must give native results either way.
--
LOAD 'compspill';

CREATE TABLE pr (id int, g int, v int, t text);
INSERT INTO pr SELECT i, i % 10, (i * 7919) % 10007, 'p' || (i * 31 % 997)
FROM generate_series(1, 20000) i;
ANALYZE pr;

SET work_mem = '64kB';
SET plan_cache_mode = force_generic_plan;

-- native answers, for comparison
SELECT md5_exec_with('SELECT * FROM pr WHERE g >= 3 ORDER BY t, id', false) AS ref3,
       md5_exec_with('SELECT * FROM pr WHERE g >= 8 ORDER BY t, id', false) AS ref8 \gset

-- planned with compspill on
PREPARE p1(int) AS SELECT * FROM pr WHERE g >= $1 ORDER BY t, id;
EXPLAIN (COSTS OFF) EXECUTE p1(3);
SELECT md5_exec('EXECUTE p1(3)') = :'ref3' AS on_same;
SELECT md5_exec('EXECUTE p1(8)') = :'ref8' AS on_same_other_param;
SELECT cs_spill_mode('EXECUTE p1(3)') AS on_mode;
-- turned off: the cached plan still has the node, which must now sort
-- like native Sort
SET compspill.enabled = off;
EXPLAIN (COSTS OFF) EXECUTE p1(3);
SELECT md5_exec('EXECUTE p1(3)') = :'ref3' AS off_same;
SELECT md5_exec('EXECUTE p1(8)') = :'ref8' AS off_same_other_param;
-- and on again
SET compspill.enabled = on;
SELECT md5_exec('EXECUTE p1(3)') = :'ref3' AS on_again_same;
-- off inside a transaction, for one statement
BEGIN;
SET LOCAL compspill.enabled = off;
SELECT md5_exec('EXECUTE p1(8)') = :'ref8' AS local_off_same;
COMMIT;
-- an invalidation replans with the current setting
SET compspill.enabled = off;
ALTER TABLE pr ALTER COLUMN v SET STATISTICS 500;
EXPLAIN (COSTS OFF) EXECUTE p1(3);
SELECT md5_exec('EXECUTE p1(3)') = md5_exec_with('SELECT * FROM pr WHERE g >= 3 ORDER BY t, id', false) AS replanned_same;
SET compspill.enabled = on;
DEALLOCATE p1;

-- planned with compspill off, run with it on: a native Sort stays native
SET compspill.enabled = off;
PREPARE p2(int) AS SELECT id, v FROM pr WHERE g < $1 ORDER BY v DESC, id;
EXPLAIN (COSTS OFF) EXECUTE p2(5);
SET compspill.enabled = on;
EXPLAIN (COSTS OFF) EXECUTE p2(5);
SELECT md5_exec('EXECUTE p2(5)') = md5_exec_with('SELECT id, v FROM pr WHERE g < 5 ORDER BY v DESC, id', false) AS native_plan_same;
DEALLOCATE p2;

-- several sorts in one generic plan (window, merge join, final order)
SET enable_hashjoin = off;
SET enable_nestloop = off;
PREPARE p3(int, int) AS
SELECT a.id, b.id AS bid, rank() OVER (PARTITION BY a.g ORDER BY a.v, a.id, b.id)
FROM pr a JOIN pr b ON a.v = b.v + $1 WHERE a.g = $2 ORDER BY a.id, b.id;
SELECT count(*) AS compspill_sorts FROM cs_explain('EXECUTE p3(1, 2)') l WHERE l ~ 'CompSpill Sort';
SELECT md5_exec('EXECUTE p3(1, 2)') = md5_exec_with('SELECT a.id, b.id AS bid, rank() OVER (PARTITION BY a.g ORDER BY a.v, a.id, b.id) FROM pr a JOIN pr b ON a.v = b.v + 1 WHERE a.g = 2 ORDER BY a.id, b.id', false) AS multi_on_same;
SET compspill.enabled = off;
SELECT md5_exec('EXECUTE p3(1, 2)') = md5_exec_with('SELECT a.id, b.id AS bid, rank() OVER (PARTITION BY a.g ORDER BY a.v, a.id, b.id) FROM pr a JOIN pr b ON a.v = b.v + 1 WHERE a.g = 2 ORDER BY a.id, b.id', false) AS multi_off_same;
SET compspill.enabled = on;
DEALLOCATE p3;
RESET enable_hashjoin;
RESET enable_nestloop;

-- LIMIT with a parameter: the Sort still gets its bound at run time, so it
-- stays native and does a top-N heapsort
PREPARE p4(int) AS SELECT * FROM pr ORDER BY v, id LIMIT $1;
EXPLAIN (COSTS OFF) EXECUTE p4(10);
SELECT l FROM cs_explain('EXECUTE p4(10)', 'ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF') l WHERE l ~ 'Sort Method' AND l ~ 'top-N';
SELECT md5_exec('EXECUTE p4(25)') = md5_exec_with('SELECT * FROM pr ORDER BY v, id LIMIT 25', false) AS limit_same;
DEALLOCATE p4;

-- a PL/pgSQL function's cached plan
CREATE FUNCTION pr_sorted(lo int) RETURNS TABLE (id int, t text) LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY SELECT pr.id, pr.t FROM pr WHERE pr.g >= lo ORDER BY pr.t DESC, pr.id;
END $$;
SELECT md5_exec('SELECT * FROM pr_sorted(4)') = md5_exec_with('SELECT id, t FROM pr WHERE g >= 4 ORDER BY t DESC, id', false) AS plpgsql_on_1;
SELECT md5_exec('SELECT * FROM pr_sorted(4)') = md5_exec_with('SELECT id, t FROM pr WHERE g >= 4 ORDER BY t DESC, id', false) AS plpgsql_on_2;
SET compspill.enabled = off;
SELECT md5_exec('SELECT * FROM pr_sorted(4)') = md5_exec_with('SELECT id, t FROM pr WHERE g >= 4 ORDER BY t DESC, id', false) AS plpgsql_off;
SET compspill.enabled = on;
DROP FUNCTION pr_sorted(int);

RESET plan_cache_mode;
RESET work_mem;
DROP TABLE pr;
