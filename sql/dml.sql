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

-- Run a statement (returns_rows: it is a SELECT or has RETURNING) against a fresh copy of dm_src called dm (and a fresh
-- empty dm_out with a serial column recording insertion order), with
-- compspill on or off; return the md5 of the two tables afterwards plus the
-- statement's own output.
-- (RETURNING rows come out in join order, which may differ among equal
-- keys: they are compared as a multiset; a SELECT's rows in order)
CREATE FUNCTION dm_run(stmt text, enabled bool, returns_rows bool)
RETURNS text LANGUAGE plpgsql AS $f$
DECLARE
    res text;
    r record;
    rows text[] := '{}';
    n bigint;
    old text := current_setting('compspill.enabled');
BEGIN
    DROP TABLE IF EXISTS dm, dm_out;
    CREATE TABLE dm AS SELECT * FROM dm_src;
    CREATE TABLE dm_out (seq serial, id int, k int, t text);
    ANALYZE dm;
    PERFORM set_config('compspill.enabled', enabled::text, true);
    IF returns_rows AND stmt ~* '^\s*SELECT' THEN
        res := md5_exec(stmt);
    ELSIF returns_rows THEN
        FOR r IN EXECUTE stmt LOOP
            rows := rows || r::text;
        END LOOP;
        res := cardinality(rows) || ' rows, '
            || coalesce((SELECT md5(string_agg(x, E'\n' ORDER BY x COLLATE "C")) FROM unnest(rows) x), '-');
    ELSE
        EXECUTE stmt;
        GET DIAGNOSTICS n = ROW_COUNT;
        res := n || ' rows';
    END IF;
    PERFORM set_config('compspill.enabled', old, true);
    RETURN 'out ' || res
        || ' / dm ' || (SELECT count(*) || ' ' || md5(string_agg(d::text, E'\n' ORDER BY d.id, d.k, d.t)) FROM dm d)
        || ' / dm_out ' || (SELECT count(*) || ' ' || coalesce(md5(string_agg(o::text, E'\n' ORDER BY o.seq)), '-') FROM dm_out o);
END
$f$;

CREATE FUNCTION dm_check(stmt text, returns_rows bool DEFAULT false)
RETURNS text LANGUAGE plpgsql AS $f$
DECLARE
    native text;
    comp text;
BEGIN
    DROP TABLE IF EXISTS dm, dm_out;
    CREATE TABLE dm AS SELECT * FROM dm_src;
    CREATE TABLE dm_out (seq serial, id int, k int, t text);
    ANALYZE dm;
    IF position('CompSpill Sort' IN cs_plan(stmt)) = 0 THEN
        RETURN 'no CompSpill Sort in the plan';
    END IF;
    native := dm_run(stmt, false, returns_rows);
    comp := dm_run(stmt, true, returns_rows);
    IF native IS DISTINCT FROM comp THEN
        RETURN 'MISMATCH native: ' || native || ' / compspill: ' || comp;
    END IF;
    RETURN 'ok';
END
$f$;

SET work_mem = '64kB';
SET enable_hashjoin = off;
SET enable_nestloop = off;
SET enable_hashagg = off;

-- INSERT ... SELECT ... ORDER BY: the serial numbers follow the sort order
SELECT dm_check('INSERT INTO dm_out (id, k, t) SELECT id, k, t FROM dm ORDER BY k, id');
SELECT dm_check('INSERT INTO dm_out (id, k, t) SELECT id, k, t FROM dm ORDER BY t DESC, id RETURNING seq, id', true);
-- UPDATE and DELETE driven by merge joins
SELECT plan_shape('UPDATE dm SET t = s.t || ''!'' FROM dm_src s WHERE dm.k = s.id');
SELECT dm_check('UPDATE dm SET t = s.t || ''!'' FROM dm_src s WHERE dm.k = s.id');
SELECT dm_check('UPDATE dm SET k = -dm.k FROM (SELECT DISTINCT k FROM dm_src WHERE id % 3 = 0) s WHERE dm.k = s.k RETURNING dm.id', true);
SELECT dm_check('DELETE FROM dm USING dm_src s WHERE dm.k = s.id AND s.t < ''src 5'' RETURNING dm.*', true);
-- MERGE
SELECT dm_check('MERGE INTO dm USING (SELECT id + 10000 AS id, k, t FROM dm_src) s ON dm.id = s.id
                 WHEN MATCHED AND s.k % 2 = 0 THEN UPDATE SET t = s.t
                 WHEN MATCHED THEN DELETE
                 WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.k, s.t)');
-- row locks: LockRows above the sort, ctid and tableoid carried through it
SELECT plan_shape('SELECT * FROM dm ORDER BY k, id FOR UPDATE');
SELECT dm_check('SELECT * FROM dm ORDER BY k, id FOR UPDATE', true);
SELECT dm_check('SELECT dm.id, s.id FROM dm JOIN dm_src s ON dm.id = s.k ORDER BY dm.t, dm.id, s.id FOR SHARE OF dm', true);
-- data-modifying CTEs, sorted afterwards
SELECT dm_check('WITH d AS (DELETE FROM dm WHERE id % 4 = 0 RETURNING *) INSERT INTO dm_out (id, k, t) SELECT * FROM d ORDER BY t, id');
SELECT dm_check('WITH u AS (UPDATE dm SET k = k + 1 WHERE id % 5 = 0 RETURNING *) SELECT * FROM u ORDER BY k DESC, id', true);
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
DROP FUNCTION dm_run(text, bool, bool), dm_check(text, bool);
