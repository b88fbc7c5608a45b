--
-- dml: CompSpill Sorts below ModifyTable and LockRows: INSERT ... SELECT
-- ORDER BY (rows inserted in sort order), UPDATE / DELETE / MERGE through
-- merge joins, SELECT ... ORDER BY ... FOR UPDATE, data-modifying CTEs.
-- Each statement runs once natively and once with compspill, on identical
-- copies of the data, and the resulting tables are compared.
--
LOAD 'compspill';

CREATE TABLE dm_src (id int, k int, t text);
INSERT INTO dm_src SELECT i, (i * 7919) % 5003, 'src ' || (i * 31 % 1009)
FROM generate_series(1, 20000) i;
ANALYZE dm_src;

-- Run a statement (returns_rows: it is a SELECT or has RETURNING) against
-- a fresh copy of dm_src called dm (and a fresh empty dm_out with a serial
-- column recording insertion order), with compspill on or off, under
-- EXPLAIN (ANALYZE, FORMAT JSON); return the md5 of the two tables
-- afterwards plus the statement's own output, and the plan of that run.
-- A statement's output goes through a placeholder setting set in the same
-- statement (a SELECT as a subquery, RETURNING through a WITH), so the plan
-- is that of the run compared.  A WITH that modifies data cannot be nested:
-- such a statement's output comes from one run and its plan from a second,
-- on a fresh copy again.
-- (RETURNING rows come out in join order, which may differ among equal
-- keys: they are compared as a multiset; a SELECT's rows in order)
CREATE FUNCTION dm_run(stmt text, enabled bool, returns_rows bool,
                       OUT res text, OUT plan jsonb)
LANGUAGE plpgsql AS $f$
DECLARE
    j json;
    old text := current_setting('compspill.enabled');
    explain text := 'EXPLAIN (ANALYZE, FORMAT JSON, COSTS OFF, TIMING OFF, SUMMARY OFF) ';
BEGIN
    DROP TABLE IF EXISTS dm, dm_out;
    CREATE TABLE dm AS SELECT * FROM dm_src;
    CREATE TABLE dm_out (seq serial, id int, k int, t text);
    ANALYZE dm;
    PERFORM set_config('compspill.enabled', enabled::text, true);
    PERFORM set_config('cs_test.digest', '', true);
    IF NOT returns_rows THEN
        EXECUTE explain || stmt INTO j;
        res := (j::jsonb #>> '{0,Plan,Plans,0,Actual Rows}') || ' rows in';
    ELSIF stmt ~* '^\s*SELECT' THEN
        EXECUTE explain || format('SELECT set_config(%L, %s, true) FROM (%s) cs_row',
                                  'cs_test.digest', cs_digest_expr('ordered'), stmt) INTO j;
        res := current_setting('cs_test.digest');
    ELSIF stmt ~* '^\s*WITH' THEN
        res := md5_exec(stmt);
        DROP TABLE dm, dm_out;
        CREATE TABLE dm AS SELECT * FROM dm_src;
        CREATE TABLE dm_out (seq serial, id int, k int, t text);
        ANALYZE dm;
        EXECUTE explain || stmt INTO j;
    ELSE
        EXECUTE explain || format('WITH cs_dml AS (%s) SELECT set_config(%L, %s, true) FROM cs_dml cs_row',
                                  stmt, 'cs_test.digest', cs_digest_expr('multiset')) INTO j;
        res := current_setting('cs_test.digest');
    END IF;
    PERFORM set_config('compspill.enabled', old, true);
    plan := j::jsonb;
    res := 'out ' || res
        || ' / dm ' || (SELECT count(*) || ' ' || md5(string_agg(d::text, E'\n' ORDER BY d.id, d.k, d.t)) FROM dm d)
        || ' / dm_out ' || (SELECT count(*) || ' ' || coalesce(md5(string_agg(o::text, E'\n' ORDER BY o.seq)), '-') FROM dm_out o);
END
$f$;

-- cs_check for a statement that modifies data: the plan must have a
-- CompSpill Sort, native and compspill must leave the same tables and
-- return the same rows, and the CompSpill Sorts must have run as expect
-- says (cs_mode_verdict: 'spill', 'memory', ...)
CREATE FUNCTION dm_check(stmt text, expect text, returns_rows bool DEFAULT false)
RETURNS text LANGUAGE plpgsql AS $f$
DECLARE
    native text;
    comp record;
    how text;
BEGIN
    DROP TABLE IF EXISTS dm, dm_out;
    CREATE TABLE dm AS SELECT * FROM dm_src;
    CREATE TABLE dm_out (seq serial, id int, k int, t text);
    ANALYZE dm;
    IF position('CompSpill Sort' IN cs_plan(stmt)) = 0 THEN
        RETURN 'no CompSpill Sort in the plan';
    END IF;
    native := (dm_run(stmt, false, returns_rows)).res;
    comp := dm_run(stmt, true, returns_rows);
    IF native IS DISTINCT FROM comp.res THEN
        RETURN 'MISMATCH native: ' || native || ' / compspill: ' || comp.res;
    END IF;
    how := cs_mode_verdict(comp.plan, 'CompSpill Sort', expect);
    IF how IS NOT NULL THEN
        RETURN 'results equal, but expected ' || expect || ', got ' || how;
    END IF;
    RETURN 'ok';
END
$f$;

SET work_mem = '64kB';
SET enable_hashjoin = off;
SET enable_nestloop = off;
SET enable_hashagg = off;

-- INSERT ... SELECT ... ORDER BY: the serial numbers follow the sort order
SELECT dm_check('INSERT INTO dm_out (id, k, t) SELECT id, k, t FROM dm ORDER BY k, id', 'spill');
SELECT dm_check('INSERT INTO dm_out (id, k, t) SELECT id, k, t FROM dm ORDER BY t DESC, id RETURNING seq, id', 'spill', true);
-- UPDATE and DELETE driven by merge joins
SELECT plan_shape('UPDATE dm SET t = s.t || ''!'' FROM dm_src s WHERE dm.k = s.id');
SELECT dm_check('UPDATE dm SET t = s.t || ''!'' FROM dm_src s WHERE dm.k = s.id', 'spill');
SELECT dm_check('UPDATE dm SET k = -dm.k FROM (SELECT DISTINCT k FROM dm_src WHERE id % 3 = 0) s WHERE dm.k = s.k RETURNING dm.id', 'spill', true);
SELECT dm_check('DELETE FROM dm USING dm_src s WHERE dm.k = s.id AND s.t < ''src 5'' RETURNING dm.*', 'spill', true);
-- MERGE
SELECT dm_check('MERGE INTO dm USING (SELECT id + 10000 AS id, k, t FROM dm_src) s ON dm.id = s.id
                 WHEN MATCHED AND s.k % 2 = 0 THEN UPDATE SET t = s.t
                 WHEN MATCHED THEN DELETE
                 WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.k, s.t)', 'spill');
-- row locks: LockRows above the sort, ctid and tableoid carried through it
SELECT plan_shape('SELECT * FROM dm ORDER BY k, id FOR UPDATE');
SELECT dm_check('SELECT * FROM dm ORDER BY k, id FOR UPDATE', 'spill', true);
SELECT dm_check('SELECT dm.id, s.id FROM dm JOIN dm_src s ON dm.id = s.k ORDER BY dm.t, dm.id, s.id FOR SHARE OF dm', 'spill', true);
-- data-modifying CTEs, sorted afterwards
SELECT dm_check('WITH d AS (DELETE FROM dm WHERE id % 4 = 0 RETURNING *) INSERT INTO dm_out (id, k, t) SELECT * FROM d ORDER BY t, id', 'spill');
SELECT dm_check('WITH u AS (UPDATE dm SET k = k + 1 WHERE id % 5 = 0 RETURNING *) SELECT * FROM u ORDER BY k DESC, id', 'spill', true);
-- CREATE TABLE AS with ORDER BY
SET compspill.enabled = off;
CREATE TABLE dm_ctas_native AS SELECT row_number() OVER () AS rn, * FROM (SELECT * FROM dm_src ORDER BY t, id) s;
SET compspill.enabled = on;
CREATE TABLE dm_ctas AS SELECT row_number() OVER () AS rn, * FROM (SELECT * FROM dm_src ORDER BY t, id) s;
SELECT (SELECT md5(string_agg(c::text, E'\n' ORDER BY rn)) FROM dm_ctas_native c)
     = (SELECT md5(string_agg(c::text, E'\n' ORDER BY rn)) FROM dm_ctas c) AS ctas_same;

RESET enable_hashjoin;
RESET enable_nestloop;
RESET enable_hashagg;
RESET work_mem;
DROP TABLE dm_src, dm, dm_out, dm_ctas, dm_ctas_native;
DROP FUNCTION dm_run(text, bool, bool), dm_check(text, text, bool);
