--
-- incsort: CompSpill Incremental Sort, ORDER BY a, b over input already
-- ordered by a (an index on the prefix), one group of equal prefix at a
-- time.  Every result is compared with native Incremental Sort's and every
-- case says how the node must have run ('spill': a group went to a
-- compressed run; 'memory'; 'fallback'), so that a node that fell back to
-- tuplesort or did not spill fails.  EXPLAIN's group lines are compared
-- with native's, numbers of kB aside.
--
LOAD 'compspill';

CREATE TABLE inc (a int, b int, t text, n numeric, y bytea, big text);
-- 20 large groups of 4000 rows (a = 0..19), then 3000 small ones of 5
INSERT INTO inc
SELECT i / 4000, (i * 7919) % 100003, 'w' || ((i * 31) % 9973),
       ((i * 13) % 1000) / 7.0, decode(md5(i::text), 'hex'), NULL
FROM generate_series(0, 79999) i;
INSERT INTO inc
SELECT 20 + i / 5, (i * 7919) % 100003, 'w' || ((i * 31) % 9973),
       ((i * 13) % 1000) / 7.0, decode(md5(i::text), 'hex'), NULL
FROM generate_series(0, 14999) i;
-- NULLs in the prefix and in the keys after it
INSERT INTO inc
SELECT NULL, CASE WHEN i % 3 = 0 THEN NULL ELSE i END, NULL, NULL, NULL, NULL
FROM generate_series(1, 3000) i;
CREATE INDEX inc_a ON inc (a);
ANALYZE inc;

SET max_parallel_workers_per_gather = 0;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET work_mem = '64kB';

-- EXPLAIN ANALYZE's keys and group lines, kB numbers as N (inc_groups) or
-- all but the group counts gone (inc_groups_n)
CREATE FUNCTION inc_groups(query text, enabled bool, opts text DEFAULT '')
RETURNS SETOF text LANGUAGE sql AS $f$
    SELECT regexp_replace(l, '\d+kB', 'NkB', 'g')
    FROM cs_explain(query, 'ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF' || opts, enabled) l
    WHERE l ~ '(Groups|Key):'
$f$;
CREATE FUNCTION inc_groups_n(query text, enabled bool)
RETURNS SETOF text LANGUAGE sql AS $f$
    SELECT (regexp_match(l, '^\s*(.*Groups: \d+|.*Key: .*)'))[1]
    FROM cs_explain(query, 'ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF', enabled) l
    WHERE l ~ '(Groups|Key):'
$f$;

CREATE FUNCTION compare_incsort(query text, expect text,
                                mode text DEFAULT 'ordered', keys text DEFAULT NULL)
RETURNS text LANGUAGE sql AS $f$
    SELECT cs_check(query, expect, mode, keys, 'CompSpill Incremental Sort')
$f$;

-- the node stands where native's Incremental Sort stood
SELECT plan_shape('SELECT * FROM inc ORDER BY a, b');
SELECT plan_shape('SELECT * FROM inc ORDER BY a, b', false);

-- large groups that spill, small groups in memory, both in one sort
SELECT compare_incsort('SELECT a, b, t FROM inc ORDER BY a, b, t', 'spill');
SELECT compare_incsort('SELECT a, b, t FROM inc WHERE a < 20 ORDER BY a, b, t', 'spill');
SELECT compare_incsort('SELECT a, b, t FROM inc WHERE a >= 20 ORDER BY a, b, t', 'memory');
-- ties on the sort keys: compared on the keys, rows as a multiset
SELECT compare_incsort('SELECT a, b % 10 AS b10, t FROM inc ORDER BY a, b % 10', 'spill',
                       'keys', 'cs_row.a, cs_row.b10');
-- direction and NULL placement of the prefix (index read backward) and
-- of the keys after it
SELECT compare_incsort('SELECT a, b FROM inc ORDER BY a DESC, b', 'spill');
SELECT compare_incsort('SELECT a, b FROM inc ORDER BY a, b DESC NULLS LAST', 'spill');
CREATE INDEX inc_a_nf ON inc (a NULLS FIRST);
SELECT compare_incsort('SELECT a, b FROM inc ORDER BY a DESC NULLS LAST, b NULLS FIRST', 'spill');
SELECT compare_incsort('SELECT a, b FROM inc ORDER BY a NULLS FIRST, b DESC', 'spill');
DROP INDEX inc_a_nf;
-- text with collations, numeric, bytea after the prefix
SELECT compare_incsort('SELECT a, t, b FROM inc ORDER BY a, t COLLATE "C", b', 'spill');
SELECT compare_incsort('SELECT a, t, b FROM inc ORDER BY a, t COLLATE "POSIX" DESC, b', 'spill');
SELECT compare_incsort('SELECT a, n, b FROM inc ORDER BY a, n, b', 'spill');
SELECT compare_incsort('SELECT a, y FROM inc ORDER BY a, y DESC', 'spill');
-- a text prefix with its own collation (small groups, in memory)
CREATE INDEX inc_t ON inc (t COLLATE "C");
SELECT compare_incsort('SELECT t, b FROM inc WHERE t IS NOT NULL ORDER BY t COLLATE "C", b', 'memory');
DROP INDEX inc_t;
-- one int column sorted on itself after its prefix, in another operator
-- family that orders as the prefix's does: the pre-sorted groups' sort has
-- one by-value column and key, so it takes the datum path, and is reset
-- for each group; groups of 200 rows fit, of NULLs count their NULLs, of
-- 20000 spill, and each group gives back its own rows only
CREATE OPERATOR <<< (leftarg = int, rightarg = int, function = int4lt);
CREATE OPERATOR <<<= (leftarg = int, rightarg = int, function = int4le);
CREATE OPERATOR === (leftarg = int, rightarg = int, function = int4eq);
CREATE OPERATOR >>>= (leftarg = int, rightarg = int, function = int4ge);
CREATE OPERATOR >>> (leftarg = int, rightarg = int, function = int4gt);
CREATE OPERATOR CLASS inc_int4_ops FOR TYPE int USING btree AS
    OPERATOR 1 <<<, OPERATOR 2 <<<=, OPERATOR 3 ===, OPERATOR 4 >>>=,
    OPERATOR 5 >>>, FUNCTION 1 btint4cmp(int, int);
CREATE TABLE inc_dm (a int);
INSERT INTO inc_dm SELECT i / 20000 FROM generate_series(0, 59999) i;
INSERT INTO inc_dm SELECT 3 + i / 200 FROM generate_series(0, 1999) i;
INSERT INTO inc_dm SELECT NULL FROM generate_series(1, 300);
CREATE INDEX ON inc_dm (a);
ANALYZE inc_dm;
SET enable_sort = off;
SELECT plan_shape('SELECT a FROM inc_dm ORDER BY a, a USING <<<');
SELECT compare_incsort('SELECT a FROM inc_dm WHERE a >= 3 ORDER BY a, a USING <<<', 'memory');
SELECT compare_incsort('SELECT a FROM inc_dm WHERE a >= 3 OR a IS NULL ORDER BY a DESC, a USING >>>', 'memory');
SELECT compare_incsort('SELECT a FROM inc_dm ORDER BY a, a USING <<<', 'spill');
RESET enable_sort;
DROP TABLE inc_dm;
DROP OPERATOR FAMILY inc_int4_ops USING btree;
DROP OPERATOR <<< (int, int), <<<= (int, int), === (int, int), >>>= (int, int), >>> (int, int);

-- toasted values (out of line): two groups of 3000 rows, spilled
CREATE TABLE inc_toast (a int, b int, big text);
INSERT INTO inc_toast
SELECT i / 3000, (i * 7919) % 1009,
       (SELECT string_agg(md5((i * 100 + k)::text), '') FROM generate_series(1, 70) k)
FROM generate_series(0, 5999) i;
CREATE INDEX ON inc_toast (a);
ANALYZE inc_toast;
SELECT pg_relation_size(reltoastrelid) > 0 AS toasted FROM pg_class
 WHERE relname = 'inc_toast';
-- (a full sort may look cheaper to the planner of 15 for 6000 rows)
SET enable_sort = off;
SELECT compare_incsort('SELECT a, b, md5(big) FROM (SELECT * FROM inc_toast ORDER BY a, b, big) s', 'spill');
SELECT compare_incsort('SELECT a, b, big FROM inc_toast ORDER BY a, big DESC', 'spill');
RESET enable_sort;

-- empty input: native counts one (empty) full-sort group, so does the node
SET enable_sort = off;
SELECT compare_incsort('SELECT a, b FROM inc WHERE a <= -1 ORDER BY a, b', 'memory');
SELECT inc_groups_n('SELECT a, b FROM inc WHERE a <= -1 ORDER BY a, b', true) AS empty_groups;
RESET enable_sort;
-- a single huge group
CREATE TABLE inc_one (a int, b int, t text);
INSERT INTO inc_one SELECT 7, (i * 7919) % 100003, 'v' || i FROM generate_series(1, 60000) i;
CREATE INDEX ON inc_one (a);
ANALYZE inc_one;
SET enable_sort = off;
SELECT plan_shape('SELECT * FROM inc_one ORDER BY a, b, t');
SELECT compare_incsort('SELECT * FROM inc_one ORDER BY a, b, t', 'spill');
RESET enable_sort;

-- EXPLAIN ANALYZE: the same group lines as native, the kB numbers aside.
-- Native reports for each group the largest sort of its kind so far (a
-- group sorted in memory after one that spilled counts as that disk), the
-- node each group's own memory or disk: where some groups of a kind spill
-- and later ones do not, the methods and averages differ, the counts not.
SELECT inc_groups('SELECT a, b FROM inc ORDER BY a, b', true);
SELECT inc_groups('SELECT a, b FROM inc ORDER BY a, b', false);
SELECT array(SELECT inc_groups_n('SELECT a, b FROM inc ORDER BY a, b', true))
     = array(SELECT inc_groups_n('SELECT a, b FROM inc ORDER BY a, b', false)) AS counts_same;
SELECT array(SELECT inc_groups('SELECT a, b FROM inc WHERE a < 20 ORDER BY a, b', true))
     = array(SELECT inc_groups('SELECT a, b FROM inc WHERE a < 20 ORDER BY a, b', false)) AS large_same;
SELECT array(SELECT inc_groups('SELECT * FROM inc_one ORDER BY a, b, t', true))
     = array(SELECT inc_groups('SELECT * FROM inc_one ORDER BY a, b, t', false)) AS huge_same;
SELECT array(SELECT inc_groups('SELECT a, b FROM inc WHERE a >= 20 ORDER BY a, b', true))
     = array(SELECT inc_groups('SELECT a, b FROM inc WHERE a >= 20 ORDER BY a, b', false)) AS small_same;
-- the spill lines, numbers as N; then the figures of the frame kinds,
-- which the node adds up over its two sorts: every frame written is a row
-- or a column frame, so together they are the frames of each codec
CREATE TEMP TABLE inc_spill AS
SELECT n, l
FROM cs_explain('SELECT a, b FROM inc ORDER BY a, b', 'ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF')
     WITH ORDINALITY e(l, n)
WHERE l ~ '^\s+(Peak Memory|Spill)';
SELECT regexp_replace(l, '[0-9.]+', 'N', 'g') AS spill_lines FROM inc_spill ORDER BY n;
SELECT k[1]::bigint + k[2]::bigint > 0 AS frame_kinds_counted,
       k[1]::bigint + k[2]::bigint = f[1]::bigint + f[2]::bigint + f[3]::bigint
           AS frame_kinds_are_all_frames
FROM (SELECT regexp_match(string_agg(l, E'\n'), 'Frame Kinds: row=(\d+)  column=(\d+)') AS k,
             regexp_match(string_agg(l, E'\n'), 'Frames: none=(\d+)  lz4=(\d+)  zstd=(\d+)') AS f
      FROM inc_spill) x;
DROP TABLE inc_spill;
-- in JSON: the groups' objects hold the same names and counts as native's
CREATE FUNCTION inc_json_groups(query text, enabled bool)
RETURNS jsonb LANGUAGE sql AS $f$
    SELECT jsonb_object_agg(k, jsonb_build_object(
               'count', n->k->'Group Count', 'methods', n->k->'Sort Methods Used',
               'space', (SELECT jsonb_agg(s ORDER BY s) FROM jsonb_object_keys(n->k) s)))
    FROM jsonb_path_query(cs_analyze_json(query, 'COSTS OFF, TIMING OFF, SUMMARY OFF', enabled),
                          'strict $.** ? (@."Node Type" == "Incremental Sort" || @."Custom Plan Provider" == "CompSpill Incremental Sort")') n,
         unnest(ARRAY['Full-sort Groups', 'Pre-sorted Groups']) k
    WHERE n ? k
$f$;
SELECT inc_json_groups('SELECT a, b FROM inc WHERE a < 20 ORDER BY a, b', true);
SELECT inc_json_groups('SELECT a, b FROM inc WHERE a < 20 ORDER BY a, b', true)
     = inc_json_groups('SELECT a, b FROM inc WHERE a < 20 ORDER BY a, b', false) AS json_same;
SELECT inc_json_groups('SELECT a, b FROM inc WHERE a >= 20 ORDER BY a, b', true)
     = inc_json_groups('SELECT a, b FROM inc WHERE a >= 20 ORDER BY a, b', false) AS json_small_same;
-- YAML and XML: the group parts, numbers aside, as native's
CREATE FUNCTION inc_format_groups(query text, fmt text, enabled bool)
RETURNS text[] LANGUAGE sql AS $f$
    SELECT array_agg(regexp_replace(l, '\d+', 'N', 'g'))
    FROM cs_explain(query, 'ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT ' || fmt, enabled) l
    WHERE l ~* '(Groups|Group-Count|Group Count|Sort-Space|Sort Space|Methods|quicksort|external)'
$f$;
SELECT array_length(inc_format_groups('SELECT a, b FROM inc WHERE a < 20 ORDER BY a, b', 'YAML', true), 1) AS yaml_lines,
       inc_format_groups('SELECT a, b FROM inc WHERE a < 20 ORDER BY a, b', 'YAML', true)
     = inc_format_groups('SELECT a, b FROM inc WHERE a < 20 ORDER BY a, b', 'YAML', false) AS yaml_same,
       inc_format_groups('SELECT a, b FROM inc WHERE a < 20 ORDER BY a, b', 'XML', true)
     = inc_format_groups('SELECT a, b FROM inc WHERE a < 20 ORDER BY a, b', 'XML', false) AS xml_same;

-- a Limit above hands the sort a bound: the node stays native, which
-- stops reading groups once the bound is met; WITH TIES takes no bound
SELECT plan_shape('SELECT a, b FROM inc ORDER BY a, b LIMIT 10');
SELECT md5_exec_with('SELECT a, b FROM inc ORDER BY a, b LIMIT 4500', true)
     = md5_exec_with('SELECT a, b FROM inc ORDER BY a, b LIMIT 4500', false) AS limit_same;
SELECT compare_incsort('SELECT a, b FROM inc ORDER BY a, b FETCH FIRST 4500 ROWS WITH TIES', 'spill');
SELECT compare_incsort('SELECT a, b FROM inc ORDER BY a, b OFFSET 80000', 'spill');

-- rescans: a LATERAL subquery with a parameter in the index condition,
-- sorted again for each outer row; and a plain nested loop's inner side
SELECT compare_incsort($q$
    SELECT g, s.c, s.h FROM generate_series(15, 19) g,
    LATERAL (SELECT count(*) AS c, md5(string_agg(b::text, ',')) AS h
             FROM (SELECT a, b FROM inc WHERE a >= g ORDER BY a, b OFFSET 0) x) s
    ORDER BY g$q$, 'rescanned spill');
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT compare_incsort($q$
    SELECT g, x.a, x.b FROM (VALUES (1), (2)) v(g),
    (SELECT a, b FROM inc WHERE a < 3 ORDER BY a, b OFFSET 0) x
    WHERE x.b % 2 = g % 2$q$, 'spill', 'multiset');
RESET enable_hashjoin;
RESET enable_mergejoin;
-- a correlated subquery (SubPlan), executed again for each outer row
SELECT compare_incsort($q$
    SELECT g, (SELECT md5(string_agg(b::text, ',')) FROM
                 (SELECT a, b FROM inc WHERE a BETWEEN g AND g + 1 ORDER BY a, b OFFSET 0) x)
    FROM generate_series(0, 3) g$q$, 'rescanned spill');

-- a cursor read in steps, compared with native's
BEGIN;
SET LOCAL compspill.enabled = on;
DECLARE c1 CURSOR FOR SELECT a, b FROM inc ORDER BY a, b;
SELECT md5_exec('FETCH 5000 FROM c1') AS on_1 \gset
-- compspill's sorter holds the group being returned, not tuplesort
SELECT cs_sort_holder() AS holder_on;
SELECT md5_exec('FETCH 70000 FROM c1') AS on_2 \gset
SELECT md5_exec('FETCH ALL FROM c1') AS on_3 \gset
COMMIT;
BEGIN;
SET LOCAL compspill.enabled = off;
DECLARE c1 CURSOR FOR SELECT a, b FROM inc ORDER BY a, b;
SELECT md5_exec('FETCH 5000 FROM c1') = :'on_1' AS fetch_1,
       md5_exec('FETCH 70000 FROM c1') = :'on_2' AS fetch_2,
       md5_exec('FETCH ALL FROM c1') = :'on_3' AS fetch_3;
COMMIT;
-- a scroll cursor: incremental sort cannot go backward, so the planner puts
-- a Material above it, as for native
SELECT plan_shape('DECLARE c2 SCROLL CURSOR FOR SELECT a, b FROM inc ORDER BY a, b');
BEGIN;
SET LOCAL compspill.enabled = on;
DECLARE c2 SCROLL CURSOR FOR SELECT a, b FROM inc ORDER BY a, b;
SELECT md5_exec('FETCH 9000 FROM c2') || md5_exec('FETCH BACKWARD 5000 FROM c2')
       || md5_exec('FETCH ABSOLUTE 85000 FROM c2') AS on_scroll \gset
SELECT cs_sort_holder() AS scroll_holder_on;
COMMIT;
BEGIN;
SET LOCAL compspill.enabled = off;
DECLARE c2 SCROLL CURSOR FOR SELECT a, b FROM inc ORDER BY a, b;
SELECT md5_exec('FETCH 9000 FROM c2') || md5_exec('FETCH BACKWARD 5000 FROM c2')
       || md5_exec('FETCH ABSOLUTE 85000 FROM c2') = :'on_scroll' AS scroll_same;
COMMIT;

-- a cached plan keeps the node after compspill.enabled is turned off: it
-- sorts with tuplesort then, and says so
SET plan_cache_mode = force_generic_plan;
PREPARE ip(int) AS SELECT a, b FROM inc WHERE a < $1 ORDER BY a, b;
SELECT cs_mode_verdict(cs_analyze_json('EXECUTE ip(10)'), 'CompSpill Incremental Sort', 'spill') AS on_verdict;
SET compspill.enabled = off;
SELECT cs_mode_verdict(cs_analyze_json('EXECUTE ip(10)', enabled => false),
                       'CompSpill Incremental Sort', 'fallback') AS off_verdict;
SELECT md5_exec('EXECUTE ip(10)') = md5_exec_with('SELECT a, b FROM inc WHERE a < 10 ORDER BY a, b', false) AS fallback_same;
SELECT inc_groups('EXECUTE ip(10)', false);
RESET compspill.enabled;
DEALLOCATE ip;
RESET plan_cache_mode;

-- compspill_stats, compspill_activity, the log line and the cap need
-- compspill in shared_preload_libraries: test/t/009_monitoring.pl,
-- 007_log_spills.pl and 008_temp_space_cap.pl test them for this node.
-- encryption covers its spill
SET compspill.encryption = 'aes-256-gcm';
SELECT compare_incsort('SELECT a, b, t FROM inc WHERE a < 20 ORDER BY a, b', 'spill');
SELECT DISTINCT n->>'Spill Encryption' AS encryption
FROM cs_provider_nodes(cs_analyze_json('SELECT a, b FROM inc WHERE a < 20 ORDER BY a, b'),
                       'CompSpill Incremental Sort') n;
RESET compspill.encryption;
-- each group gives back its extents, so the file holds about one group
-- (tens of kB here) however much the groups wrote in all (about a MB)
SELECT (n->>'Temp File Peak')::int < 1024 AS peak_below_1mb,
       (n->>'Bytes Written')::int > 10 * (n->>'Temp File Peak')::int
           AS wrote_ten_times_the_file
FROM cs_provider_nodes(cs_analyze_json('SELECT a, b, t FROM inc WHERE a < 20 ORDER BY a, b'),
                       'CompSpill Incremental Sort') n;

-- parallel: the node in each worker, under Gather Merge
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_index_scan_size = 0;
SET parallel_leader_participation = off;
ALTER TABLE inc SET (parallel_workers = 2);
SELECT plan_shape('SELECT a, b FROM inc ORDER BY a, b');
-- (the leader does not take part: only the workers' nodes ran, which the
-- node's own figures, the leader's, do not show)
SELECT compare_incsort('SELECT a, b FROM inc ORDER BY a, b', 'none');
-- each worker sorted and wrote temp blocks (test/t/009_monitoring.pl
-- checks that compspill_stats counts each worker's spill)
SELECT count(*) FILTER (WHERE (w->>'Actual Rows')::numeric > 0) AS workers_sorted,
       count(*) FILTER (WHERE (w->>'Temp Written Blocks')::int > 0) AS workers_spilled
FROM (SELECT n FROM cs_provider_nodes(cs_analyze_json('SELECT a, b FROM inc ORDER BY a, b',
          'VERBOSE, BUFFERS, COSTS OFF, TIMING OFF, SUMMARY OFF'), 'CompSpill Incremental Sort') n) x,
     jsonb_array_elements(x.n->'Workers') w;
RESET parallel_leader_participation;
RESET min_parallel_index_scan_size;
RESET parallel_tuple_cost;
RESET parallel_setup_cost;
RESET max_parallel_workers_per_gather;

-- compspill off: native Incremental Sort
SELECT plan_shape('SELECT * FROM inc ORDER BY a, b', false);

RESET work_mem;
RESET enable_bitmapscan;
RESET enable_seqscan;
DROP TABLE inc, inc_toast, inc_one;
DROP FUNCTION compare_incsort(text, text, text, text);
DROP FUNCTION inc_groups(text, bool, text);
DROP FUNCTION inc_json_groups(text, bool);
DROP FUNCTION inc_groups_n(text, bool);
DROP FUNCTION inc_format_groups(text, text, bool);
