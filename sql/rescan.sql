--
-- rescan: a CompSpill Sort executed again and again: correlated subqueries
-- and LATERAL (parameters change), the inner side of a nested loop (no
-- parameter changes: rewind), a rescan after a partial read, and the
-- recursive part of a recursive CTE.
--
LOAD 'compspill';

CREATE TABLE ro (id int, g int);
INSERT INTO ro SELECT i, i % 6 FROM generate_series(1, 12) i;
CREATE TABLE ri (id int, g int, v int, t text);
INSERT INTO ri SELECT i, i % 6, (i * 7919) % 10007, 'r' || (i * 31 % 1000)
FROM generate_series(1, 30000) i;
ANALYZE ro, ri;

SET work_mem = '64kB';

-- (a final ORDER BY over ro sorts its 12 rows in memory: such cases say
-- 'rescanned spill', the sort run again and again must have spilled)

-- correlated subquery: a SubPlan whose Sort is rescanned with a new $1
SELECT plan_shape('SELECT id, (SELECT string_agg(t, '','') FROM (SELECT t FROM ri WHERE ri.g = ro.g ORDER BY v, ri.id) s) FROM ro ORDER BY id');
SELECT compare_sorted('SELECT id, (SELECT md5(string_agg(t, '','')) FROM (SELECT t FROM ri WHERE ri.g = ro.g ORDER BY v, ri.id) s) FROM ro ORDER BY id', 'rescanned spill');
SELECT compare_sorted('SELECT id, (SELECT md5(string_agg(t || v, '','')) FROM (SELECT t, v FROM ri WHERE ri.g = ro.g AND ri.v > ro.id * 500 ORDER BY t DESC, ri.id) s) FROM ro ORDER BY id', 'rescanned spill');
-- the subquery's result depends on the order only through the first rows
SELECT compare_sorted('SELECT id, ARRAY(SELECT v FROM ri WHERE ri.g = ro.g ORDER BY v DESC, ri.id) AS vs FROM ro ORDER BY id', 'spill');

-- a partial read, then a rescan with a new parameter: the subquery stops
-- at its first row (the filter keeps the Limit from bounding the Sort)
SELECT plan_shape('SELECT id, (SELECT v FROM (SELECT v, ri.id AS rid FROM ri WHERE ri.g = ro.g ORDER BY v, ri.id OFFSET 0) s WHERE rid % 97 = ro.id LIMIT 1) FROM ro');
SELECT compare_sorted('SELECT id, (SELECT v FROM (SELECT v, ri.id AS rid FROM ri WHERE ri.g = ro.g ORDER BY v, ri.id OFFSET 0) s WHERE rid % 97 = ro.id LIMIT 1) FROM ro ORDER BY id', 'rescanned spill');
SELECT compare_sorted('SELECT id, (SELECT rid FROM (SELECT v, ri.id AS rid FROM ri WHERE ri.g = ro.g ORDER BY v DESC, ri.id OFFSET 0) s WHERE rid % 1000 = ro.id * 10 LIMIT 1) FROM ro ORDER BY id', 'rescanned spill');
-- EXISTS stops after one row as well
SELECT compare_sorted('SELECT id FROM ro WHERE EXISTS (SELECT 1 FROM (SELECT v, ri.id AS rid FROM ri WHERE ri.g = ro.g ORDER BY v OFFSET 0) s WHERE s.rid % 5000 = ro.id) ORDER BY id', 'rescanned spill');

-- LATERAL: the Sort inside is rescanned for every outer row
SELECT plan_shape('SELECT ro.id, l.* FROM ro, LATERAL (SELECT ri.id AS rid, v FROM ri WHERE ri.g = ro.g ORDER BY v, ri.id) l');
SELECT compare_sorted('SELECT ro.id, l.* FROM ro, LATERAL (SELECT ri.id AS rid, v, t FROM ri WHERE ri.g = ro.g ORDER BY v, ri.id) l', 'spill');
SELECT compare_sorted('SELECT ro.id, l.* FROM ro, LATERAL (SELECT ri.id AS rid, t FROM ri WHERE ri.v < ro.id * 800 ORDER BY t DESC, ri.id) l', 'spill');
SELECT compare_sorted('SELECT ro.id, l.* FROM ro LEFT JOIN LATERAL (SELECT ri.id AS rid, v FROM ri WHERE ri.g = ro.g AND ro.id > 6 ORDER BY v, ri.id) l ON true', 'spill');
-- LATERAL with a window function (Sort under WindowAgg, rescanned)
SELECT compare_sorted('SELECT ro.id, l.* FROM ro, LATERAL (SELECT ri.id AS rid, row_number() OVER (ORDER BY v, ri.id) AS rn FROM ri WHERE ri.g = ro.g) l WHERE l.rn % 100 = 1', 'spill');
-- LATERAL with a partial read of each rescan
SELECT compare_sorted('SELECT ro.id, l.* FROM ro, LATERAL (SELECT * FROM (SELECT ri.id AS rid, v FROM ri WHERE ri.g = ro.g ORDER BY v DESC, ri.id OFFSET 0) s WHERE s.rid % 10 = 0 LIMIT 3) l', 'spill');

-- inner side of a nested loop, no parameters: rescanned without changes
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_material = off;
SELECT plan_shape('SELECT ro.id, s.rid FROM ro LEFT JOIN (SELECT ri.id AS rid, v FROM ri ORDER BY v, ri.id) s ON s.v % 12 = ro.id - 1');
SELECT compare_sorted('SELECT ro.id, s.rid FROM ro LEFT JOIN (SELECT ri.id AS rid, v FROM ri ORDER BY v, ri.id) s ON s.v % 12 = ro.id - 1', 'spill');
SELECT compare_sorted('SELECT ro.id, s.* FROM ro LEFT JOIN (SELECT * FROM ri ORDER BY t DESC, id) s ON s.id % 1000 = ro.id', 'spill');
-- rescanned after a partial read (a semi join stops at the first match)
-- (the planner makes it an inner join of ro with ri's rows made unique:
-- those sorts, below the Unique, run once, and spill)
SELECT compare_sorted('SELECT ro.id FROM ro WHERE EXISTS (SELECT 1 FROM (SELECT ri.id AS rid, v FROM ri ORDER BY v, ri.id OFFSET 0) s WHERE s.v = ro.id * 700) ORDER BY ro.id', 'outer spill');
-- an uncorrelated SubPlan that is not hashed is rescanned for every row
SELECT plan_shape('SELECT id FROM ro WHERE id * 800 NOT IN (SELECT v FROM ri ORDER BY v DESC)');
SELECT compare_sorted('SELECT id FROM ro WHERE id * 800 NOT IN (SELECT v FROM ri ORDER BY v DESC) ORDER BY id', 'rescanned spill');
SELECT compare_sorted('SELECT id, id * 800 > ALL (SELECT v FROM ri ORDER BY v DESC, id) FROM ro ORDER BY id', 'rescanned spill');
SET work_mem = '64MB';
SELECT compare_sorted('SELECT ro.id, s.rid FROM ro LEFT JOIN (SELECT ri.id AS rid, v FROM ri ORDER BY v, ri.id) s ON s.v % 12 = ro.id - 1', 'memory');
SET work_mem = '64kB';
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_material;

-- a merge join (marks on the inner CompSpill Sort) rescanned under a nested loop
SET enable_hashjoin = off;
SET enable_material = off;
SELECT compare_sorted('SELECT ro.id, (SELECT count(*) || '':'' || sum(a.v - b.v) FROM ri a JOIN ri b ON a.v = b.v + ro.id WHERE a.g = ro.g) FROM ro ORDER BY ro.id', 'rescanned spill');
RESET enable_hashjoin;
RESET enable_material;

-- the recursive part of a recursive CTE is rescanned at each step
SELECT compare_sorted('WITH RECURSIVE r(n, x) AS (SELECT 1, 0 UNION ALL SELECT n + 1, (SELECT v FROM (SELECT v, id FROM ri ORDER BY v DESC, id OFFSET 0) s WHERE s.id % 100 = r.n LIMIT 1) FROM r WHERE n < 8) SELECT * FROM r ORDER BY n', 'rescanned spill');

-- a rescan without EXEC_FLAG_REWIND and without a changed parameter below
-- the Sort (a nested loop's lateral side, the parameter only in a filter
-- above it) sorts the child again, as native Sort does, so a volatile
-- child gives fresh values for every outer row
CREATE SEQUENCE rs;
SELECT plan_shape('SELECT ro.id, min(l.v), max(l.v), count(*) FROM ro, LATERAL (SELECT v FROM (SELECT v, g FROM (SELECT nextval(''rs'') AS v, g FROM ri OFFSET 0) s0 ORDER BY g, v) s WHERE ro.id > 0 OFFSET 0) l GROUP BY ro.id ORDER BY ro.id');
SELECT setval('rs', 1, false) AS reset;
SELECT md5_exec_with('SELECT ro.id, min(l.v), max(l.v), count(*) FROM ro, LATERAL (SELECT v FROM (SELECT v, g FROM (SELECT nextval(''rs'') AS v, g FROM ri OFFSET 0) s0 ORDER BY g, v) s WHERE ro.id > 0 OFFSET 0) l GROUP BY ro.id ORDER BY ro.id', false) AS native_fresh \gset
SELECT setval('rs', 1, false) AS reset;
SELECT md5_exec_with('SELECT ro.id, min(l.v), max(l.v), count(*) FROM ro, LATERAL (SELECT v FROM (SELECT v, g FROM (SELECT nextval(''rs'') AS v, g FROM ri OFFSET 0) s0 ORDER BY g, v) s WHERE ro.id > 0 OFFSET 0) l GROUP BY ro.id ORDER BY ro.id', true) = :'native_fresh' AS fresh_rows_same;
SELECT last_value = 12 * 30000 AS child_read_per_outer_row FROM rs;
DROP SEQUENCE rs;

RESET work_mem;
DROP TABLE ro, ri;
