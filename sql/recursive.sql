--
-- recursive: WITH RECURSIVE through the CompSpill Recursive Union and its
-- CompSpill WorkTable Scan, whose working and intermediate tables are one
-- compressed store.  Graph walks that spill, UNION and UNION ALL, SEARCH
-- and CYCLE, many column types, toasted values, empty, single and many
-- small iterations, rescans (correlated subqueries, LATERAL), cursors,
-- nested recursive CTEs, parallel scans below, encryption, each codec,
-- and the fall back to native tuplestores when compspill.enabled is off
-- at executor start.  Each result is compared with native PostgreSQL's,
-- and each check says how the union's store must have kept its rows.
--
LOAD 'compspill';

-- a binary tree: node n has children 2n and 2n + 1, up to 65535
CREATE TABLE rg_tree (src int, dst int);
INSERT INTO rg_tree SELECT n, 2 * n + c FROM generate_series(1, 32767) n, (VALUES (0), (1)) v(c);
CREATE INDEX ON rg_tree (src);
-- a graph with cycles on 20000 nodes
CREATE TABLE rg_cyc (src int, dst int);
INSERT INTO rg_cyc SELECT n, (n * 3 + 1) % 20000 FROM generate_series(0, 19999) n;
INSERT INTO rg_cyc SELECT n, (n + 7) % 20000 FROM generate_series(0, 19999) n;
CREATE INDEX ON rg_cyc (src);
-- a small graph with cycles, for CYCLE
CREATE TABLE rg_small (src int, dst int);
INSERT INTO rg_small SELECT n, (n * 5 + 3) % 400 FROM generate_series(0, 399) n;
INSERT INTO rg_small SELECT n, (n + 1) % 400 FROM generate_series(0, 399) n;
-- toasted values
CREATE TABLE rg_toast (id int, big text);
ALTER TABLE rg_toast ALTER COLUMN big SET STORAGE EXTERNAL;
INSERT INTO rg_toast SELECT i, string_agg(md5((i * 1000 + j)::text), '') FROM generate_series(1, 30) i, generate_series(1, 200) j GROUP BY i;
ANALYZE rg_tree, rg_cyc, rg_small, rg_toast;

SET work_mem = '64kB';

-- the walk of the tree, breadth by breadth: 65535 rows, spilled
SELECT compare_recursive($q$WITH RECURSIVE w(n, depth, path) AS (SELECT 1, 0, '1'::text UNION ALL SELECT t.dst, w.depth + 1, w.path || '/' || t.dst FROM w JOIN rg_tree t ON t.src = w.n) SELECT * FROM w$q$, 'spill') AS tree_walk;
-- the same in memory
SET work_mem = '16MB';
SELECT compare_recursive($q$WITH RECURSIVE w(n, depth, path) AS (SELECT 1, 0, '1'::text UNION ALL SELECT t.dst, w.depth + 1, w.path || '/' || t.dst FROM w JOIN rg_tree t ON t.src = w.n) SELECT * FROM w$q$, 'memory') AS tree_walk_memory;
SET work_mem = '64kB';
-- the walk's rows in the order the union returns them
SELECT compare_recursive($q$WITH RECURSIVE w(n, depth) AS (SELECT 1, 0 UNION ALL SELECT t.dst, w.depth + 1 FROM w JOIN rg_tree t ON t.src = w.n) SELECT * FROM w$q$, 'spill', 'ordered') AS tree_walk_ordered;

-- UNION drops the rows seen before: the walk of a graph with cycles ends
SELECT compare_recursive($q$WITH RECURSIVE r(n, h) AS (SELECT 0, md5('0') UNION SELECT c.dst, md5(c.dst::text) FROM r JOIN rg_cyc c ON c.src = r.n) SELECT * FROM r$q$, 'spill') AS union_cycles;
-- UNION ALL of the same, bounded by depth
SELECT compare_recursive($q$WITH RECURSIVE r(n, d, h) AS (SELECT 0, 0, md5('0') UNION ALL SELECT c.dst, r.d + 1, md5(c.dst::text) FROM r JOIN rg_cyc c ON c.src = r.n WHERE r.d < 12) SELECT * FROM r$q$, 'spill') AS union_all_cycles;
-- UNION whose non-recursive term has duplicates
SELECT compare_recursive($q$WITH RECURSIVE r(n, s) AS (SELECT g % 500, repeat('v', 30) FROM generate_series(1, 3000) g UNION SELECT (n * 7 + 1) % 3000, s FROM r) SELECT * FROM r$q$, 'spill') AS union_duplicates;

-- SEARCH DEPTH FIRST and BREADTH FIRST, in the order they give; BREADTH
-- FIRST's ordering column is a record, so that recursive CTE stays native
-- (EXPLAIN VERBOSE can name a field of a CTE's record column only from the
-- native scan's plan): the check says so
SELECT compare_recursive($q$WITH RECURSIVE w(n, p) AS (SELECT 1, repeat('d', 20) UNION ALL SELECT t.dst, w.p FROM w JOIN rg_tree t ON t.src = w.n WHERE t.dst < 16384) SEARCH DEPTH FIRST BY n SET ord SELECT n, p, ord FROM w ORDER BY ord$q$, 'spill', 'ordered') AS search_depth;
SELECT compare_recursive($q$WITH RECURSIVE w(n, p) AS (SELECT 1, repeat('b', 20) UNION ALL SELECT t.dst, w.p FROM w JOIN rg_tree t ON t.src = w.n WHERE t.dst < 16384) SEARCH BREADTH FIRST BY n SET ord SELECT n, p, ord FROM w ORDER BY ord$q$, 'spill', 'ordered') AS search_breadth;
-- CYCLE marks the row that closes a cycle and stops there
SELECT compare_recursive($q$WITH RECURSIVE w(n, d) AS (SELECT 0, 0 UNION ALL SELECT s.dst, w.d + 1 FROM w JOIN rg_small s ON s.src = w.n WHERE w.d < 14) CYCLE n SET is_cycle USING path SELECT * FROM w$q$, 'spill') AS cycle_clause;
SELECT compare_recursive($q$WITH RECURSIVE w(n, d) AS (SELECT 0, 0 UNION ALL SELECT s.dst, w.d + 1 FROM w JOIN rg_small s ON s.src = w.n WHERE w.d < 14) CYCLE n SET is_cycle TO 'y' DEFAULT 'n' USING path SELECT n, d, is_cycle FROM w WHERE is_cycle = 'y'$q$, 'spill') AS cycle_marked;
-- SEARCH and CYCLE together (BREADTH FIRST: native, as above)
SELECT compare_recursive($q$WITH RECURSIVE w(n, d) AS (SELECT 0, 0 UNION ALL SELECT s.dst, w.d + 1 FROM w JOIN rg_small s ON s.src = w.n WHERE w.d < 13) SEARCH BREADTH FIRST BY n SET ord CYCLE n SET is_cycle USING path SELECT * FROM w ORDER BY ord, path$q$, 'spill', 'ordered') AS search_and_cycle;

-- text, bytea, numeric and NULL columns carried through the iterations
SELECT compare_recursive($q$WITH RECURSIVE w(n, t, b, x, z) AS (SELECT 1, 'a'::text, '\x00ff'::bytea, 1.5::numeric, NULL::int UNION ALL SELECT n + 1, CASE WHEN n % 5 = 0 THEN NULL ELSE t || chr(97 + n % 26) END, CASE WHEN n % 7 = 0 THEN NULL ELSE decode(md5(n::text), 'hex') END, x * 1.01 + n / 3.0, CASE WHEN n % 3 = 0 THEN n END FROM w WHERE n < 3000) SELECT n, length(t), t, b, round(x, 6), z FROM w$q$, 'spill') AS types;
-- toasted values, a few iterations over each
SELECT compare_recursive($q$WITH RECURSIVE w(id, k, d, big, pad) AS (SELECT id, k, 0, big, repeat('t', 100) FROM rg_toast, generate_series(1, 50) k UNION ALL SELECT id, k, d + 1, big, pad FROM w WHERE d < 3) SELECT id, k, d, md5(big), length(big), pad FROM w$q$, 'spill') AS toasted;
-- a recursive term that reads the work table and returns nothing
SELECT compare_recursive($q$WITH RECURSIVE w(n, s) AS (SELECT g, repeat('e', 40) FROM generate_series(1, 5000) g UNION ALL SELECT n, s FROM w WHERE n < 0) SELECT * FROM w$q$, 'spill') AS empty_recursive_term;
-- a recursive term proven empty by the planner: no work table scan at all
SELECT compare_recursive($q$WITH RECURSIVE w(n, s) AS (SELECT g, repeat('e', 40) FROM generate_series(1, 5000) g UNION ALL SELECT n, s FROM w WHERE false) SELECT * FROM w$q$, 'spill') AS recursive_term_false;
-- one iteration only
SELECT compare_recursive($q$WITH RECURSIVE w(n, d, s) AS (SELECT g, 0, repeat('o', 40) FROM generate_series(1, 3000) g UNION ALL SELECT n + 1, d + 1, s FROM w WHERE d < 1) SELECT * FROM w$q$, 'spill') AS one_iteration;
-- many small iterations: one row each, 6000 of them; the working and
-- intermediate tables then hold a row each, and stay in memory (as
-- native's do) though all the rows (1.5MB) would not fit in work_mem
SET work_mem = '1MB';
SELECT compare_recursive($q$WITH RECURSIVE w(n, s) AS (SELECT 1, repeat('m', 200) UNION ALL SELECT n + 1, s FROM w WHERE n < 6000) SELECT * FROM w$q$, 'memory', 'ordered') AS many_iterations;
SET work_mem = '64kB';
-- 40 iterations of 600 rows: each spills, over the file space the
-- iteration before last gave back
SELECT compare_recursive($q$WITH RECURSIVE w(n, d, s) AS (SELECT g, 0, repeat('m', 100) FROM generate_series(1, 600) g UNION ALL SELECT n + 600, d + 1, s FROM w WHERE d < 40) SELECT * FROM w$q$, 'spill') AS many_spilled_iterations;
-- a nested loop rescans the work table within each iteration
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_material = off;
SELECT compare_recursive($q$WITH RECURSIVE w(n, d, s) AS (SELECT g, 0, repeat('l', 30) FROM generate_series(1, 40) g UNION ALL SELECT w.n + k.k, w.d + 1, w.s FROM generate_series(1, 3) k(k) JOIN w ON w.n % 3 <> k.k WHERE w.d < 5) SELECT * FROM w$q$, 'spill') AS work_table_rescanned;
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_material;

-- the union rescanned with a new parameter: a correlated subquery, and
-- LATERAL under a nested loop
SELECT compare_recursive($q$SELECT o.g, (WITH RECURSIVE w(n, d, s) AS (SELECT o.g * 10000 + k, 0, repeat('c', 60) FROM generate_series(1, 1200) k UNION ALL SELECT n + 1, d + 1, s FROM w WHERE d < 2) SELECT count(*) || ':' || sum(n) || ':' || max(s) FROM w) FROM generate_series(1, 6) o(g)$q$, 'rescanned spill') AS correlated;
SELECT compare_recursive($q$SELECT o.g, x.* FROM generate_series(1, 4) o(g), LATERAL (WITH RECURSIVE w(n, d, s) AS (SELECT o.g * 10000 + k, 0, repeat('z', 50) FROM generate_series(1, 1000 + o.g) k UNION ALL SELECT n + o.g, d + 1, s FROM w WHERE d < 2) SELECT n, d, s FROM w) x$q$, 'rescanned spill') AS lateral_rescan;

-- a recursive CTE inside another: in the non-recursive term, and in the
-- recursive term, where it is rescanned for each row of the work table
SELECT compare_recursive($q$WITH RECURSIVE o(n, k, s) AS (SELECT n, 0, s FROM (WITH RECURSIVE i(n, s) AS (SELECT g, repeat('i', 40) FROM generate_series(1, 1500) g UNION ALL SELECT n + 1500, s FROM i WHERE n <= 3000) SELECT n, s FROM i) x UNION ALL SELECT n, k + 1, s FROM o WHERE k < 2) SELECT * FROM o$q$, 'spill') AS nested_in_non_recursive;
SELECT compare_recursive($q$WITH RECURSIVE o(n, k) AS (SELECT g, 0 FROM generate_series(1, 6) g UNION ALL SELECT o.n, o.k + 1 FROM o, LATERAL (WITH RECURSIVE i(m, s) AS (SELECT g, repeat('j', 50) FROM generate_series(1, 1200 + o.n) g UNION ALL SELECT m + 10000, s FROM i WHERE m < 10000) SELECT count(*) AS c, max(s) AS s FROM i) y WHERE o.k < 2 AND y.c > 0) SELECT * FROM o$q$, 'rescanned spill, some memory') AS nested_in_recursive;

-- a parallel scan below: a Gather in the non-recursive term
CREATE TABLE rg_par (id int, t text) WITH (parallel_workers = 2);
INSERT INTO rg_par SELECT i, repeat('p', 30) || i FROM generate_series(1, 20000) i;
ANALYZE rg_par;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SELECT position('Gather' IN cs_plan($q$WITH RECURSIVE w(id, d, t) AS (SELECT id, 0, t FROM rg_par WHERE id % 4 = 0 UNION ALL SELECT id, d + 1, t FROM w WHERE d < 2) SELECT * FROM w$q$)) > 0 AS has_gather;
SELECT compare_recursive($q$WITH RECURSIVE w(id, d, t) AS (SELECT id, 0, t FROM rg_par WHERE id % 4 = 0 UNION ALL SELECT id, d + 1, t FROM w WHERE d < 2) SELECT * FROM w$q$, 'spill') AS parallel_below;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;

-- each codec, and encryption
SET compspill.codec = 'none';
SELECT compare_recursive($q$WITH RECURSIVE w(n, depth, path) AS (SELECT 1, 0, '1'::text UNION ALL SELECT t.dst, w.depth + 1, w.path || '/' || t.dst FROM w JOIN rg_tree t ON t.src = w.n) SELECT * FROM w$q$, 'spill') AS codec_none;
SET compspill.codec = 'lz4';
SELECT compare_recursive($q$WITH RECURSIVE w(n, depth, path) AS (SELECT 1, 0, '1'::text UNION ALL SELECT t.dst, w.depth + 1, w.path || '/' || t.dst FROM w JOIN rg_tree t ON t.src = w.n) SELECT * FROM w$q$, 'spill') AS codec_lz4;
SET compspill.codec = 'zstd';
SELECT compare_recursive($q$WITH RECURSIVE w(n, depth, path) AS (SELECT 1, 0, '1'::text UNION ALL SELECT t.dst, w.depth + 1, w.path || '/' || t.dst FROM w JOIN rg_tree t ON t.src = w.n) SELECT * FROM w$q$, 'spill') AS codec_zstd;
-- the codec the spill figures name is the one asked for
SELECT n->>'Spill Codec' AS codec_named
  FROM cs_provider_nodes(cs_analyze_json($q$WITH RECURSIVE w(n, d) AS (SELECT 1, 0 UNION ALL SELECT t.dst, w.d + 1 FROM w JOIN rg_tree t ON t.src = w.n) SELECT * FROM w$q$), 'CompSpill Recursive Union') n;
SET compspill.codec = 'auto';
SELECT compare_recursive($q$WITH RECURSIVE w(n, depth, path) AS (SELECT 1, 0, '1'::text UNION ALL SELECT t.dst, w.depth + 1, w.path || '/' || t.dst FROM w JOIN rg_tree t ON t.src = w.n) SELECT * FROM w$q$, 'spill') AS codec_auto;
RESET compspill.codec;
SET compspill.encryption = 'aes-256-gcm';
SELECT compare_recursive($q$WITH RECURSIVE w(n, depth, path) AS (SELECT 1, 0, '1'::text UNION ALL SELECT t.dst, w.depth + 1, w.path || '/' || t.dst FROM w JOIN rg_tree t ON t.src = w.n) SELECT * FROM w$q$, 'spill') AS encrypted;
SELECT n->>'Spill Encryption' AS encryption_named
  FROM cs_provider_nodes(cs_analyze_json($q$WITH RECURSIVE w(n, d) AS (SELECT 1, 0 UNION ALL SELECT t.dst, w.d + 1 FROM w JOIN rg_tree t ON t.src = w.n) SELECT * FROM w$q$), 'CompSpill Recursive Union') n;
RESET compspill.encryption;

-- cursors: a plain one fetched in pieces, and a scroll cursor read
-- backward and jumped around (the CTE Scan above the union keeps the
-- rows), next to native cursors doing the same
SELECT cs_store_mode($q$WITH RECURSIVE w(n, s) AS (SELECT 1, repeat('k', 100) UNION ALL SELECT n + 1, s || n % 10 FROM w WHERE n < 3000) SELECT * FROM w$q$, 'CompSpill Recursive Union') AS cursor_query_mode;
BEGIN;
DECLARE rc CURSOR FOR WITH RECURSIVE w(n, s) AS (SELECT 1, repeat('k', 100) UNION ALL SELECT n + 1, s || n % 10 FROM w WHERE n < 3000) SELECT * FROM w;
DECLARE rs SCROLL CURSOR FOR WITH RECURSIVE w(n, s) AS (SELECT 1, repeat('k', 100) UNION ALL SELECT n + 1, s || n % 10 FROM w WHERE n < 3000) SELECT * FROM w;
SET LOCAL compspill.enabled = off;
DECLARE nc CURSOR FOR WITH RECURSIVE w(n, s) AS (SELECT 1, repeat('k', 100) UNION ALL SELECT n + 1, s || n % 10 FROM w WHERE n < 3000) SELECT * FROM w;
DECLARE ns SCROLL CURSOR FOR WITH RECURSIVE w(n, s) AS (SELECT 1, repeat('k', 100) UNION ALL SELECT n + 1, s || n % 10 FROM w WHERE n < 3000) SELECT * FROM w;
SELECT md5_exec('FETCH 1000 FROM rc') = md5_exec('FETCH 1000 FROM nc') AS cursor_first;
SELECT md5_exec('FETCH ALL FROM rc') = md5_exec('FETCH ALL FROM nc') AS cursor_rest;
SELECT md5_exec('FETCH 2500 FROM rs') = md5_exec('FETCH 2500 FROM ns') AS scroll_forward;
SELECT md5_exec('FETCH BACKWARD 1200 FROM rs') = md5_exec('FETCH BACKWARD 1200 FROM ns') AS scroll_backward;
SELECT md5_exec('FETCH ABSOLUTE 77 FROM rs') = md5_exec('FETCH ABSOLUTE 77 FROM ns') AS scroll_absolute;
SELECT md5_exec('FETCH FORWARD ALL FROM rs') = md5_exec('FETCH FORWARD ALL FROM ns') AS scroll_to_end;
SELECT md5_exec('FETCH BACKWARD ALL FROM rs') = md5_exec('FETCH BACKWARD ALL FROM ns') AS scroll_to_start;
COMMIT;

-- compspill.enabled off at executor start: a cached plan keeps the pair,
-- which then keeps native's two tuplestores
SET plan_cache_mode = force_generic_plan;
PREPARE rp(int) AS WITH RECURSIVE w(n, s) AS (SELECT $1 + g, repeat('q', 100) FROM generate_series(1, 1000) g UNION ALL SELECT n + 1000, s FROM w WHERE n < $1 + 3000) SELECT * FROM w;
SELECT md5_exec('EXECUTE rp(5)') = md5_exec_with($q$WITH RECURSIVE w(n, s) AS (SELECT 5 + g, repeat('q', 100) FROM generate_series(1, 1000) g UNION ALL SELECT n + 1000, s FROM w WHERE n < 3005) SELECT * FROM w$q$, false) AS prepared_on_same;
SELECT cs_store_mode('EXECUTE rp(5)', 'CompSpill Recursive Union') AS prepared_on_mode;
SET compspill.enabled = off;
SELECT position('CompSpill Recursive Union' IN string_agg(l, E'\n')) > 0 AS plan_keeps_node FROM cs_explain('EXECUTE rp(5)', 'COSTS OFF', false) l;
SELECT md5_exec('EXECUTE rp(7)') = md5_exec_with($q$WITH RECURSIVE w(n, s) AS (SELECT 7 + g, repeat('q', 100) FROM generate_series(1, 1000) g UNION ALL SELECT n + 1000, s FROM w WHERE n < 3007) SELECT * FROM w$q$, false) AS prepared_off_same;
SELECT cs_store_mode('EXECUTE rp(5)', 'CompSpill Recursive Union', false) AS prepared_off_mode;
SET compspill.enabled = on;
DEALLOCATE rp;
RESET plan_cache_mode;

-- EXPLAIN: the pair in the plan, and the union's spill figures
SELECT plan_shape($q$WITH RECURSIVE w(n, s) AS (SELECT 1, repeat('m', 200) UNION ALL SELECT n + 1, s FROM w WHERE n < 4000) SELECT * FROM w$q$);
-- a SubPlan in the work table scan's filter is listed under the scan, at
-- the depth native lists it
SELECT array_agg(length(l) - length(ltrim(l))) FILTER (WHERE l ~ 'SubPlan|WorkTable Scan') AS subplan_depths, bool_or(l ~ 'CompSpill WorkTable Scan') AS compspill
  FROM (VALUES (false), (true)) v(e),
       plan_shape($q$WITH RECURSIVE w(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM w WHERE n < (SELECT max(dst) FROM rg_small s WHERE s.src = w.n) + 0) SELECT * FROM w$q$, e) l
 GROUP BY e ORDER BY e;
SELECT (regexp_match(l, '^ *([A-Za-z /]+): '))[1] AS figure, count(*)
  FROM cs_explain($q$WITH RECURSIVE w(n, d) AS (SELECT 1, 0 UNION ALL SELECT t.dst, w.d + 1 FROM w JOIN rg_tree t ON t.src = w.n) SELECT count(*) FROM w$q$, 'ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF') l
 WHERE l ~ '^ *(Storage|Peak Memory|Spill[^:]*): '
 GROUP BY 1 ORDER BY 1;
RESET work_mem;
