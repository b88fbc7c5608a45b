--
-- parallel: CompSpill Sorts inside parallel workers, below Gather Merge and
-- Gather.  The workers load the library themselves (it was LOADed here, not
-- preloaded) and read the node from the serialized plan.
--
LOAD 'compspill';

CREATE TABLE par (id int, g int, v int, t text) WITH (parallel_workers = 2);
INSERT INTO par SELECT i, i % 50, (i * 7919) % 100003, 'q' || (i * 31 % 4999)
FROM generate_series(1, 100000) i;
CREATE TABLE par_small (g int, name text);
INSERT INTO par_small SELECT i, 'g' || i FROM generate_series(0, 49) i;
ANALYZE par, par_small;

SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = on;
SET work_mem = '64kB';

-- what each worker's CompSpill Sort did (EXPLAIN VERBOSE's per-worker
-- figures): how many workers returned rows through it, and how many of them
-- wrote temp blocks (compspill's spill I/O is counted there)
CREATE FUNCTION par_workers(query text) RETURNS text LANGUAGE plpgsql AS $f$
DECLARE
    r text;
BEGIN
    -- the workers do all the scanning: a worker that starts late (loading
    -- the library, on an assert-enabled server) finds the leader has taken
    -- its share of a table this small and sorts nothing; and a few attempts
    PERFORM set_config('parallel_leader_participation', 'off', true);
    FOR attempt IN 1..5 LOOP
        SELECT count(*) FILTER (WHERE (w->>'Actual Rows')::numeric > 0) || ' sorted, '
               || count(*) FILTER (WHERE (w->>'Temp Written Blocks')::int > 0) || ' spilled'
        INTO r
        FROM (SELECT n FROM cs_nodes(cs_analyze_json(query,
                  'VERBOSE, BUFFERS, COSTS OFF, TIMING OFF, SUMMARY OFF')) n LIMIT 1) x,
             jsonb_array_elements(x.n->'Workers') w;
        EXIT WHEN r = '2 sorted, 2 spilled';
        PERFORM pg_sleep(0.2);
    END LOOP;
    RETURN r;
END
$f$;

-- Gather Merge above a CompSpill Sort run by each worker
SELECT plan_shape('SELECT * FROM par ORDER BY v, id');
SELECT compare_sorted('SELECT * FROM par ORDER BY v, id', 'spill');
SELECT compare_sorted('SELECT id, t FROM par ORDER BY t DESC, id', 'spill');
SELECT compare_sorted('SELECT id, g FROM par WHERE v % 3 = 0 ORDER BY g, v DESC, id', 'spill');
-- the workers really ran, and each sorted and spilled through compspill
SELECT (cs_analyze_json('SELECT * FROM par ORDER BY v, id')
        #>> '{0,Plan,Workers Launched}')::int > 0 AS workers_launched;
SELECT par_workers('SELECT * FROM par ORDER BY v, id') AS workers;
-- per-worker figures: native Sort prints a "Worker N:" line per worker;
-- compspill's node can print its workers' figures only from its shared
-- memory, which LOAD does not give it, and says so (the TAP test
-- 013_parallel_explain.pl shows them, preloaded)
CREATE FUNCTION par_worker_lines(query text, enabled bool DEFAULT true)
RETURNS SETOF text LANGUAGE sql AS $f$
    -- whether a worker's share spilled depends on the run
    SELECT regexp_replace(btrim(l), '(Sort Method): .*', '\1: ...')
      FROM cs_explain(query, 'ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF', enabled) l
     WHERE l ~ '^\s*Worker ([0-9]|Figures)'
$f$;
SELECT * FROM par_worker_lines('SELECT * FROM par ORDER BY v, id', false);
SELECT * FROM par_worker_lines('SELECT * FROM par ORDER BY v, id');
SELECT n->>'Worker Figures' AS worker_figures,
       jsonb_path_query_array(n, '$.Workers[*]."Sort Method"') AS worker_methods
FROM cs_nodes(cs_analyze_json('SELECT * FROM par ORDER BY v, id')) n;

-- no leader participation: the workers do all of it (the leader's node
-- does not run, and its own figures are the leader's: 'none' is what the
-- node shows; par_workers counts the workers' rows and temp writes)
SET parallel_leader_participation = off;
SELECT compare_sorted('SELECT * FROM par ORDER BY t, id', 'none');
SELECT par_workers('SELECT * FROM par ORDER BY t, id') AS workers_only;
SELECT compare_sorted('SELECT id, v FROM par ORDER BY v DESC, id', 'none');
SELECT par_workers('SELECT id, v FROM par ORDER BY v DESC, id') AS workers_only_desc;
SET parallel_leader_participation = on;

-- partial aggregation over sorted input in the workers
SET enable_hashagg = off;
SELECT plan_shape('SELECT g, count(*), sum(v) FROM par GROUP BY g');
SELECT compare_sorted('SELECT g, count(*), sum(v), max(t) FROM par GROUP BY g', 'spill');
RESET enable_hashagg;

-- a merge join in the workers: the inner CompSpill Sort is marked and
-- restored in each worker (par_small's 50 rows, in memory; par's side and
-- the final ORDER BY spill)
SET enable_hashjoin = off;
SET enable_nestloop = off;
SET enable_material = off;
SELECT plan_shape('SELECT par.id, par_small.name FROM par JOIN par_small ON par.g = par_small.g ORDER BY par.id');
SELECT compare_sorted('SELECT par.id, par_small.name FROM par JOIN par_small ON par.g = par_small.g ORDER BY par.id', 'inner memory, outer spill');
RESET enable_hashjoin;
RESET enable_nestloop;
RESET enable_material;

-- at 4MB, some of the participants spill and some do not (that depends on
-- how many rows each one gets; EXPLAIN shows the leader's sort, which
-- either way must have sorted through compspill); at 64MB none spills
SET work_mem = '4MB';
SELECT compare_sorted('SELECT id, g FROM par ORDER BY g, id', 'spill or memory');
SET work_mem = '64MB';
SELECT compare_sorted('SELECT id, g FROM par ORDER BY g, id', 'memory');

-- compspill off: plain Sort under Gather Merge
SELECT plan_shape('SELECT * FROM par ORDER BY v, id', false);

RESET work_mem;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
RESET parallel_leader_participation;
DROP FUNCTION par_workers(text);
DROP FUNCTION par_worker_lines(text, bool);
DROP TABLE par, par_small;
