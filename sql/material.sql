--
-- material: every Material node becomes a CompSpill Material, which keeps
-- its rows in memory within work_mem and beyond it in a compressed run.
-- Nested loops rescan it (thousands of times, sometimes stopping early),
-- merge joins mark and restore on it, uncorrelated subqueries read it
-- partly; a CompSpill Sort on a merge join's inner side is marked and
-- restored itself.  Every result is compared with native PostgreSQL, and
-- the plans must show the compressed path, not a fallback.
--
LOAD 'compspill';

-- no autovacuum: an analyze of its own would invalidate the cached plan
-- that the prepared statements below keep on purpose
CREATE TABLE mo (id int, g int) WITH (autovacuum_enabled = off);
INSERT INTO mo SELECT i, i % 50 FROM generate_series(1, 2000) i;
CREATE TABLE mi (id int, g int, v int, t text, n numeric, b bytea)
    WITH (autovacuum_enabled = off, toast.autovacuum_enabled = off);
INSERT INTO mi SELECT i, i % 50, (i * 7919) % 10007,
    repeat(chr(97 + i % 26), 1 + i % 40) || i, (i % 777) / 7.0,
    CASE WHEN i % 3 = 0 THEN decode(md5(i::text), 'hex') END
FROM generate_series(1, 20000) i;
-- NULLs, empty strings, and values compressed and moved out of line
UPDATE mi SET t = NULL WHERE id % 97 = 0;
UPDATE mi SET t = '' WHERE id % 89 = 0;
UPDATE mi SET t = repeat(md5(id::text), 300) WHERE id % 1000 = 1;
UPDATE mi SET b = decode(repeat(md5(id::text), 400), 'hex') WHERE id % 1500 = 2;
ANALYZE mo, mi;

SET work_mem = '64kB';

-- nested loop: the inner Material is read once and rescanned 2000 times
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT plan_shape('SELECT mo.id, x.id FROM mo LEFT JOIN (SELECT * FROM mi WHERE id <= 3000) x ON x.g = mo.g');
-- the plan tells the store it is read once per outer row (mo's 2000), which
-- codec = auto weighs its codecs' reading by
SELECT (n->>'Planned Reads')::int AS planned_reads
FROM cs_material_nodes(cs_analyze_json('SELECT mo.id, x.id FROM mo LEFT JOIN (SELECT * FROM mi WHERE id <= 3000) x ON x.g = mo.g', 'VERBOSE, COSTS OFF, TIMING OFF, SUMMARY OFF')) n;
SELECT compare_material('SELECT mo.id, x.id, x.v, x.t, x.n, x.b FROM mo LEFT JOIN (SELECT * FROM mi WHERE id <= 3000) x ON x.g = mo.g AND x.v > mo.id', 'spill');
-- the same in memory
SET work_mem = '4MB';
SELECT compare_material('SELECT mo.id, x.id, x.v, x.t FROM mo LEFT JOIN (SELECT * FROM mi WHERE id <= 3000) x ON x.g = mo.g AND x.v > mo.id', 'memory');
SET work_mem = '64kB';
-- a semi join stops at the first match: rescans read the store partly
SELECT compare_material('SELECT mo.id FROM mo WHERE EXISTS (SELECT 1 FROM mi WHERE mi.id <= 3000 AND mi.v = mo.id * 3)', 'spill');
-- an uncorrelated NOT IN too large to hash: a Material under the SubPlan,
-- rescanned for every row and read partly
SELECT plan_shape('SELECT id FROM mo WHERE id * 5 NOT IN (SELECT v FROM mi)');
SELECT compare_material('SELECT id FROM mo WHERE id * 5 NOT IN (SELECT v FROM mi)', 'spill');
SELECT compare_material('SELECT id, id * 5 > ALL (SELECT v FROM mi WHERE g < 25) FROM mo', 'spill');
-- lazy reading: a nested loop that stops early reads no more of the child
-- under the Material than native Material does
CREATE FUNCTION material_child_rows(query text, enabled bool)
RETURNS bigint LANGUAGE plpgsql AS $f$
DECLARE
    j json;
    old text := current_setting('compspill.enabled');
BEGIN
    PERFORM set_config('compspill.enabled', enabled::text, true);
    EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || query INTO j;
    PERFORM set_config('compspill.enabled', old, true);
    RETURN (SELECT sum(((m->'Plans'->0->>'Actual Rows')::numeric * (m->'Plans'->0->>'Actual Loops')::numeric))::bigint
            FROM jsonb_path_query(j::jsonb, 'strict $.** ? (@."Node Type" == "Materialize" || @."Custom Plan Provider" == "CompSpill Material")') m);
END
$f$;
SELECT material_child_rows(q, false) AS native_rows, material_child_rows(q, true) AS compspill_rows,
       material_child_rows(q, false) = material_child_rows(q, true) AS same_rows_read
FROM (VALUES ('SELECT mo.id, x.id FROM mo, (SELECT * FROM mi WHERE id <= 3000) x WHERE x.g = mo.g AND x.id > 2900 LIMIT 5')) v(q);
RESET enable_hashjoin;
RESET enable_mergejoin;

-- merge joins, with duplicate keys on both sides: a Material on the inner
-- side is marked and restored (inner and full joins); where the planner
-- puts none, the inner CompSpill Sort itself is (left, full, anti joins)
SET enable_hashjoin = off;
SET enable_nestloop = off;
SELECT plan_shape('SELECT a.id, b.id FROM mi a JOIN mi b ON a.g = b.g WHERE a.id <= 2000');
SELECT compare_material('SELECT a.id, b.id, b.t FROM mi a JOIN mi b ON a.g = b.g WHERE a.id <= 2000', 'spill');
SELECT plan_shape('SELECT a.id, b.id FROM (SELECT * FROM mi WHERE id <= 3000) a FULL JOIN (SELECT * FROM mi WHERE id % 3 = 0) b ON a.g = b.g');
-- the store frees the rows before the merge join's mark, as native
-- Material's tuplestore does, so with narrow rows it stays in memory
-- (at 128kB: all 3000 rows would not fit; at 64kB what it keeps for a
-- spill and, from 16 on, the empty block a generation context holds on
-- to leave no room)
SET work_mem = '128kB';
SELECT compare_material('SELECT a.id, b.id, a.n FROM (SELECT * FROM mi WHERE id <= 3000) a FULL JOIN (SELECT * FROM mi WHERE id % 3 = 0) b ON a.g = b.g', 'memory');
SET work_mem = '64kB';
SELECT plan_shape('SELECT a.id, b.id FROM mi a LEFT JOIN (SELECT * FROM mi WHERE id % 7 = 0) b ON a.g = b.g WHERE a.id <= 1000');
SELECT cs_check('SELECT a.id, b.id, b.t FROM mi a LEFT JOIN (SELECT * FROM mi WHERE id % 7 = 0) b ON a.g = b.g WHERE a.id <= 1000', 'spill', 'multiset') AS left_join;
SELECT cs_check('SELECT a.id, b.id, b.n FROM (SELECT * FROM mi WHERE id % 2 = 0) a FULL JOIN (SELECT * FROM mi WHERE id % 3 = 0) b ON a.v = b.v', 'spill', 'multiset') AS full_join;
SELECT cs_check('SELECT a.id FROM mi a WHERE NOT EXISTS (SELECT 1 FROM mi b WHERE b.g = a.g AND b.v > a.v AND b.id % 5 = 0)', 'spill', 'multiset') AS anti_join;
-- (the inner side sorts b.v alone: a datum sort, whose values fit at 64kB)
SELECT cs_check('SELECT a.id FROM mi a WHERE NOT EXISTS (SELECT 1 FROM mi b WHERE b.v = a.v + 1 AND b.id % 5 = 0)', 'outer spill, inner memory', 'multiset') AS anti_join_unique;
-- without Materials, the inner CompSpill Sort is marked and restored
SET enable_material = off;
SELECT plan_shape('SELECT a.id, b.id FROM mi a JOIN mi b ON a.g = b.g WHERE a.id <= 2000');
SELECT cs_check('SELECT a.id, b.id, b.t, b.b FROM mi a JOIN mi b ON a.g = b.g WHERE a.id <= 2000', 'spill', 'multiset');
SELECT cs_check('SELECT a.id, b.id FROM mi a LEFT JOIN mi b ON a.t = b.t WHERE a.id % 10 = 0', 'spill', 'multiset');
-- in row frames, the inner sort's merged rows are kept for its marks in
-- row frames too (they were column frames, whatever the runs')
SET compspill.frame_kind = row;
SELECT cs_check('SELECT a.id, b.id, b.t, b.b FROM mi a JOIN mi b ON a.g = b.g WHERE a.id <= 2000', 'spill', 'multiset') AS row_frames_marked;
SELECT n->>'Sort Key' AS sort_key, (n->>'Frames Row')::int > 0 AS row_frames,
       (n->>'Frames Column')::int AS column_frames
FROM cs_provider_nodes(cs_analyze_json('SELECT a.id, b.id, b.t, b.b FROM mi a JOIN mi b ON a.g = b.g WHERE a.id <= 2000'), 'CompSpill Sort') n;
RESET compspill.frame_kind;
-- with the default codec (auto) the merged rows are kept in row frames
-- whatever kind its runs took: they are read back as tuples, and column
-- frames would form every row of a frame again each time it is loaded
-- (EXPLAIN VERBOSE's Random Access Frames; the outer sort has none); with
-- lz4, column frames
CREATE FUNCTION mi_random_access(q text) RETURNS TABLE (sort_key text, frames text)
LANGUAGE sql AS $$
    SELECT n->>'Sort Key', n->>'Random Access Frames'
    FROM cs_provider_nodes(cs_analyze_json(q, 'VERBOSE, COSTS OFF, TIMING OFF, SUMMARY OFF'), 'CompSpill Sort') n
$$;
SELECT * FROM mi_random_access('SELECT a.id, b.id, b.t, b.b FROM mi a JOIN mi b ON a.g = b.g WHERE a.id <= 2000');
SET compspill.codec = lz4;
SELECT * FROM mi_random_access('SELECT a.id, b.id, b.t, b.b FROM mi a JOIN mi b ON a.g = b.g WHERE a.id <= 2000');
RESET compspill.codec;
-- runs of both kinds (a test-only setting alternates them), merged into
-- the store: each input hands on its rows as tuples or as values
SET compspill.frame_kind = alternate;
SELECT cs_check('SELECT a.id, b.id, b.t, b.b FROM mi a JOIN mi b ON a.g = b.g WHERE a.id <= 2000', 'spill', 'multiset') AS mixed_runs_marked;
SELECT (n->>'Frames Row')::int > 0 AS row_frames,
       (n->>'Frames Column')::int > 0 AS column_frames
FROM cs_provider_nodes(cs_analyze_json('SELECT a.id, b.id, b.t, b.b FROM mi a JOIN mi b ON a.g = b.g WHERE a.id <= 2000'), 'CompSpill Sort') n
WHERE n->>'Parent Relationship' = 'Inner';
RESET compspill.frame_kind;
DROP FUNCTION mi_random_access(text);
RESET enable_material;

-- each codec, and direct I/O
SET compspill.codec = 'none';
SELECT compare_material('SELECT a.id, b.id, b.t FROM mi a JOIN mi b ON a.g = b.g WHERE a.id <= 1000', 'spill') AS codec_none;
SET compspill.codec = 'lz4';
SELECT compare_material('SELECT a.id, b.id, b.t FROM mi a JOIN mi b ON a.g = b.g WHERE a.id <= 1000', 'spill') AS codec_lz4;
SET compspill.codec = 'zstd';
SET compspill.enable_dio = on;
SELECT compare_material('SELECT a.id, b.id, b.t FROM mi a JOIN mi b ON a.g = b.g WHERE a.id <= 1000', 'spill') AS codec_zstd_dio;
-- the rows held when the store spilled are compressed with lz4 until the
-- rows freed make room for zstd's state (here, at 64kB, none do), the
-- later ones with zstd: one run of both (all zstd before)
SELECT (n->>'Frames LZ4')::int > 0 AS rows_held_lz4,
       (n->>'Frames Zstd')::int > 0 AS later_rows_zstd
FROM cs_provider_nodes(cs_analyze_json('SELECT a.id, b.id, b.t FROM mi a JOIN mi b ON a.g = b.g WHERE a.id <= 1000'), 'CompSpill Material') n;
RESET compspill.codec;
RESET compspill.enable_dio;
RESET enable_hashjoin;
RESET enable_nestloop;

-- the spill figures of a Material, and its memory within work_mem (a
-- spilling store's writer comes on top of its rows within 2%): with
-- the default codec (auto), whose store is read back as the rows it was
-- given, in row frames (a rescan copies them, where column frames would be
-- decoded and formed again on every pass), and with lz4, in column frames
SET work_mem = '1MB';
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT n->>'Storage' AS storage, (n->>'Rows Spilled')::int AS rows_spilled,
       (n->>'Peak Memory Used')::int <= 1024 * 1.02 AS within_work_mem,
       (n->>'Frames Row')::int > 0 AS row_frames,
       (n->>'Frames Column')::int AS column_frames
FROM cs_material_nodes(cs_analyze_json('SELECT mo.id, x.id FROM mo LEFT JOIN mi x ON x.g = mo.g AND x.v > mo.id * 5 WHERE mo.id <= 20')) n;
SELECT compare_material('SELECT mo.id, x.id, x.t, x.n, x.b FROM mo LEFT JOIN mi x ON x.g = mo.g AND x.v > mo.id * 5 WHERE mo.id <= 20', 'spill') AS auto_row_frames;
SET compspill.codec = 'lz4';
SELECT n->>'Storage' AS storage, (n->>'Rows Spilled')::int AS rows_spilled,
       (n->>'Peak Memory Used')::int <= 1024 * 1.02 AS within_work_mem,
       (n->>'Frames Row')::int AS row_frames,
       (n->>'Frames Column')::int > 0 AS column_frames,
       (n->>'Compression Ratio')::numeric > 1 AS compressed
FROM cs_material_nodes(cs_analyze_json('SELECT mo.id, x.id FROM mo LEFT JOIN mi x ON x.g = mo.g AND x.v > mo.id * 5 WHERE mo.id <= 20')) n;
RESET compspill.codec;
RESET enable_hashjoin;
RESET enable_mergejoin;

-- prepared with a generic plan: the node looks at compspill.enabled again
SET work_mem = '64kB';
SET enable_hashjoin = off;
SET enable_nestloop = off;
SET plan_cache_mode = force_generic_plan;
SELECT md5_exec_with('SELECT count(*), sum(a.id * b.id), sum(length(b.t)) FROM mi a JOIN mi b ON a.g = b.g WHERE a.id <= 1500', false) AS native_pm \gset
-- planned (generic plan) with compspill on
PREPARE pm(int) AS SELECT count(*), sum(a.id * b.id), sum(length(b.t)) FROM mi a JOIN mi b ON a.g = b.g WHERE a.id <= $1;
SELECT cs_material_mode('EXECUTE pm(1500)') AS prepared_on;
SELECT md5_exec('EXECUTE pm(1500)') = :'native_pm' AS prepared_on_same;
-- the cached plan keeps the node, which now uses PostgreSQL's tuplestore
SET compspill.enabled = off;
SELECT cs_material_mode('EXECUTE pm(1500)', false) AS prepared_off;
SELECT md5_exec('EXECUTE pm(1500)') = :'native_pm' AS prepared_off_same;
RESET compspill.enabled;
DEALLOCATE pm;
RESET plan_cache_mode;
RESET enable_hashjoin;
RESET enable_nestloop;

RESET work_mem;
DROP FUNCTION material_child_rows(text, bool);
DROP TABLE mo, mi;
