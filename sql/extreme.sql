--
-- extreme: inputs at the edges, each compared with native sort: rows of
-- 1,600 columns; a single huge text value (20 MB here; test/extreme-full.sh
-- runs 200 MB); many narrow rows at the smallest work_mem (2 million here;
-- test/extreme-full.sh runs 50 million);
-- every key equal; every value NULL; empty strings; rows wider than the
-- write buffer; numerics of thousands of digits.  Every check also says
-- whether compspill spilled, so a fallback to native or to memory shows.
--
LOAD 'compspill';

-- 1,600 columns: ints (the first unique), with a short text every tenth
DO $$
DECLARE
    cols text;
    vals text;
BEGIN
    SELECT string_agg(format('c%s %s', i, CASE WHEN i % 10 = 0 THEN 'text' ELSE 'int' END), ', ' ORDER BY i),
           string_agg(CASE WHEN i = 1 THEN 'g'
                           WHEN i % 10 = 0 THEN format('''v'' || ((g * %s) %% 97)', i)
                           ELSE format('(g * %s) %% 1009', i) END, ', ' ORDER BY i)
    INTO cols, vals
    FROM generate_series(1, 1600) i;
    EXECUTE format('CREATE TABLE wide1600 (%s)', cols);
    EXECUTE format('INSERT INTO wide1600 SELECT %s FROM generate_series(1, 3000) g', vals);
END
$$;
SELECT count(*) AS columns FROM pg_attribute
WHERE attrelid = 'wide1600'::regclass AND attnum > 0;
SET work_mem = '1MB';
SELECT cs_check('SELECT * FROM wide1600 ORDER BY c1600, c2, c1', 'spill') AS wide_1600_columns;
SET compspill.codec = lz4;
SELECT cs_check('SELECT * FROM wide1600 ORDER BY c3 DESC, c1, c2', 'spill') AS wide_1600_columns_lz4;
RESET compspill.codec;
DROP TABLE wide1600;

-- a single value of 20 MB (test/extreme-full.sh: 200 MB), computed (so it
-- is not a TOAST pointer), among small ones
SET work_mem = '64kB';
SELECT cs_check($q$SELECT g, CASE WHEN g = 2 THEN repeat('abcdefghij', 2000000) ELSE 'x' || g END AS t
    FROM generate_series(1, 2000) g ORDER BY t DESC, g$q$, 'spill') AS value_20mb;

-- rows wider than the write buffer
SET compspill.write_size = '16kB';
SELECT cs_check($q$SELECT g, repeat(md5(g::text), 2000 + g % 7) AS big
    FROM generate_series(1, 300) g ORDER BY g % 13, big$q$, 'spill') AS rows_wider_than_write;
RESET compspill.write_size;

-- many narrow rows at the smallest work_mem: several merge passes
SELECT cs_check('SELECT (g::bigint * 7919) % 2000003 AS k FROM generate_series(1, 2000000) g ORDER BY k', 'spill')
    AS narrow_2m_rows;

-- every key equal (not a constant, which the planner would not sort by):
-- the order among them is not defined, the rows are
SET work_mem = '1MB';
SELECT cs_check('SELECT g % 1 AS k, g, md5(g::text) FROM generate_series(1, 100000) g ORDER BY k',
    'spill', 'multiset') AS all_keys_equal;

-- every value NULL, of several types
SELECT cs_check($q$SELECT a, a::text AS b, a::numeric AS c, a::text::bytea AS d,
    CASE WHEN a > 0 THEN now() END AS e FROM (SELECT CASE WHEN g < 0 THEN g END AS a
    FROM generate_series(1, 100000) g) s ORDER BY b, a, c$q$,
    'spill', 'multiset') AS all_null;

-- empty strings, with NULLs, both ways
SELECT cs_check($q$SELECT g, CASE WHEN g % 3 = 0 THEN NULL WHEN g % 3 = 1 THEN '' ELSE repeat('z', g % 5) END AS t
    FROM generate_series(1, 100000) g ORDER BY t NULLS FIRST, g$q$, 'spill') AS empty_strings;
SELECT cs_check($q$SELECT g, ''::text AS t, ''::bytea AS b FROM generate_series(1, 100000) g
    ORDER BY t DESC, b, g DESC$q$, 'spill') AS only_empty_strings;

-- numerics of thousands of digits, with and without a scale
SELECT cs_check($q$SELECT g, (10::numeric ^ 3000) * (g % 97) + g AS n,
    (g % 89)::numeric / 7 * (10::numeric ^ 1000) + (g::numeric / 3) AS m
    FROM generate_series(1, 20000) g ORDER BY n DESC, m, g$q$, 'spill') AS numeric_thousands_of_digits;

RESET work_mem;
