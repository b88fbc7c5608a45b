--
-- toast: wide and unusual values and shapes: external TOAST pointers,
-- inline-compressed values, values over 1 MB (larger than a spill block),
-- expanded values, zero and one row, all-NULL columns, a 100-column table.
--
LOAD 'compspill';
SELECT setseed(0.5);

-- random hex text does not compress: > 2 kB values are stored out of line
CREATE TABLE tx (id int, k int, ext text, cmp text, small text);
ALTER TABLE tx ALTER COLUMN ext SET STORAGE EXTERNAL;
INSERT INTO tx
SELECT i, i % 37,
    (SELECT string_agg(md5(random()::text || g), '') FROM generate_series(1, 70 + i % 40) g),
    repeat('compressible ' || (i % 13) || ' ', 200 + i % 300),
    'row ' || i
FROM generate_series(1, 1000) i;
ANALYZE tx;

-- the values really are what the test says: ext stored out of line and
-- uncompressed, cmp compressed and small enough to stay inline
SELECT count(*) AS rows,
       bool_and(octet_length(ext) > 2000) AS ext_wide,
       bool_and(pg_column_size(ext) = octet_length(ext)) AS ext_uncompressed,
       bool_and(octet_length(cmp) > 2000) AS cmp_wide,
       bool_and(pg_column_size(cmp) < 1000) AS cmp_compressed_inline
FROM tx;
SELECT (SELECT pg_total_relation_size(reltoastrelid) FROM pg_class WHERE oid = 'tx'::regclass)
       >= (SELECT sum(octet_length(ext)) FROM tx) AS ext_in_toast_table,
       pg_relation_size('tx') < (SELECT sum(octet_length(ext)) FROM tx) / 4 AS heap_small;

SET work_mem = '64kB';
-- toasted values carried through the sort
SELECT compare_sorted('SELECT id, ext, cmp FROM tx ORDER BY k, id', 'spill');
SELECT compare_sorted('SELECT * FROM tx ORDER BY small DESC', 'spill');
-- toasted values as sort keys
SELECT compare_sorted('SELECT id, ext FROM tx ORDER BY ext', 'spill');
SELECT compare_sorted('SELECT id, cmp FROM tx ORDER BY cmp DESC, id', 'spill');
SELECT compare_sorted('SELECT id, ext, cmp FROM tx ORDER BY cmp COLLATE "C", ext COLLATE "C" DESC', 'spill');
SELECT compare_sorted('SELECT id, length(ext) FROM tx ORDER BY substr(ext, 1000, 10), id', 'spill');
-- values detoasted by an expression below the sort
SELECT compare_sorted('SELECT id, ext || cmp AS both FROM tx ORDER BY k DESC, id', 'spill');
SELECT compare_sorted('SELECT id, upper(cmp) AS up FROM tx ORDER BY up, id', 'spill');
-- the sorted tuples hold TOAST pointers, not the values: they fit in 4MB
SET work_mem = '4MB';
SELECT compare_sorted('SELECT id, ext, cmp FROM tx ORDER BY k, id', 'memory');
SELECT compare_sorted('SELECT id, ext FROM tx ORDER BY ext', 'memory');
-- detoasted values are bigger
SELECT compare_sorted('SELECT id, ext || cmp AS both FROM tx ORDER BY k DESC, id', 'spill');
SET work_mem = '256MB';
SELECT compare_sorted('SELECT id, ext, cmp FROM tx ORDER BY k, id', 'memory');

-- values over 1 MB, compressible (stored compressed) and not (stored external)
CREATE TABLE big (id int, v text, w bytea);
INSERT INTO big
SELECT i,
    CASE WHEN i % 2 = 0 THEN repeat('big value ' || i || ' ', 120000)
         ELSE (SELECT string_agg(md5(random()::text || g), '') FROM generate_series(1, 40000 + i * 1000) g) END,
    CASE WHEN i % 3 = 0 THEN decode(repeat(md5(i::text), 40000), 'hex') END
FROM generate_series(1, 6) i;
SELECT count(*) AS rows, min(octet_length(v)) > 1024 * 1024 AS all_over_1mb FROM big;
SET work_mem = '64kB';
-- as stored: the sort holds TOAST pointers to them
SELECT compare_sorted('SELECT * FROM big ORDER BY v', 'memory');
SELECT compare_sorted('SELECT id, v, w FROM big ORDER BY w NULLS FIRST, id DESC', 'memory');
-- computed: the sort holds the values themselves
SELECT compare_sorted('SELECT id, v || ''!'' AS v2 FROM big ORDER BY id DESC', 'spill');
SELECT compare_sorted('SELECT id, v || '''' AS v, w || ''\x00''::bytea AS w FROM big ORDER BY v', 'spill');
SELECT compare_sorted('SELECT id, v || '''' AS v, w || ''\x00''::bytea AS w FROM big ORDER BY w NULLS FIRST, id DESC', 'spill');
-- big and small rows mixed
SELECT compare_sorted('SELECT id, v AS val FROM big UNION ALL SELECT id, small FROM tx ORDER BY val, id', 'spill');
SELECT compare_sorted('SELECT id, v AS val FROM big UNION ALL SELECT id, ext FROM tx ORDER BY id, val', 'spill');
SET work_mem = '4MB';
SELECT compare_sorted('SELECT id, v || '''' AS v, w FROM big ORDER BY v DESC', 'spill');

-- expanded values (arrays built in PL/pgSQL) reach the sort unflattened
CREATE FUNCTION tx_arr(n int) RETURNS int[] LANGUAGE plpgsql AS $$
DECLARE a int[] := '{}';
BEGIN
    FOR i IN 1..n LOOP
        a := a || i;
    END LOOP;
    RETURN a;
END $$;
SET work_mem = '64kB';
SELECT compare_sorted('SELECT g, tx_arr(g % 40) AS a FROM generate_series(1, 5000) g ORDER BY g % 7, g DESC', 'spill');
SELECT compare_sorted('SELECT g, tx_arr(g % 40) AS a FROM generate_series(1, 5000) g ORDER BY a DESC, g', 'spill');

-- zero rows, one row
CREATE TABLE tx_empty (id int, t text);
ANALYZE tx_empty;
SELECT compare_sorted('SELECT * FROM tx_empty ORDER BY t, id', 'memory');
SELECT compare_sorted('SELECT * FROM tx WHERE id < 0 ORDER BY ext', 'memory');
SELECT compare_sorted('SELECT * FROM tx WHERE id = 7 ORDER BY ext', 'memory');
SELECT compare_sorted('SELECT * FROM big WHERE id = 3 ORDER BY v', 'memory');
SET work_mem = '64MB';
SELECT compare_sorted('SELECT * FROM tx WHERE id = 7 ORDER BY ext', 'memory');

-- all-NULL columns, and a NULL sort key everywhere
CREATE TABLE tx_null AS
SELECT i AS id, NULL::int AS a, NULL::text AS b, NULL::numeric AS c, NULL::bytea AS d,
       NULL::timestamptz AS e, NULL::uuid AS f, NULL::int[] AS g
FROM generate_series(1, 20000) i;
SET work_mem = '64kB';
SELECT compare_sorted('SELECT * FROM tx_null ORDER BY id DESC', 'spill');
SELECT compare_sorted('SELECT * FROM tx_null ORDER BY b, a DESC, id', 'spill');
SELECT compare_keys('SELECT * FROM tx_null ORDER BY c NULLS FIRST, g', 'row(cs_row.c, cs_row.g)', 'spill');
SELECT compare_sorted('SELECT id, NULL::text AS x, NULL::int AS y FROM tx_null ORDER BY x, id', 'spill');
SET work_mem = '64MB';
SELECT compare_sorted('SELECT * FROM tx_null ORDER BY b, a DESC, id', 'memory');

-- a 100-column table of mixed types, some columns NULL in some rows
SELECT format('CREATE TABLE tx_wide (id int, %s)',
              string_agg(format('c%s %s', c, (ARRAY['int', 'text', 'numeric', 'float8', 'bool', 'date', 'bytea', 'int8'])[c % 8 + 1]), ', '))
FROM generate_series(1, 100) c \gexec
SELECT format('INSERT INTO tx_wide SELECT i, %s FROM generate_series(1, 3000) i',
              string_agg(format('CASE WHEN (i + %s) %% %s = 0 THEN NULL ELSE %s END', c, 3 + c % 11,
                  format((ARRAY['(i * %1$s) %% 1000',
                                '''w'' || (i * %1$s %% 377)',
                                '(i * %1$s %% 10007)::numeric / 7',
                                '(i * %1$s %% 9973)::float8 / 3',
                                '(i + %1$s) %% 2 = 0',
                                'date ''2001-01-01'' + (i * %1$s %% 3000)',
                                'int4send(i * %1$s)',
                                '(i::int8 * %1$s * 1000003) %% 99999989'])[c % 8 + 1], c)), ', ' ORDER BY c))
FROM generate_series(1, 100) c \gexec
SELECT count(*) AS rows, (SELECT count(*) FROM pg_attribute WHERE attrelid = 'tx_wide'::regclass AND attnum > 0) AS columns
FROM tx_wide;
SET work_mem = '64kB';
SELECT compare_sorted('SELECT * FROM tx_wide ORDER BY c1, c2, c3, id', 'spill');
SELECT compare_sorted('SELECT * FROM tx_wide ORDER BY c100 DESC NULLS FIRST, c50, c98, id DESC', 'spill');
SELECT compare_sorted('SELECT * FROM tx_wide ORDER BY id', 'spill');
SET work_mem = '64MB';
SELECT compare_sorted('SELECT * FROM tx_wide ORDER BY c7 DESC, c9, id', 'memory');

RESET work_mem;
DROP TABLE tx, big, tx_empty, tx_null, tx_wide;
DROP FUNCTION tx_arr(int);
