--
-- plans: CompSpill Sort under every kind of parent that asks for sorted
-- input: WindowAgg, MergeJoin (outer and inner side), Unique, GroupAggregate,
-- SetOp, MergeAppend, InitPlan, CTE; and LIMIT, where the Sort stays native
-- and keeps its top-N heapsort.
--
LOAD 'compspill';
SELECT setseed(0.125);

CREATE TABLE pa (id int, g int, v int, t text);
INSERT INTO pa SELECT i, i % 100, (i * 7919) % 5003, 'a' || (i % 777)
FROM generate_series(1, 20000) i;
CREATE TABLE pb (id int, g int, w numeric, t text);
INSERT INTO pb SELECT i, i % 150, (i * 104729) % 1009 / 7.0, 'b' || (i % 555)
FROM generate_series(1, 15000) i;
ANALYZE pa, pb;

SET work_mem = '64kB';

-- WindowAgg: two windows, two sorts, and the final ORDER BY
SELECT plan_shape('SELECT id, row_number() OVER (PARTITION BY g ORDER BY v, id), sum(v) OVER (ORDER BY id) FROM pa ORDER BY id');
SELECT compare_sorted('SELECT id, row_number() OVER (PARTITION BY g ORDER BY v, id), sum(v) OVER (ORDER BY id) FROM pa ORDER BY id', 'spill');
SELECT compare_sorted('SELECT id, rank() OVER w, dense_rank() OVER w, lag(id) OVER w, first_value(t) OVER w FROM pa WINDOW w AS (PARTITION BY g ORDER BY v DESC, id) ORDER BY g, id', 'spill');
SELECT compare_sorted('SELECT g, v, id, count(*) OVER (PARTITION BY g ORDER BY v RANGE BETWEEN 100 PRECEDING AND 100 FOLLOWING) FROM pa ORDER BY g, v, id', 'spill');

-- MergeJoin: both inputs sorted; the inner one is marked and restored
-- (duplicate keys on both sides)
SET enable_hashjoin = off;
SET enable_nestloop = off;
SELECT plan_shape('SELECT pa.id, pb.id FROM pa JOIN pb ON pa.g = pb.g');
-- (pa.v < 50 leaves pa about 200 rows: that side sorts in memory)
SELECT compare_rows('SELECT pa.id, pb.id FROM pa JOIN pb ON pa.g = pb.g AND pa.v < 50', 'some spill');
SELECT compare_rows('SELECT pa.id, pb.id, pa.t, pb.t AS bt FROM pa JOIN pb ON pa.t = ''a'' || substr(pb.t, 2) WHERE pa.id % 3 = 0', 'spill');
SELECT compare_rows('SELECT pa.id, pb.id FROM pa LEFT JOIN pb ON pa.id = pb.id * 2', 'spill');
SELECT compare_rows('SELECT pa.id, pb.id FROM pa FULL JOIN pb ON pa.id = pb.id + 10000', 'spill');
-- (pb.id < 300 leaves the inner side 299 rows, sorted in memory)
SELECT compare_rows('SELECT pa.id FROM pa WHERE EXISTS (SELECT 1 FROM pb WHERE pb.g = pa.g AND pb.id < 300)', 'outer spill');
SELECT compare_rows('SELECT pa.id FROM pa WHERE NOT EXISTS (SELECT 1 FROM pb WHERE pb.id = pa.id)', 'spill');
-- a merge join whose output is then sorted again (pa.v < 30 leaves pa's
-- side about 120 rows, sorted in memory)
SELECT compare_sorted('SELECT pa.id, pb.id AS bid FROM pa JOIN pb ON pa.g = pb.g AND pa.v < 30 ORDER BY pb.id, pa.id', 'some spill');
-- three-way merge join on the same key
SELECT compare_rows('SELECT a1.id, a2.id, pb.id FROM pa a1 JOIN pa a2 ON a1.id = a2.id JOIN pb ON pb.id = a1.id', 'spill');
-- with Material disabled, the inner CompSpill Sort is marked and restored:
-- that one (the merge join's inner side) must have spilled
SET enable_material = off;
SELECT plan_shape('SELECT pa.id, pb.id FROM pa JOIN pb ON pa.g = pb.g');
SELECT compare_rows('SELECT pa.id, pb.id FROM pa JOIN pb ON pa.g = pb.g AND pb.id % 7 = 0', 'inner spill');
SELECT compare_rows('SELECT pa.id, pb.id FROM pa FULL JOIN pb ON pa.id = pb.id + 10000', 'inner spill');
SELECT compare_rows('SELECT pa.id, pb.id FROM pa JOIN pb ON pa.g = pb.g AND pa.v < 50', 'inner spill');
RESET enable_material;
SET work_mem = '4MB';
SELECT compare_rows('SELECT pa.id, pb.id FROM pa JOIN pb ON pa.g = pb.g AND pa.v < 50', 'memory');
SET work_mem = '64kB';
RESET enable_hashjoin;
RESET enable_nestloop;

-- Unique, GroupAggregate, SetOp: no hashing allowed
SET enable_hashagg = off;
SELECT plan_shape('SELECT DISTINCT g, v FROM pa ORDER BY g, v');
SELECT compare_sorted('SELECT DISTINCT g, v FROM pa ORDER BY g, v', 'spill');
SELECT compare_sorted('SELECT DISTINCT t FROM pa', 'spill');
SELECT compare_sorted('SELECT DISTINCT ON (g) g, v, id FROM pa ORDER BY g, v DESC, id', 'spill');
SELECT plan_shape('SELECT g, count(*) FROM pa GROUP BY g');
SELECT compare_sorted('SELECT g, count(*), sum(v), min(t), max(id) FROM pa GROUP BY g', 'spill');
SELECT compare_sorted('SELECT t, g, count(*) FROM pa GROUP BY t, g ORDER BY count(*) DESC, t, g', 'spill');
SELECT compare_sorted('SELECT g, string_agg(t, '','' ORDER BY t, id) FROM pa GROUP BY g HAVING count(*) > 10', 'spill');
SELECT compare_sorted('SELECT g, v, count(*) FROM pa GROUP BY ROLLUP (g, v)', 'spill');
-- (18 sorts each input of a SetOp on its own, 15 sorts their Append)
SELECT l ~ '^SetOp' AS setop_on_top,
       (SELECT count(*) FROM plan_shape('SELECT g FROM pa INTERSECT SELECT g FROM pb') x
         WHERE x ~ 'CompSpill Sort') >= 1 AS compspill_sorts,
       (SELECT count(*) FROM plan_shape('SELECT g FROM pa INTERSECT SELECT g FROM pb') x
         WHERE x ~ '(^|->  )Sort$') = 0 AS no_native_sort
FROM plan_shape('SELECT g FROM pa INTERSECT SELECT g FROM pb') l LIMIT 1;
SELECT compare_sorted('SELECT g FROM pa INTERSECT SELECT g FROM pb', 'spill');
SELECT compare_sorted('SELECT g, v % 10 FROM pa INTERSECT ALL SELECT g, id % 10 FROM pb', 'spill');
SELECT compare_sorted('SELECT t FROM pa EXCEPT SELECT ''a'' || substr(t, 2) FROM pb', 'spill');
SELECT compare_sorted('SELECT g FROM pa EXCEPT ALL SELECT g FROM pb', 'spill');
SELECT compare_sorted('SELECT g, t FROM pa UNION SELECT g, t FROM pb', 'spill');
RESET enable_hashagg;

-- MergeAppend: over a partitioned table, and over UNION ALL
CREATE TABLE pp (id int, k int, t text) PARTITION BY RANGE (id);
CREATE TABLE pp1 PARTITION OF pp FOR VALUES FROM (MINVALUE) TO (7000);
CREATE TABLE pp2 PARTITION OF pp FOR VALUES FROM (7000) TO (14000);
CREATE TABLE pp3 PARTITION OF pp FOR VALUES FROM (14000) TO (MAXVALUE);
INSERT INTO pp SELECT i, (i * 37) % 1001, 'p' || (i % 321) FROM generate_series(1, 21000) i;
CREATE INDEX ON pp2 (k, id);
ANALYZE pp;
SELECT plan_shape('SELECT * FROM pp ORDER BY k, id');
SELECT compare_sorted('SELECT * FROM pp ORDER BY k, id', 'spill');
SELECT compare_sorted('SELECT * FROM pp ORDER BY k DESC, id DESC', 'spill');
SELECT compare_sorted('SELECT * FROM pp WHERE id % 2 = 0 ORDER BY k, id', 'spill');
SELECT plan_shape('SELECT * FROM pp ORDER BY k, id LIMIT 5');
CREATE TABLE pc (id int, g int);
INSERT INTO pc SELECT i, i % 150 FROM generate_series(1, 15000) i;
CREATE INDEX ON pc (g, id);
VACUUM ANALYZE pc;
SELECT plan_shape('SELECT id, v FROM pa UNION ALL SELECT id, g FROM pc ORDER BY v, id');
SELECT compare_sorted('SELECT id, v FROM pa UNION ALL SELECT id, g FROM pc ORDER BY v, id', 'spill');
SELECT plan_shape('SELECT id, v FROM pa UNION ALL SELECT id, g FROM pc ORDER BY v, id LIMIT 5');
-- without the index, one Sort above Append
SELECT plan_shape('SELECT id, v FROM pa UNION ALL SELECT id, g FROM pb ORDER BY v, id');
SELECT compare_sorted('SELECT id, v FROM pa UNION ALL SELECT id, g FROM pb ORDER BY v, id', 'spill');
SELECT compare_sorted('(SELECT id, t FROM pa ORDER BY t, id) UNION ALL (SELECT id, t FROM pb ORDER BY t DESC, id)', 'spill');

-- InitPlan, CTE and sublinks
SELECT plan_shape('SELECT id FROM pb WHERE id < 5 AND g = ANY (ARRAY(SELECT v FROM pa ORDER BY v, id))');
SELECT compare_sorted('SELECT id, (SELECT string_agg(t, '','') FROM (SELECT t FROM pa ORDER BY t DESC, id) s) FROM pb WHERE id < 3', 'spill');
SELECT compare_sorted('SELECT array_length(ARRAY(SELECT v FROM pa ORDER BY v, id), 1), (ARRAY(SELECT v FROM pa ORDER BY v DESC, id))[1:5]', 'spill');
-- (the CTE's sort spills; the join's 99 rows sort in memory)
SELECT compare_sorted('WITH s AS MATERIALIZED (SELECT id, v FROM pa ORDER BY v, id) SELECT a.id, b.id FROM s a JOIN s b ON a.id = b.v WHERE a.id < 100 ORDER BY a.id, b.id', 'some spill');
SELECT compare_sorted('WITH s AS MATERIALIZED (SELECT id, t FROM pb ORDER BY t, id) SELECT * FROM s', 'spill');
SELECT compare_sorted('SELECT * FROM (SELECT id, t FROM pb ORDER BY t, id) s WHERE id % 5 = 0', 'spill');

-- LIMIT: the Sort stays native and runs a top-N heapsort
SELECT plan_shape('SELECT * FROM pa ORDER BY v, id LIMIT 10');
-- (native's own figures left out: 18 prints rows=10.00, and its memory)
SELECT regexp_replace(regexp_replace(l, 'rows=(\d+)(\.\d+)?', 'rows=\1'), 'Memory: \d+kB', 'Memory: NkB') AS l
FROM cs_explain('SELECT * FROM pa ORDER BY v, id LIMIT 10', 'ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF') l
WHERE l ~ 'Sort Method' OR l ~ 'Sort' AND l !~ 'Key';
-- through a subquery (removed by the planner), with OFFSET, through Append
SELECT plan_shape('SELECT * FROM (SELECT * FROM pa ORDER BY v, id) s LIMIT 10');
SELECT plan_shape('SELECT * FROM pa ORDER BY t, id LIMIT 10 OFFSET 100');
SELECT plan_shape('SELECT * FROM pp ORDER BY t, id LIMIT 5');
SELECT plan_shape('(SELECT id FROM pa ORDER BY t, id) UNION ALL (SELECT id FROM pb ORDER BY t, id) LIMIT 5');
SELECT bool_and(l !~ 'CompSpill') AS all_native,
       count(*) FILTER (WHERE l ~ 'Sort Method: top-N heapsort') AS top_n_sorts
FROM cs_explain('SELECT * FROM pp ORDER BY t, id LIMIT 5', 'ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF') l;
-- the top-N rows are those a CompSpill Sort puts first (a LIMIT over an
-- OFFSET it cannot see through keeps the sort from being bounded)
SELECT position('CompSpill Sort' IN cs_plan('SELECT * FROM (SELECT * FROM pa ORDER BY v, id OFFSET (random() * 0)::int) s LIMIT 10')) > 0 AS unbounded_is_compspill;
SELECT cs_digest('SELECT * FROM pa ORDER BY v, id LIMIT 10', true)
     = cs_digest('SELECT * FROM (SELECT * FROM pa ORDER BY v, id OFFSET (random() * 0)::int) s LIMIT 10', true) AS limit_same;
SELECT cs_digest('SELECT * FROM pa ORDER BY t DESC, id LIMIT 10 OFFSET 19985', true)
     = cs_digest('SELECT * FROM (SELECT * FROM pa ORDER BY t DESC, id OFFSET (random() * 0)::int) s LIMIT 10 OFFSET 19985', true) AS limit_offset_same;
-- a Sort that gets no bound (a filter stands between it and the Limit) is
-- replaced, and stops early
SELECT plan_shape('SELECT * FROM (SELECT * FROM pa ORDER BY v, id OFFSET 0) s WHERE t <> ''a1'' LIMIT 10');
SELECT compare_sorted('SELECT * FROM (SELECT * FROM pa ORDER BY v, id OFFSET 0) s WHERE t <> ''a1'' LIMIT 10', 'spill');
SELECT compare_sorted('SELECT * FROM (SELECT * FROM pa ORDER BY v, id OFFSET 0) s WHERE id % 1000 = 0 LIMIT 3', 'spill');
-- WITH TIES gets no bound either
SELECT compare_rows('SELECT * FROM pa ORDER BY g FETCH FIRST 10 ROWS WITH TIES', 'spill');
-- a window function over a Limit over a Sort
SELECT compare_sorted('SELECT id, sum(v) OVER (ORDER BY t, id) FROM (SELECT * FROM pa ORDER BY v, id LIMIT 1000) s', 'spill');

-- compspill.enabled = off leaves the plan alone
SELECT plan_shape('SELECT * FROM pa ORDER BY v, id', false);

RESET work_mem;
DROP TABLE pa, pb, pc, pp;
