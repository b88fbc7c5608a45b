--
-- verbose: EXPLAIN (VERBOSE) of compspill's plans prints what native's
-- prints, node names and compspill's own lines aside: whole-row Vars of a
-- CTE (and the row identity a data-modifying statement takes from one),
-- system columns below a sort, expressions in sort keys, CTE aliases.
-- auto_explain with log_verbose explains every query at its end, so a
-- plan EXPLAIN cannot print would make the query itself fail: the same
-- shapes run under it, and their rows are compared with native's.  A
-- whole-row Var of a CTE whose plan carries resjunk columns (an ORDER BY
-- key it does not return) has native's columns, not the junk.
--
LOAD 'compspill';

-- vb_plan and vb_same are in setup.sql: cs_check compares every query's
-- EXPLAIN VERBOSE with native's through them, this file the shapes that
-- need a closer look

CREATE TABLE vb (a int, b int, t text);
INSERT INTO vb SELECT i, i % 7, md5(i::text) || repeat(chr(97 + i % 26), i % 40)
FROM generate_series(1, 6000) i;
CREATE TABLE vb_child (extra int) INHERITS (vb);
INSERT INTO vb_child SELECT i, i % 5, 'child ' || i, i FROM generate_series(1, 500) i;
ANALYZE vb, vb_child;

-- the tables the data-modifying shapes use (as PostgreSQL's own tests do)
CREATE TABLE int8_tbl (q1 int8, q2 int8);
INSERT INTO int8_tbl VALUES (123, 456), (123, 4567890123456789),
    (4567890123456789, 123), (4567890123456789, 4567890123456789),
    (4567890123456789, -4567890123456789);
CREATE TABLE a_star (class char, aa int);
CREATE TABLE b_star (bb text) INHERITS (a_star);
INSERT INTO a_star VALUES ('a', 1), ('a', 2), ('a', 47), ('a', NULL);
INSERT INTO b_star VALUES ('b', 47, 'x'), ('b', 3, 'y');
CREATE TABLE m (k int, v text);
INSERT INTO m VALUES (0, 'cmd1'), (15, 'cmd0');

-- the shapes of the report: whole-row Vars of a CTE
SELECT vb_same($$WITH c AS MATERIALIZED (SELECT g, g * 2 AS h FROM generate_series(1, 3) g)
    SELECT c FROM c WHERE c.g > 1$$);
-- (a CTE returning a record column stays native: the verdict says so)
SELECT vb_same($$WITH r(a,b) AS MATERIALIZED
      (VALUES (1,row(1,2)), (1,row(null,null)), (1,null),
              (null,row(1,2)), (null,row(null,null)), (null,null))
    SELECT r, r IS NULL AS isnull, r IS NOT NULL AS isnotnull FROM r$$);
SELECT vb_same($$WITH wcte AS (INSERT INTO int8_tbl VALUES (42, 47) RETURNING q2)
    DELETE FROM a_star USING wcte WHERE aa = q2$$);
SELECT vb_same($$WITH s AS MATERIALIZED (SELECT 15 a, 'val' b)
    MERGE INTO m USING (SELECT * FROM s) o ON m.k = o.a
    WHEN MATCHED THEN UPDATE SET v = (SELECT b || s.*::text FROM s WHERE a = 15)
    WHEN NOT MATCHED THEN INSERT VALUES (o.a, o.b || (SELECT s.*::text FROM s))$$);
-- a CTE read twice under two aliases, whole rows of both
SELECT vb_same($$WITH c AS MATERIALIZED (SELECT * FROM vb)
    SELECT c1, c2.t FROM c c1 JOIN c c2 ON c1.a = c2.a + 1 WHERE c1.b = 3$$);
-- a CTE whose plan keeps its ORDER BY key as a resjunk column
SELECT vb_same($$WITH c AS MATERIALIZED (SELECT a, t FROM vb ORDER BY b, a DESC)
    SELECT c, c.t FROM c WHERE c IS NOT NULL$$);
-- a CTE in a correlated subquery, and one inside a recursive CTE
SELECT vb_same($$WITH c AS MATERIALIZED (SELECT a, b FROM vb WHERE a < 100)
    SELECT o.a, (SELECT count(*) FROM c WHERE c.b = o.b AND c::text <> '') FROM vb o WHERE o.a < 20$$);
SELECT vb_same($$WITH RECURSIVE c AS MATERIALIZED (SELECT a FROM vb WHERE a < 10),
    r(n, x) AS (SELECT 1, c FROM c UNION ALL SELECT n + 1, x FROM r WHERE n < 3)
    SELECT * FROM r ORDER BY n, x$$);

-- sorts: whole rows, system columns, expressions and USING in sort keys
SELECT vb_same($$SELECT vb, ctid, tableoid::regclass FROM vb
    ORDER BY lower(t) COLLATE "C", a + b DESC NULLS LAST$$);
SELECT vb_same($$SELECT p, p.tableoid::regclass FROM vb p ORDER BY p.t USING >, p.a$$);
SELECT vb_same($$SELECT DISTINCT ON (b) b, vb FROM vb ORDER BY b, t DESC$$);
SELECT vb_same($$SELECT a, row_number() OVER (PARTITION BY b ORDER BY t DESC), vb FROM vb$$);
SELECT vb_same($$SELECT o.a, ARRAY(SELECT i FROM vb i WHERE i.b = o.b ORDER BY i.t) FROM vb o WHERE o.a < 5$$);
SELECT vb_same($$SELECT * FROM vb ORDER BY t FOR UPDATE$$);
SELECT vb_same($$INSERT INTO m SELECT a, t FROM vb ORDER BY t RETURNING m, m.*$$);
SET enable_hashagg = off;
SELECT vb_same($$SELECT b, t FROM vb GROUP BY b, t$$);
SELECT vb_same($$SELECT t FROM vb EXCEPT SELECT t FROM vb WHERE a < 10$$);
RESET enable_hashagg;
SET enable_hashjoin = off;
SELECT vb_same($$SELECT x, y.ctid FROM vb x JOIN vb y ON x.t = y.t$$);
SELECT vb_same($$SELECT x, y FROM vb x FULL JOIN vb y ON x.t = y.t || 'z'$$);
-- Materials: whole rows and system columns of the scan below
SET enable_mergejoin = off;
SELECT vb_same($$SELECT x.a, y.ctid, y FROM vb x LEFT JOIN vb y ON x.b = y.b AND x.a < y.a AND y.a <= 3000 WHERE x.a % 100 = 0$$);
RESET enable_mergejoin;
RESET enable_hashjoin;
-- disabled nodes (18 prints "Disabled: true" on the node an enable_*
-- setting disabled, not on the nodes above it)
SET enable_seqscan = off;
SELECT vb_same($$SELECT * FROM vb ORDER BY t$$);
SET enable_sort = off;
SELECT vb_same($$SELECT * FROM vb ORDER BY t$$);
RESET enable_sort;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT vb_same($$SELECT x.a, y FROM vb x LEFT JOIN vb y ON x.b = y.b AND x.a < y.a AND y.a <= 3000 WHERE x.a % 100 = 0$$);
RESET enable_mergejoin;
RESET enable_hashjoin;
RESET enable_seqscan;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT vb_same($$SELECT vb, ctid FROM vb ORDER BY t, a$$);
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;

-- the same shapes run with their rows compared to native's: the CTE store
-- spills (whole rows read back from the compressed run)
-- (vb_child repeats some of vb's (b, a) pairs: t makes the order total,
-- so that the rows' order, not only their set, can be compared)
SET work_mem = '64kB';
SELECT compare_cte($$WITH c AS MATERIALIZED (SELECT a, t FROM vb ORDER BY b, a DESC, t)
    SELECT c, c.t FROM c WHERE c IS NOT NULL$$, 'spill', 'ordered');
SELECT compare_cte($$WITH c AS MATERIALIZED (SELECT * FROM vb)
    SELECT c1, c2.t FROM c c1 JOIN c c2 ON c1.a = c2.a + 1 WHERE c1.b = 3$$, 'spill');
SELECT compare_cte($$WITH c AS MATERIALIZED (SELECT a, t FROM vb ORDER BY t)
    SELECT c::text FROM c$$, 'spill', 'ordered');
-- (a CTE returning a record column stays native: the verdict says so)
SELECT compare_cte($$WITH r(a,b) AS MATERIALIZED
      (VALUES (1,row(1,2)), (1,row(null,null)), (1,null),
              (null,row(1,2)), (null,row(null,null)), (null,null))
    SELECT r, r IS NULL AS isnull, r IS NOT NULL AS isnotnull FROM r$$, 'memory', 'ordered');

-- the data-modifying shapes, run: RETURNING rows and the tables afterwards
-- compared with native's; each run is rolled back
CREATE FUNCTION vb_dml(stmt text, enabled bool)
RETURNS text LANGUAGE plpgsql AS $f$
DECLARE
    r record;
    res text := '';
    old text := current_setting('compspill.enabled');
BEGIN
    BEGIN
        PERFORM set_config('compspill.enabled', enabled::text, true);
        IF stmt ~* 'RETURNING' THEN
            FOR r IN EXECUTE stmt LOOP
                res := res || r::text || E'\n';
            END LOOP;
        ELSE
            EXECUTE stmt;
        END IF;
        PERFORM set_config('compspill.enabled', old, true);
        SELECT res || string_agg(x::text, ',' ORDER BY x::text) INTO res
          FROM (SELECT 'i8' || i FROM int8_tbl i
                UNION ALL SELECT 'a' || a FROM a_star a
                UNION ALL SELECT 'm' || mm FROM m mm) x(x);
        RAISE EXCEPTION USING ERRCODE = 'CSRBK';
    EXCEPTION WHEN SQLSTATE 'CSRBK' THEN
        NULL;
    END;
    RETURN md5(res);
END
$f$;
CREATE FUNCTION vb_dml_same(stmt text)
RETURNS text LANGUAGE sql AS $f$
    SELECT CASE WHEN position('CompSpill' IN cs_plan(stmt)) = 0 THEN 'no compspill node'
                WHEN vb_dml(stmt, false) = vb_dml(stmt, true) THEN 'ok'
                ELSE 'MISMATCH' END
$f$;
SELECT vb_dml_same($$WITH wcte AS (INSERT INTO int8_tbl VALUES (42, 47) RETURNING q2)
    DELETE FROM a_star USING wcte WHERE aa = q2 RETURNING a_star, wcte$$);
SELECT vb_dml_same($$WITH s AS MATERIALIZED (SELECT 15 a, 'val' b)
    MERGE INTO m USING (SELECT * FROM s) o ON m.k = o.a
    WHEN MATCHED THEN UPDATE SET v = (SELECT b || s.*::text FROM s WHERE a = 15)
    WHEN NOT MATCHED THEN INSERT VALUES (o.a, o.b || (SELECT s.*::text FROM s))$$);
SELECT vb_dml_same($$WITH s AS MATERIALIZED (SELECT 0 a, 'new' b)
    MERGE INTO m USING (SELECT * FROM s) o ON m.k = o.a
    WHEN MATCHED THEN UPDATE SET v = (SELECT b || s.*::text FROM s)$$);

-- auto_explain explains every statement at its end, verbose and analyzed:
-- each of these must run, and return native's rows
LOAD 'auto_explain';
SET auto_explain.log_min_duration = 0;
SET auto_explain.log_verbose = on;
SET auto_explain.log_analyze = on;
SET auto_explain.log_nested_statements = on;
SET auto_explain.log_level = 'debug5';
SELECT compare_cte($$WITH c AS MATERIALIZED (SELECT g, g * 2 AS h FROM generate_series(1, 3) g)
    SELECT c FROM c WHERE c.g > 1$$, 'memory');
-- (a CTE returning a record column stays native: the verdict says so)
SELECT compare_cte($$WITH r(a,b) AS MATERIALIZED
      (VALUES (1,row(1,2)), (1,row(null,null)), (1,null),
              (null,row(1,2)), (null,row(null,null)), (null,null))
    SELECT r, r IS NULL AS isnull, r IS NOT NULL AS isnotnull FROM r$$, 'memory', 'ordered');
SELECT compare_cte($$WITH c AS MATERIALIZED (SELECT a, t FROM vb ORDER BY b, a DESC, t)
    SELECT c, c.t FROM c WHERE c IS NOT NULL$$, 'spill', 'ordered');
SELECT compare_sorted($$SELECT vb, ctid, tableoid::regclass FROM vb
    ORDER BY lower(t) COLLATE "C", a + b DESC NULLS LAST$$, 'spill');
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT compare_material($$SELECT x.a, y.ctid, y FROM vb x LEFT JOIN vb y ON x.b = y.b AND x.a < y.a AND y.a <= 3000 WHERE x.a % 100 = 0$$, 'spill');
RESET enable_mergejoin;
RESET enable_hashjoin;
SELECT vb_dml_same($$WITH wcte AS (INSERT INTO int8_tbl VALUES (42, 47) RETURNING q2)
    DELETE FROM a_star USING wcte WHERE aa = q2 RETURNING a_star, wcte$$);
SET auto_explain.log_format = 'json';
SELECT vb_dml_same($$WITH s AS MATERIALIZED (SELECT 15 a, 'val' b)
    MERGE INTO m USING (SELECT * FROM s) o ON m.k = o.a
    WHEN MATCHED THEN UPDATE SET v = (SELECT b || s.*::text FROM s WHERE a = 15)
    WHEN NOT MATCHED THEN INSERT VALUES (o.a, o.b || (SELECT s.*::text FROM s))$$);
-- and at the top level, not nested: the statement itself must succeed
WITH c AS MATERIALIZED (SELECT g, g * 2 AS h FROM generate_series(1, 3) g)
SELECT c FROM c WHERE c.g > 1;
RESET auto_explain.log_format;
RESET auto_explain.log_level;
RESET auto_explain.log_nested_statements;
RESET auto_explain.log_analyze;
RESET auto_explain.log_verbose;
RESET auto_explain.log_min_duration;
RESET work_mem;

DROP TABLE vb, vb_child, int8_tbl, a_star, b_star, m;
