--
-- setup: helper functions shared by every other test file.
--
-- Expected files hold verdicts, never rows: every query is run with
-- compspill.enabled off (native PostgreSQL) and on, in the same session, and
-- the two outputs are compared.  The helpers also check that the plan really
-- contains a CompSpill Sort when compspill is on, and (when asked) that it
-- really spilled, so that no test can pass vacuously.
--
-- This file must run first: the functions live in the regression database
-- and are used by the later files.
--
LOAD 'compspill';

-- the extension is installed (pg_regress --load-extension) and answers
SELECT compspill_version() <> '' AS version_ok;

-- EXPLAIN a query with compspill.enabled set as asked; one row per line
-- (JSON, YAML and XML come as one value: it is split into lines too)
CREATE FUNCTION cs_explain(query text, opts text DEFAULT 'COSTS OFF',
                           enabled bool DEFAULT true)
RETURNS SETOF text LANGUAGE plpgsql AS $f$
DECLARE
    line text;
    old text := current_setting('compspill.enabled');
BEGIN
    PERFORM set_config('compspill.enabled', enabled::text, true);
    FOR line IN EXECUTE 'EXPLAIN (' || opts || ') ' || query LOOP
        RETURN QUERY SELECT regexp_split_to_table(line, E'\n');
    END LOOP;
    PERFORM set_config('compspill.enabled', old, true);
END
$f$;

-- the whole plan as one text
CREATE FUNCTION cs_plan(query text, enabled bool DEFAULT true)
RETURNS text LANGUAGE sql AS $f$
    SELECT string_agg(l, E'\n') FROM cs_explain(query, 'COSTS OFF', enabled) l
$f$;

-- the plan reduced to its node lines (no Sort Key, Filter ... details)
CREATE FUNCTION plan_shape(query text, enabled bool DEFAULT true)
RETURNS SETOF text LANGUAGE plpgsql AS $f$
DECLARE
    line text;
    first bool := true;
BEGIN
    FOR line IN SELECT l FROM cs_explain(query, 'COSTS OFF', enabled) l LOOP
        IF first OR line ~ '^\s*->  ' OR line ~ '^\s*(SubPlan|InitPlan|CTE) ' THEN
            -- 18 no longer says which parameters an InitPlan sets
            RETURN NEXT regexp_replace(line, '^(\s*InitPlan \d+) \(returns .*\)$', '\1');
        END IF;
        first := false;
    END LOOP;
END
$f$;

-- EXPLAIN (ANALYZE, FORMAT JSON) with compspill on (or as asked), as jsonb
CREATE FUNCTION cs_analyze_json(query text, opts text DEFAULT 'COSTS OFF, TIMING OFF, SUMMARY OFF',
                                enabled bool DEFAULT true)
RETURNS jsonb LANGUAGE plpgsql AS $f$
DECLARE
    j json;
    old text := current_setting('compspill.enabled');
BEGIN
    PERFORM set_config('compspill.enabled', enabled::text, true);
    EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON, ' || opts || ') ' || query INTO j;
    PERFORM set_config('compspill.enabled', old, true);
    RETURN j::jsonb;
END
$f$;

-- all CompSpill Sort nodes of an analyzed plan, outermost first
CREATE FUNCTION cs_nodes(j jsonb)
RETURNS SETOF jsonb LANGUAGE sql AS $f$
    SELECT jsonb_path_query(j, 'strict $.** ? (@."Custom Plan Provider" == "CompSpill Sort")')
$f$;

-- the first CompSpill Sort node of the analyzed query
CREATE FUNCTION cs_node(query text)
RETURNS jsonb LANGUAGE sql AS $f$
    SELECT n FROM cs_nodes(cs_analyze_json(query)) n LIMIT 1
$f$;

-- how one CompSpill node (a Sort, a Material, a CTE Scan) of an analyzed
-- plan ran: 'fallback' if it used PostgreSQL's tuplesort or tuplestore
-- instead, 'spill' if it wrote compressed runs (only compspill's own path
-- reports a spill codec), 'memory' if it kept its rows in memory, NULL if
-- it never ran
CREATE FUNCTION cs_node_mode(n jsonb)
RETURNS text LANGUAGE sql AS $f$
    SELECT CASE
        WHEN n ? 'Tuplesort Fallback' OR n ? 'Tuplestore Fallback' THEN 'fallback'
        WHEN (n->>'Sort Method' LIKE 'external%' OR n->>'Storage' = 'Disk'
              OR n ? 'Full-sort Groups')
             AND n ? 'Spill Codec' THEN 'spill'
        WHEN n ? 'Sort Method' OR n->>'Storage' = 'Memory'
             OR n ? 'Full-sort Groups' THEN 'memory'
        END
$f$;

-- Whether the nodes of one provider in an analyzed plan ran as expect
-- says: NULL if they did, else how they ran.  expect is
--   'spill', 'memory', 'fallback': every node of the kind that ran, ran so
--       (and at least one ran);
--   'none': none ran;
--   'inner spill', 'outer memory', ...: the same, over the nodes that are
--       their parent's inner (outer) child, "Parent Relationship" in the
--       plan: the node a case is about, the inner side of a merge join say;
--   'rescanned spill', ...: the same, over the nodes that ran more than
--       once ("Actual Loops"), the nodes a rescan case is about;
--   'some spill', ...: at least one ran so, for plans that legitimately
--       mix (the caller says why);
--   'spill or memory', ...: each ran one of these ways, for a node whose
--       way depends on how many rows it got (a parallel participant's: the
--       caller says why); 'some spill or memory': at least one did;
--   several of these, separated by commas ('inner memory, outer spill'):
--       each must hold.
-- How they ran is given as the modes of the nodes that ran, outermost
-- first ('spill/memory'), or 'none', for each part that did not hold.
CREATE FUNCTION cs_mode_verdict(j jsonb, provider text, expect text)
RETURNS text LANGUAGE plpgsql AS $f$
DECLARE
    part text;
    m text[];
    modes text[];
    ok bool;
    got text[] := '{}';
BEGIN
    FOREACH part IN ARRAY regexp_split_to_array(expect, ',\s*') LOOP
        m := regexp_match(part, '^(?:(some|inner|outer|rescanned) )?((?:spill|memory|fallback)(?: or (?:spill|memory|fallback))*|none)$');
        IF m IS NULL THEN
            RAISE EXCEPTION 'unknown expectation %', part;
        END IF;
        SELECT coalesce(array_agg(cs_node_mode(n)) FILTER (WHERE cs_node_mode(n) IS NOT NULL), '{}')
          INTO modes
          FROM cs_provider_nodes(j, provider) n
         WHERE m[1] IS NULL OR m[1] = 'some'
            OR m[1] IN ('inner', 'outer') AND n->>'Parent Relationship' = initcap(m[1])
            OR m[1] = 'rescanned' AND (n->>'Actual Loops')::numeric > 1;
        ok := CASE WHEN m[2] = 'none' THEN cardinality(modes) = 0
                   WHEN m[1] = 'some' THEN modes && string_to_array(m[2], ' or ')
                   ELSE cardinality(modes) > 0 AND modes <@ string_to_array(m[2], ' or ') END;
        IF NOT ok THEN
            got := got || (CASE WHEN cardinality(modes) = 0 THEN 'none'
                                ELSE array_to_string(modes, '/') END
                           || CASE WHEN m[1] IN ('inner', 'outer', 'rescanned')
                                   THEN ' (' || m[1] || ')' ELSE '' END);
        END IF;
    END LOOP;
    RETURN nullif(array_to_string(got, ', '), '');
END
$f$;

-- how the CompSpill Sort nodes of a statement ran, on a run of its own
-- (for a statement cs_check cannot wrap, EXECUTE say): 'fallback' if one of
-- them fell back, 'spill' if one of them spilled, 'memory' if all that ran
-- sorted in memory, 'none' if the plan has no executed CompSpill Sort
CREATE FUNCTION cs_spill_mode(query text)
RETURNS text LANGUAGE sql AS $f$
    SELECT CASE
        WHEN bool_or(cs_node_mode(n) = 'fallback') THEN 'fallback'
        WHEN bool_or(cs_node_mode(n) = 'spill') THEN 'spill'
        WHEN bool_or(cs_node_mode(n) = 'memory') THEN 'memory'
        ELSE 'none' END
    FROM cs_nodes(cs_analyze_json(query)) n
$f$;

-- all nodes of an analyzed plan made by the given CompSpill provider
-- ('CompSpill Material', 'CompSpill CTE Scan'), outermost first
CREATE FUNCTION cs_provider_nodes(j jsonb, provider text)
RETURNS SETOF jsonb LANGUAGE sql AS $f$
    SELECT jsonb_path_query(j, 'strict $.** ? (@."Custom Plan Provider" == $p)',
                            jsonb_build_object('p', provider))
$f$;

CREATE FUNCTION cs_material_nodes(j jsonb)
RETURNS SETOF jsonb LANGUAGE sql AS $f$
    SELECT cs_provider_nodes(j, 'CompSpill Material')
$f$;

-- how the stores of a statement's CompSpill Material or CTE Scan nodes
-- kept their rows (with compspill.enabled as asked when it runs), on a run
-- of its own: 'fallback' if one of them used PostgreSQL's tuplestore,
-- 'spill' if one of them wrote a compressed run, 'memory' if all that kept
-- rows kept them in memory, 'none' if none kept rows
CREATE FUNCTION cs_store_mode(query text, provider text, enabled bool DEFAULT true)
RETURNS text LANGUAGE sql AS $f$
    SELECT CASE
        WHEN bool_or(cs_node_mode(n) = 'fallback') THEN 'fallback'
        WHEN bool_or(cs_node_mode(n) = 'spill') THEN 'spill'
        WHEN bool_or(cs_node_mode(n) = 'memory') THEN 'memory'
        ELSE 'none' END
    FROM cs_provider_nodes(cs_analyze_json(query, 'COSTS OFF, TIMING OFF, SUMMARY OFF', enabled), provider) n
$f$;

CREATE FUNCTION cs_material_mode(query text, enabled bool DEFAULT true)
RETURNS text LANGUAGE sql AS $f$
    SELECT cs_store_mode(query, 'CompSpill Material', enabled)
$f$;

-- cs_check (below) for the store nodes: the plan must have one of the
-- provider's nodes, outputs compared as a multiset unless mode says
-- otherwise, and the stores must have kept their rows as expect says
CREATE FUNCTION compare_store(query text, provider text, expect text,
                              mode text DEFAULT 'multiset')
RETURNS text LANGUAGE plpgsql AS $f$
BEGIN
    RETURN cs_check(query, expect, mode, NULL, provider);
END
$f$;

CREATE FUNCTION compare_material(query text, expect text,
                                 mode text DEFAULT 'multiset')
RETURNS text LANGUAGE sql AS $f$
    SELECT compare_store(query, 'CompSpill Material', expect, mode)
$f$;

CREATE FUNCTION compare_cte(query text, expect text,
                            mode text DEFAULT 'multiset')
RETURNS text LANGUAGE sql AS $f$
    SELECT compare_store(query, 'CompSpill CTE Scan', expect, mode)
$f$;

-- the same for a recursive CTE: the plan must have the CompSpill Recursive
-- Union, and its WorkTable Scan when native's plan has one; the union's
-- store must have kept its rows as expect says
CREATE FUNCTION compare_recursive(query text, expect text,
                                  mode text DEFAULT 'multiset')
RETURNS text LANGUAGE plpgsql AS $f$
BEGIN
    IF position('WorkTable Scan' IN cs_plan(query, false)) > 0
       AND position('CompSpill WorkTable Scan' IN cs_plan(query)) = 0 THEN
        RETURN 'no CompSpill WorkTable Scan in the plan';
    END IF;
    RETURN compare_store(query, 'CompSpill Recursive Union', expect, mode);
END
$f$;

-- which sort code holds memory in this backend right now (an open cursor's
-- sort, say): 'tuplesort' if PostgreSQL's tuplesort does, 'compspill
-- store' if a compspill store (a Material's, a CTE's, a spilled sort read
-- by position) holds rows in a compressed run ("CompSpill spill" exists
-- only once something was written), 'compspill store in memory' if a
-- store holds them all in memory, 'compspill' if a compspill sort does,
-- else 'none'
CREATE FUNCTION cs_sort_holder()
RETURNS text LANGUAGE sql AS $f$
    SELECT CASE
        WHEN bool_or(name = 'TupleSort main') THEN 'tuplesort'
        WHEN bool_or(name = 'CompSpill store') AND bool_or(name = 'CompSpill spill')
            THEN 'compspill store'
        WHEN bool_or(name = 'CompSpill store') THEN 'compspill store in memory'
        WHEN bool_or(name = 'CompSpill sort') THEN 'compspill'
        ELSE 'none' END
    FROM pg_backend_memory_contexts
$f$;

-- the digest of a query's output, as an expression over its rows (called
-- cs_row, in "FROM (query) cs_row"):
--   ordered:  row count + md5 of the rows in output order
--   multiset: row count + the sums of the two halves of each row's md5
--             (order ignored)
--   keys:     row count + md5 of "keys" (an expression over the output row)
--             in output order + the multiset sums of the rows; for ORDER BY
--             lists that are not a total order (equal keys may come out in
--             any order, since a sort is not stable)
-- No digest sorts: a sort of its own (string_agg's ORDER BY, presorted on
-- 16 and later) would be a CompSpill Sort in the plan cs_check reads.
CREATE FUNCTION cs_digest_expr(mode text, keys text DEFAULT NULL)
RETURNS text LANGUAGE plpgsql AS $f$
DECLARE
    multiset text := $e$coalesce(sum(('x' || substr(md5(cs_row::text), 1, 16))::bit(64)::bigint)
                || '+' || sum(('x' || substr(md5(cs_row::text), 17, 16))::bit(64)::bigint), '-')$e$;
BEGIN
    IF mode = 'ordered' THEN
        RETURN $e$count(*) || ' rows, md5 ' ||
                coalesce(md5(string_agg(cs_row::text, E'\n')), '-')$e$;
    ELSIF mode = 'multiset' THEN
        RETURN $e$count(*) || ' rows, multiset ' || $e$ || multiset;
    ELSIF mode = 'keys' THEN
        RETURN format($e$count(*) || ' rows, keys md5 ' ||
                coalesce(md5(string_agg((%s)::text, E'\n')), '-') || ', rows ' || $e$, keys)
               || multiset;
    END IF;
    RAISE EXCEPTION 'unknown digest mode %', mode;
END
$f$;

-- one digest of a query's output (cs_digest_expr), with compspill.enabled
-- as asked
CREATE FUNCTION cs_digest(query text, enabled bool, mode text DEFAULT 'ordered',
                          keys text DEFAULT NULL)
RETURNS text LANGUAGE plpgsql AS $f$
DECLARE
    d text;
    old text := current_setting('compspill.enabled');
BEGIN
    PERFORM set_config('compspill.enabled', enabled::text, true);
    EXECUTE format('SELECT %s FROM (%s) cs_row', cs_digest_expr(mode, keys), query) INTO d;
    PERFORM set_config('compspill.enabled', old, true);
    RETURN d;
END
$f$;

-- The digest of a query's output with compspill on, and the analyzed plan
-- of the very run that made it: the digest query runs under EXPLAIN
-- (ANALYZE, FORMAT JSON) and hands its digest out through a placeholder
-- setting, cs_test.digest, set in the same statement.  set_config is
-- parallel unsafe, so a query planned parallel would lose its Gather that
-- way: such a query runs twice, the digest, then EXPLAIN ANALYZE of the
-- same digest query (the same plan, a second run).
CREATE FUNCTION cs_digest_analyzed(query text, mode text, keys text,
                                   OUT digest text, OUT plan jsonb)
LANGUAGE plpgsql AS $f$
DECLARE
    old text := current_setting('compspill.enabled');
    dq text := format('SELECT %s FROM (%s) cs_row', cs_digest_expr(mode, keys), query);
    j json;
BEGIN
    PERFORM set_config('compspill.enabled', 'on', true);
    IF position('Gather' IN cs_plan(dq)) > 0 THEN
        EXECUTE dq INTO digest;
        EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || dq INTO j;
    ELSE
        PERFORM set_config('cs_test.digest', '', true);
        EXECUTE format('EXPLAIN (ANALYZE, FORMAT JSON, COSTS OFF, TIMING OFF, SUMMARY OFF) '
                       'SELECT set_config(%L, %s, true) FROM (%s) cs_row',
                       'cs_test.digest', cs_digest_expr(mode, keys), query) INTO j;
        digest := nullif(current_setting('cs_test.digest'), '');
    END IF;
    plan := j::jsonb;
    PERFORM set_config('compspill.enabled', old, true);
END
$f$;

-- EXPLAIN (VERBOSE, COSTS OFF) of query with compspill.enabled as asked,
-- one line per element.  With compspill on, its node names become
-- native's and its own lines go: "Custom Scan (CompSpill CTE Scan)" with
-- its "CTE Name" and "CTE Alias" lines becomes "CTE Scan on name alias",
-- "Custom Scan (CompSpill WorkTable Scan)" likewise "WorkTable Scan on name
-- alias".  Native's Recursive Union prints no Output line (EXPLAIN leaves
-- it out for that node type), a CustomScan always does: the CompSpill
-- Recursive Union's is dropped.  A CompSpill Material's "Planned Reads"
-- (its rescans the plan expects) has no native line and is dropped too.
CREATE FUNCTION vb_plan(query text, enabled bool)
RETURNS text[] LANGUAGE plpgsql AS $f$
DECLARE
    line text;
    m text[];
    lines text[] := '{}';
    cte_at int;
    after_ru bool := false;
BEGIN
    FOR line IN SELECT l FROM cs_explain(query, 'VERBOSE, COSTS OFF', enabled) l LOOP
        IF enabled THEN
            IF line ~ '^\s+Planned Reads: ' THEN
                CONTINUE;
            END IF;
            IF after_ru AND line ~ '^\s+Output: ' THEN
                after_ru := false;
                CONTINUE;
            END IF;
            after_ru := line ~ 'Custom Scan \(CompSpill Recursive Union\)';
            line := replace(line, 'Custom Scan (CompSpill Recursive Union)', 'Recursive Union');
            IF line ~ 'Custom Scan \(CompSpill WorkTable Scan\)' THEN
                cte_at := coalesce(array_length(lines, 1), 0) + 1;
                line := replace(line, 'Custom Scan (CompSpill WorkTable Scan)', 'WorkTable Scan on');
            END IF;
            line := replace(line, 'Custom Scan (CompSpill Sort)', 'Sort');
            line := replace(line, 'Custom Scan (CompSpill Incremental Sort)', 'Incremental Sort');
            line := replace(line, 'Custom Scan (CompSpill Material)', 'Materialize');
            IF line ~ 'Custom Scan \(CompSpill CTE Scan\)' THEN
                cte_at := coalesce(array_length(lines, 1), 0) + 1;
                line := replace(line, 'Custom Scan (CompSpill CTE Scan)', 'CTE Scan on');
            END IF;
            m := regexp_match(line, '^\s+CTE (Name|Alias): (.*)$');
            IF m IS NOT NULL AND cte_at IS NOT NULL THEN
                lines[cte_at] := lines[cte_at] || ' ' || m[2];
                CONTINUE;
            END IF;
        END IF;
        lines := lines || line;
    END LOOP;
    RETURN lines;
END
$f$;

-- 'same' when the two plans print alike (with a compspill node), else the first
-- line where they differ; a plan without a compspill node tests nothing
CREATE FUNCTION vb_same(query text)
RETURNS text LANGUAGE plpgsql AS $f$
DECLARE
    native text[];
    comp text[];
    n int;
BEGIN
    native := vb_plan(query, false);
    BEGIN
        comp := vb_plan(query, true);
    EXCEPTION WHEN OTHERS THEN
        RETURN 'compspill failed: ' || SQLERRM;
    END;
    SELECT count(*) INTO n FROM cs_explain(query, 'COSTS OFF', true) l
     WHERE l ~ 'Custom Scan \(CompSpill ';
    IF n = 0 THEN
        RETURN 'no compspill node in the plan';
    END IF;
    IF native = comp THEN
        RETURN 'same';
    END IF;
    FOR i IN 1..greatest(array_length(native, 1), array_length(comp, 1)) LOOP
        IF native[i] IS DISTINCT FROM comp[i] THEN
            RETURN format('line %s differs: native %L, compspill %L',
                          i, native[i], comp[i]);
        END IF;
    END LOOP;
END
$f$;

-- The main check.  Returns 'ok', or what went wrong:
--   * the plan (compspill on) has no node of the kind asked for (a CompSpill
--     Sort unless node names another)
--   * native and compspill outputs differ (both digests are shown)
--   * EXPLAIN (VERBOSE) of the plan prints other than native's (vb_same)
--   * compspill raised an error
--   * the nodes of the kind did not run as expect says (cs_mode_verdict:
--     'spill', 'memory', 'inner spill', 'some spill' ...), read from the
--     plan of the run whose output was compared
-- expect has no default: the plan only proves the node is there, not that
-- it ran as compspill's own (a node that falls back to tuplesort or
-- tuplestore at run time returns native's rows too), so every call says
-- how its node must run.
CREATE FUNCTION cs_check(query text, expect text,
                         mode text DEFAULT 'ordered', keys text DEFAULT NULL,
                         node text DEFAULT 'CompSpill Sort')
RETURNS text LANGUAGE plpgsql AS $f$
DECLARE
    native text;
    comp record;
    how text;
BEGIN
    IF position(node IN cs_plan(query)) = 0 THEN
        RETURN 'no ' || node || ' in the plan';
    END IF;
    native := cs_digest(query, false, mode, keys);
    BEGIN
        comp := cs_digest_analyzed(query, mode, keys);
    EXCEPTION WHEN OTHERS THEN
        RETURN 'compspill failed: ' || SQLERRM;
    END;
    IF native IS DISTINCT FROM comp.digest THEN
        RETURN 'MISMATCH native: ' || native || ' / compspill: ' || coalesce(comp.digest, 'none');
    END IF;
    how := vb_same(query);
    IF how <> 'same' THEN
        RETURN 'results equal, but EXPLAIN VERBOSE: ' || how;
    END IF;
    IF expect IS NULL THEN
        RAISE EXCEPTION 'cs_check needs to be told how the node must run';
    END IF;
    how := cs_mode_verdict(comp.plan, node, expect);
    IF how IS NOT NULL THEN
        RETURN 'results equal, but expected ' || expect || ', got ' || how;
    END IF;
    RETURN 'ok';
END
$f$;

-- shorthands
CREATE FUNCTION compare_sorted(query text, expect text)
RETURNS text LANGUAGE sql AS $f$ SELECT cs_check(query, expect) $f$;

CREATE FUNCTION compare_rows(query text, expect text)
RETURNS text LANGUAGE sql AS $f$ SELECT cs_check(query, expect, 'multiset') $f$;

CREATE FUNCTION compare_keys(query text, keys text, expect text)
RETURNS text LANGUAGE sql AS $f$ SELECT cs_check(query, expect, 'keys', keys) $f$;

-- Digest of whatever a statement returns, row by row, in order (works for
-- EXECUTE of a prepared statement and FETCH, which cannot be a subquery)
CREATE FUNCTION md5_exec(stmt text)
RETURNS text LANGUAGE plpgsql AS $f$
DECLARE
    r record;
    h text := '';
    n bigint := 0;
BEGIN
    FOR r IN EXECUTE stmt LOOP
        h := md5(h || r::text);
        n := n + 1;
    END LOOP;
    RETURN n || ' rows, ' || h;
END
$f$;

-- md5_exec of a statement with compspill.enabled set as asked
CREATE FUNCTION md5_exec_with(stmt text, enabled bool)
RETURNS text LANGUAGE plpgsql AS $f$
DECLARE
    d text;
    old text := current_setting('compspill.enabled');
BEGIN
    PERFORM set_config('compspill.enabled', enabled::text, true);
    d := md5_exec(stmt);
    PERFORM set_config('compspill.enabled', old, true);
    RETURN d;
END
$f$;

-- the helpers work on a query whose order is plain to see
SELECT cs_digest('SELECT g FROM generate_series(1, 100) g ORDER BY g % 7, g DESC', false)
     = cs_digest('SELECT g FROM generate_series(1, 100) g ORDER BY g % 7, g DESC', true) AS digest_same_both_ways,
       position('CompSpill Sort' IN cs_plan('SELECT g FROM generate_series(1, 100) g ORDER BY g % 7, g DESC')) > 0 AS through_compspill,
       cs_spill_mode('SELECT g FROM generate_series(1, 100) g ORDER BY g % 7, g DESC') AS ran;
SELECT cs_digest('SELECT 1 AS a UNION ALL SELECT 2', false)
     <> cs_digest('SELECT 2 AS a UNION ALL SELECT 1', false) AS digest_sees_order;
SELECT cs_digest('SELECT 1 AS a UNION ALL SELECT 2', false, 'multiset')
     = cs_digest('SELECT 2 AS a UNION ALL SELECT 1', false, 'multiset') AS multiset_ignores_order;
SELECT md5_exec('SELECT 1 UNION ALL SELECT 2') <> md5_exec('SELECT 2 UNION ALL SELECT 1') AS exec_sees_order;
-- a query without a sort is not a test of anything
SELECT compare_sorted('SELECT 1', 'none');
-- the simplest spilling and in-memory sorts
SET work_mem = '64kB';
SELECT compare_sorted('SELECT g FROM generate_series(1, 20000) g ORDER BY g % 1000, g', 'spill');
SET work_mem = '4MB';
SELECT compare_sorted('SELECT g FROM generate_series(1, 1000) g ORDER BY g % 10, g', 'memory');
-- a node that falls back at run time is caught: a generic plan made with
-- compspill on keeps its CompSpill Sort when run with compspill off, and
-- that sorts with tuplesort, native's rows and all (what cs_check's expect
-- is there to see)
SET work_mem = '64kB';
SET plan_cache_mode = force_generic_plan;
PREPARE cs_fallback AS SELECT g FROM generate_series(1, 20000) g ORDER BY g % 1000, g;
SELECT cs_spill_mode('EXECUTE cs_fallback') AS planned_on_run_on;
SELECT cs_mode_verdict(cs_analyze_json('EXECUTE cs_fallback', 'COSTS OFF, TIMING OFF, SUMMARY OFF', false),
                       'CompSpill Sort', 'spill or memory') AS planned_on_run_off;
DEALLOCATE cs_fallback;
RESET plan_cache_mode;
RESET work_mem;
