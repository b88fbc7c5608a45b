--
-- tuples: unusual tuple shapes reaching the sort: dropped columns (the scan
-- may hand over its physical tuple), columns added later with a default
-- (missing from the stored tuples), system columns, set-returning functions
-- above and below the sort, only by-value columns, very many columns.
--
LOAD 'compspill';

SET work_mem = '64kB';

-- dropped columns
CREATE TABLE tu_drop (id int, gone1 text, k int, gone2 numeric, t text, gone3 int8);
INSERT INTO tu_drop SELECT i, repeat('z', i % 50), i % 113, i / 3.0, 'v' || (i * 7 % 1000), i
FROM generate_series(1, 15000) i;
ALTER TABLE tu_drop DROP COLUMN gone1, DROP COLUMN gone2;
INSERT INTO tu_drop SELECT i, i % 113, 'w' || i, i FROM generate_series(15001, 16000) i;
ALTER TABLE tu_drop DROP COLUMN gone3;
ANALYZE tu_drop;
SELECT compare_sorted('SELECT * FROM tu_drop ORDER BY k, id', 'spill');
SELECT compare_sorted('SELECT * FROM tu_drop ORDER BY t DESC, id', 'spill');
SELECT compare_sorted('SELECT t, id FROM tu_drop ORDER BY id DESC', 'spill');

-- columns added with a default: older tuples do not store them
CREATE TABLE tu_missing (id int, k int);
INSERT INTO tu_missing SELECT i, i % 97 FROM generate_series(1, 10000) i;
ALTER TABLE tu_missing ADD COLUMN d int DEFAULT 42;
ALTER TABLE tu_missing ADD COLUMN s text DEFAULT 'a default that is rather long, to be a varlena';
ALTER TABLE tu_missing ADD COLUMN n numeric DEFAULT 3.14159;
ALTER TABLE tu_missing ADD COLUMN z int;
INSERT INTO tu_missing SELECT i, i % 97, i, 's' || i, i / 7.0, i FROM generate_series(10001, 14000) i;
ANALYZE tu_missing;
SELECT compare_sorted('SELECT * FROM tu_missing ORDER BY k, id', 'spill');
SELECT compare_sorted('SELECT * FROM tu_missing ORDER BY s DESC, id', 'spill');
SELECT compare_sorted('SELECT * FROM tu_missing ORDER BY z NULLS FIRST, n, id', 'spill');

-- system columns carried through the sort (and used as keys)
SELECT compare_sorted('SELECT ctid, tableoid::regclass, xmin, cmin, id FROM tu_missing ORDER BY k, id', 'spill');
SELECT compare_sorted('SELECT ctid, id FROM tu_missing ORDER BY ctid DESC', 'spill');

-- set-returning functions: above the sort (ProjectSet) and as its input
SELECT compare_sorted('SELECT id, generate_series(1, id % 4) AS g FROM tu_missing ORDER BY k, id', 'spill');
SELECT compare_sorted('SELECT generate_series(1, id % 3) AS g, id FROM tu_missing ORDER BY 1, 2', 'spill');
SELECT compare_sorted('SELECT * FROM unnest(ARRAY(SELECT id FROM tu_missing)) WITH ORDINALITY AS u(v, o) ORDER BY v % 10, o', 'spill');
SELECT compare_sorted('SELECT * FROM ROWS FROM (generate_series(1, 20000), generate_series(1, 7)) AS r(a, b) ORDER BY b NULLS FIRST, a DESC', 'spill');
SELECT compare_sorted('SELECT * FROM (VALUES (3, ''c''), (1, ''a''), (2, NULL), (NULL, ''d'')) v(a, b) ORDER BY a NULLS FIRST', 'memory');

-- only by-value fixed-width columns, and only one column
SELECT compare_sorted('SELECT g::int2 AS a, g::int4 AS b, g::int8 AS c, g::float4 AS d, g::float8 AS e, g % 2 = 0 AS f, g::oid AS o, now()::date + g % 5 AS dt FROM generate_series(1, 30000) g ORDER BY g % 13, g DESC', 'spill');
SELECT compare_sorted('SELECT g FROM generate_series(1, 30000) g ORDER BY g DESC', 'spill');
SELECT compare_sorted('SELECT g::text FROM generate_series(1, 30000) g ORDER BY 1', 'spill');
-- rows of nothing but NULL, and an empty target list
SELECT compare_sorted('SELECT NULL::int AS a, NULL::text AS b FROM generate_series(1, 20000) g ORDER BY g', 'spill');
SELECT compare_sorted('SELECT FROM generate_series(1, 20000) g ORDER BY g % 3', 'spill');
SELECT compare_sorted('SELECT count(*) FROM (SELECT FROM generate_series(1, 20000) g ORDER BY g % 3) s', 'spill');

-- a thousand columns
SELECT format('SELECT g, %s FROM generate_series(1, 800) g ORDER BY g %% 17, g',
              string_agg(format('CASE WHEN g %% %s = 0 THEN NULL ELSE %s END AS c%s', 2 + c % 5,
                                CASE c % 3 WHEN 0 THEN 'g * ' || c WHEN 1 THEN '''t'' || g % ' || c ELSE '(g + ' || c || ')::numeric / 3' END, c), ', '))
       AS q1000 FROM generate_series(1, 1000) c \gset
SELECT compare_sorted(:'q1000', 'spill');
SET work_mem = '64MB';
SELECT compare_sorted(:'q1000', 'memory');

RESET work_mem;
DROP TABLE tu_drop, tu_missing;

-- the datum path: one by-value column sorted on itself keeps its values
-- only, its NULLs counted apart; in memory and spilled, both directions,
-- NULLs first and last, int, bigint, float8 with NaN, infinities and -0
-- (ties of 0 and -0 are compared on the keys: their order among themselves
-- is the sort's own), a single by-reference column (the row path), and a
-- merge join whose inner sorts take the datum path with mark and restore
CREATE TABLE tu_narrow AS
SELECT CASE WHEN g % 11 = 0 THEN NULL ELSE (g * 7919) % 100003 END::int AS i,
       CASE WHEN g % 13 = 0 THEN NULL ELSE (g::bigint * 104729) % 1000003 - 500000 END AS b,
       CASE g % 17 WHEN 0 THEN NULL WHEN 1 THEN 'NaN' WHEN 2 THEN '-0' WHEN 3 THEN '0'
            WHEN 4 THEN '-Infinity' WHEN 5 THEN 'Infinity'
            ELSE ((g * 7919) % 10007 - 5000) / 7.0 END::float8 AS f
FROM generate_series(1, 40000) g;
ANALYZE tu_narrow;
SET work_mem = '64kB';
SELECT compare_sorted('SELECT b FROM tu_narrow ORDER BY b', 'spill');
SELECT compare_sorted('SELECT b FROM tu_narrow ORDER BY b DESC', 'spill');
SELECT compare_sorted('SELECT b FROM tu_narrow ORDER BY b NULLS FIRST', 'spill');
SELECT compare_sorted('SELECT b FROM tu_narrow ORDER BY b DESC NULLS LAST', 'spill');
SELECT compare_sorted('SELECT i FROM tu_narrow ORDER BY i', 'spill');
SELECT compare_sorted('SELECT i FROM tu_narrow ORDER BY i DESC', 'spill');
SELECT compare_keys('SELECT f FROM tu_narrow ORDER BY f', 'f + 0', 'spill');
SELECT compare_keys('SELECT f FROM tu_narrow ORDER BY f DESC NULLS LAST', 'f + 0', 'spill');
SELECT compare_sorted('SELECT i::text AS t FROM tu_narrow ORDER BY 1 NULLS FIRST', 'spill');
-- NULLs take no memory on the datum path: twenty thousand of them stay in it
SELECT compare_sorted('SELECT CASE WHEN g < 0 THEN g END AS n FROM generate_series(1, 20000) g ORDER BY 1', 'memory');
SET work_mem = '16MB';
SELECT compare_sorted('SELECT b FROM tu_narrow ORDER BY b', 'memory');
SELECT compare_sorted('SELECT i FROM tu_narrow ORDER BY i DESC NULLS LAST', 'memory');
SELECT compare_keys('SELECT f FROM tu_narrow ORDER BY f NULLS FIRST', 'f + 0', 'memory');
SET enable_hashjoin = off;
SET enable_nestloop = off;
SELECT compare_rows('SELECT x.b FROM (SELECT b FROM tu_narrow WHERE b % 3 = 0) x JOIN (SELECT b FROM tu_narrow WHERE b % 2 = 0) y ON x.b = y.b', 'memory');
SET work_mem = '64kB';
SELECT compare_rows('SELECT x.b FROM (SELECT b FROM tu_narrow WHERE b % 3 = 0) x JOIN (SELECT b FROM tu_narrow WHERE b % 2 = 0) y ON x.b = y.b', 'spill');
RESET enable_hashjoin;
RESET enable_nestloop;
RESET work_mem;
DROP TABLE tu_narrow;
