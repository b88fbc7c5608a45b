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

-- how the CompSpill Sort nodes of a query ran: 'fallback' if one of them
-- sorted with PostgreSQL's tuplesort instead, 'spill' if one of them wrote
-- compressed runs (only compspill's own path reports a spill codec),
-- 'memory' if all that ran sorted in memory, 'none' if the plan has no
-- executed CompSpill Sort
CREATE FUNCTION cs_spill_mode(query text)
RETURNS text LANGUAGE sql AS $f$
    SELECT CASE
        WHEN bool_or(n ? 'Tuplesort Fallback') THEN 'fallback'
        WHEN bool_or(n->>'Sort Method' LIKE 'external%' AND n ? 'Spill Codec') THEN 'spill'
        WHEN count(n->>'Sort Method') > 0 THEN 'memory'
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

-- how the stores of a query's CompSpill Material or CTE Scan nodes kept
-- their rows (with compspill.enabled as asked when the query runs):
-- 'fallback' if one of them used PostgreSQL's tuplestore, 'spill' if one
-- of them wrote a compressed run, 'memory' if all that kept rows kept them
-- in memory, 'none' if none kept rows
CREATE FUNCTION cs_store_mode(query text, provider text, enabled bool DEFAULT true)
RETURNS text LANGUAGE sql AS $f$
    SELECT CASE
        WHEN bool_or(n ? 'Tuplestore Fallback') THEN 'fallback'
        WHEN bool_or(n->>'Storage' = 'Disk' AND n ? 'Spill Codec') THEN 'spill'
        WHEN bool_or(n->>'Storage' = 'Memory') THEN 'memory'
        ELSE 'none' END
    FROM cs_provider_nodes(cs_analyze_json(query, 'COSTS OFF, TIMING OFF, SUMMARY OFF', enabled), provider) n
$f$;

CREATE FUNCTION cs_material_mode(query text, enabled bool DEFAULT true)
RETURNS text LANGUAGE sql AS $f$
    SELECT cs_store_mode(query, 'CompSpill Material', enabled)
$f$;

-- cs_check (below) for the store nodes: the plan must have one of the
-- provider's nodes, outputs compared as a multiset unless mode says
-- otherwise, and with expect the stores must have kept their rows that way
CREATE FUNCTION compare_store(query text, provider text, expect text DEFAULT NULL,
                              mode text DEFAULT 'multiset')
RETURNS text LANGUAGE plpgsql AS $f$
BEGIN
    RETURN cs_check(query, expect, mode, NULL, provider);
END
$f$;

CREATE FUNCTION compare_material(query text, expect text DEFAULT NULL,
                                 mode text DEFAULT 'multiset')
RETURNS text LANGUAGE sql AS $f$
    SELECT compare_store(query, 'CompSpill Material', expect, mode)
$f$;

CREATE FUNCTION compare_cte(query text, expect text DEFAULT NULL,
                            mode text DEFAULT 'multiset')
RETURNS text LANGUAGE sql AS $f$
    SELECT compare_store(query, 'CompSpill CTE Scan', expect, mode)
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

-- one digest of a query's output, with compspill.enabled as asked.
--   ordered:  row count + md5 of the rows in output order
--   multiset: row count + md5 of the rows sorted by their text (order ignored)
--   keys:     row count + md5 of "keys" (an expression over the output row,
--             which is called cs_row)
--             in output order + md5 of the multiset of rows; for ORDER BY
--             lists that are not a total order (equal keys may come out in
--             any order, since a sort is not stable)
CREATE FUNCTION cs_digest(query text, enabled bool, mode text DEFAULT 'ordered',
                          keys text DEFAULT NULL)
RETURNS text LANGUAGE plpgsql AS $f$
DECLARE
    d text;
    old text := current_setting('compspill.enabled');
BEGIN
    PERFORM set_config('compspill.enabled', enabled::text, true);
    IF mode = 'ordered' THEN
        EXECUTE format($q$SELECT count(*) || ' rows, md5 ' ||
                coalesce(md5(string_agg(cs_row::text, E'\n')), '-')
                FROM (%s) cs_row$q$, query) INTO d;
    ELSIF mode = 'multiset' THEN
        EXECUTE format($q$SELECT count(*) || ' rows, md5 ' ||
                coalesce(md5(string_agg(cs_row::text, E'\n' ORDER BY cs_row::text COLLATE "C")), '-')
                FROM (%s) cs_row$q$, query) INTO d;
    ELSIF mode = 'keys' THEN
        EXECUTE format($q$SELECT count(*) || ' rows, keys md5 ' ||
                coalesce(md5(string_agg((%s)::text, E'\n')), '-') || ', rows md5 ' ||
                coalesce(md5(string_agg(cs_row::text, E'\n' ORDER BY cs_row::text COLLATE "C")), '-')
                FROM (%s) cs_row$q$, keys, query) INTO d;
    ELSE
        RAISE EXCEPTION 'unknown digest mode %', mode;
    END IF;
    PERFORM set_config('compspill.enabled', old, true);
    RETURN d;
END
$f$;

-- EXPLAIN (VERBOSE, COSTS OFF) of query with compspill.enabled as asked,
-- one line per element.  With compspill on, its node names become
-- native's and its own lines go: "Custom Scan (CompSpill CTE Scan)" with
-- its "CTE Name" and "CTE Alias" lines becomes "CTE Scan on name alias".
CREATE FUNCTION vb_plan(query text, enabled bool)
RETURNS text[] LANGUAGE plpgsql AS $f$
DECLARE
    line text;
    m text[];
    lines text[] := '{}';
    cte_at int;
BEGIN
    FOR line IN SELECT l FROM cs_explain(query, 'VERBOSE, COSTS OFF', enabled) l LOOP
        IF enabled THEN
            line := replace(line, 'Custom Scan (CompSpill Sort)', 'Sort');
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
--   * expect = 'spill' / 'memory' and the nodes did not run that way
--     (cs_spill_mode for sorts, cs_store_mode for the store nodes)
CREATE FUNCTION cs_check(query text, expect text DEFAULT NULL,
                         mode text DEFAULT 'ordered', keys text DEFAULT NULL,
                         node text DEFAULT 'CompSpill Sort')
RETURNS text LANGUAGE plpgsql AS $f$
DECLARE
    native text;
    comp text;
    how text;
BEGIN
    IF position(node IN cs_plan(query)) = 0 THEN
        RETURN 'no ' || node || ' in the plan';
    END IF;
    native := cs_digest(query, false, mode, keys);
    BEGIN
        comp := cs_digest(query, true, mode, keys);
    EXCEPTION WHEN OTHERS THEN
        RETURN 'compspill failed: ' || SQLERRM;
    END;
    IF native IS DISTINCT FROM comp THEN
        RETURN 'MISMATCH native: ' || native || ' / compspill: ' || comp;
    END IF;
    how := vb_same(query);
    IF how <> 'same' THEN
        RETURN 'results equal, but EXPLAIN VERBOSE: ' || how;
    END IF;
    IF expect IS NOT NULL THEN
        how := CASE WHEN node = 'CompSpill Sort' THEN cs_spill_mode(query)
                    ELSE cs_store_mode(query, node) END;
        IF how <> expect THEN
            RETURN 'results equal, but expected ' || expect || ', got ' || how;
        END IF;
    END IF;
    RETURN 'ok';
END
$f$;

-- shorthands
CREATE FUNCTION compare_sorted(query text, expect text DEFAULT NULL)
RETURNS text LANGUAGE sql AS $f$ SELECT cs_check(query, expect) $f$;

CREATE FUNCTION compare_rows(query text, expect text DEFAULT NULL)
RETURNS text LANGUAGE sql AS $f$ SELECT cs_check(query, expect, 'multiset') $f$;

CREATE FUNCTION compare_keys(query text, keys text, expect text DEFAULT NULL)
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
       position('CompSpill Sort' IN cs_plan('SELECT g FROM generate_series(1, 100) g ORDER BY g % 7, g DESC')) > 0 AS through_compspill;
SELECT cs_digest('SELECT 1 AS a UNION ALL SELECT 2', false)
     <> cs_digest('SELECT 2 AS a UNION ALL SELECT 1', false) AS digest_sees_order;
SELECT cs_digest('SELECT 1 AS a UNION ALL SELECT 2', false, 'multiset')
     = cs_digest('SELECT 2 AS a UNION ALL SELECT 1', false, 'multiset') AS multiset_ignores_order;
SELECT md5_exec('SELECT 1 UNION ALL SELECT 2') <> md5_exec('SELECT 2 UNION ALL SELECT 1') AS exec_sees_order;
-- a query without a sort is not a test of anything
SELECT compare_sorted('SELECT 1');
-- the simplest spilling and in-memory sorts
SET work_mem = '64kB';
SELECT compare_sorted('SELECT g FROM generate_series(1, 20000) g ORDER BY g % 1000, g', 'spill');
SET work_mem = '4MB';
SELECT compare_sorted('SELECT g FROM generate_series(1, 1000) g ORDER BY g % 10, g', 'memory');
RESET work_mem;
