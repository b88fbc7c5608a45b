--
-- types: sort keys and carried columns of many data types, compared with
-- native Sort, spilling (work_mem 64kB) and in memory.
--
LOAD 'compspill';

CREATE TYPE ty_pair AS (a int, b text);
CREATE DOMAIN ty_posint AS int CHECK (VALUE > 0);
CREATE DOMAIN ty_code AS varchar(12);

SELECT setseed(0.25);
CREATE TABLE ty AS
SELECT i AS id,
    CASE WHEN i % 23 = 0 THEN NULL ELSE (i % 401 - 200)::int2 END AS i2,
    CASE WHEN i % 29 = 0 THEN NULL
         WHEN i % 37 = 1 THEN (ARRAY[-2147483648, 2147483647, 0])[i % 3 + 1]
         ELSE i * 7919 % 100003 - 50000 END AS i4,
    CASE WHEN i % 31 = 0 THEN NULL
         WHEN i % 7 = 0 THEN (ARRAY[-9223372036854775808, 9223372036854775807, 0])[i % 3 + 1]
         ELSE (i::int8 * 2654435761) % 1000000007 - 500000000 END AS i8,
    CASE WHEN i % 19 = 0 THEN NULL
         WHEN i % 5 = 0 THEN (ARRAY['NaN', '-0', '0', 'Infinity', '-Infinity', '1e-40', '-3.4e38', '1.5'])[i % 8 + 1]::float4
         ELSE ((random() - 0.5) * 1e6)::float4 END AS f4,
    CASE WHEN i % 17 = 0 THEN NULL
         WHEN i % 4 = 0 THEN (ARRAY['NaN', '-0', '0', 'Infinity', '-Infinity', '4.9e-324', '-1.7e308', '2.5'])[i % 8 + 1]::float8
         ELSE (random() - 0.5) * 1e12 END AS f8,
    CASE WHEN i % 13 = 0 THEN NULL
         WHEN i % 11 = 0 THEN (ARRAY['NaN', 'Infinity', '-Infinity', '0', '-0.000', '1e-1000', '-1e300',
                                     '3.141592653589793238462643383279502884197169399375105820974944592307816406286'])[i % 8 + 1]::numeric
         ELSE round(((random() - 0.5) * 1e8)::numeric, (i % 12)) END AS n,
    CASE WHEN i % 37 = 0 THEN NULL
         WHEN i % 41 = 0 THEN ''
         ELSE (ARRAY['apple', 'Apple', 'apples', 'äpfel', 'Zebra', 'zebra', 'éclair', '日本語', 'a b', 'ab',
                     'prefix-shared-by-many-long-strings-', 'PREFIX'])[i % 12 + 1]
              || repeat(chr(97 + i % 26), i % 9) || (i % 97)::text END AS t,
    CASE WHEN i % 43 = 0 THEN NULL ELSE ('v' || (i * 31 % 1009))::varchar(20) END AS vc,
    CASE WHEN i % 47 = 0 THEN NULL ELSE (ARRAY['ab', 'ab  ', 'a', '', 'abcde', 'b'])[i % 6 + 1]::char(5) END AS ch,
    CASE WHEN i % 53 = 0 THEN NULL
         WHEN i % 10 = 0 THEN '\x00'::bytea || int4send(i % 100)
         ELSE decode(substr(md5((i % 3000)::text), 1, 2 * (i % 16)), 'hex') END AS b,
    CASE WHEN i % 59 = 0 THEN NULL
         WHEN i % 101 = 0 THEN (ARRAY['infinity', '-infinity', '4713-01-01 BC'])[i % 3 + 1]::date
         ELSE date '2000-01-01' + (i * 37 % 20000 - 10000) END AS d,
    CASE WHEN i % 61 = 0 THEN NULL
         WHEN i % 103 = 0 THEN (ARRAY['infinity', '-infinity'])[i % 2 + 1]::timestamptz
         ELSE timestamptz '2020-03-08 01:30:00+00' + (i * 7777 % 1000003) * interval '1 minute' END AS ts,
    CASE WHEN i % 67 = 0 THEN NULL
         ELSE (ARRAY[interval '1 month', interval '30 days', interval '720 hours', interval '-1 year',
                     interval '1 day 00:00:01', interval '0'])[i % 6 + 1] * (i % 5) END AS iv,
    CASE WHEN i % 71 = 0 THEN NULL ELSE md5((i % 5000)::text)::uuid END AS u,
    CASE WHEN i % 73 = 0 THEN NULL
         WHEN i % 9 = 0 THEN to_jsonb(i % 50)
         WHEN i % 9 = 1 THEN to_jsonb('s' || (i % 40))
         WHEN i % 9 = 2 THEN jsonb_build_array(i % 5, 'x', NULL)
         WHEN i % 9 = 3 THEN 'null'::jsonb
         WHEN i % 9 = 4 THEN to_jsonb(i % 2 = 0)
         ELSE jsonb_build_object('k', i % 30, 'w', repeat('w', i % 7), 'n', jsonb_build_object('z', i % 3)) END AS j,
    CASE WHEN i % 79 = 0 THEN NULL
         WHEN i % 13 = 0 THEN '{}'::int[]
         ELSE ARRAY[i % 7, NULLIF(i % 5, 0), i % 3] END AS ai,
    CASE WHEN i % 83 = 0 THEN NULL ELSE ARRAY['x' || (i % 11), NULL, repeat('y', i % 4)] END AS at,
    CASE WHEN i % 89 = 0 THEN NULL ELSE ROW(i % 13, 'p' || (i % 7))::ty_pair END AS pr,
    CASE WHEN i % 97 = 0 THEN NULL ELSE (i % 500 + 1)::ty_posint END AS dom,
    CASE WHEN i % 107 = 0 THEN NULL ELSE ('c' || (i % 333))::ty_code END AS dv,
    CASE WHEN i % 109 = 0 THEN NULL ELSE ('name_' || (i * 13 % 777))::name END AS nm,
    CASE WHEN i % 113 = 0 THEN NULL ELSE i % 3 = 0 END AS bo,
    CASE WHEN i % 127 = 0 THEN NULL ELSE chr(65 + i % 26)::"char" END AS ch1,
    CASE WHEN i % 131 = 0 THEN NULL ELSE time '00:00' + (i * 17 % 86400) * interval '1 second' END AS tm,
    CASE WHEN i % 137 = 0 THEN NULL
         ELSE (time '00:00' + (i * 17 % 86400) * interval '1 second')::timetz
              AT TIME ZONE (ARRAY['UTC', '+05:30', '-08'])[i % 3 + 1] END AS tz,
    CASE WHEN i % 139 = 0 THEN NULL ELSE ('10.' || (i % 256) || '.' || (i * 7 % 256) || '.0/' || (16 + i % 17))::inet END AS ip,
    CASE WHEN i % 149 = 0 THEN NULL
         ELSE ('08:00:2b:' || lpad(to_hex(i % 256), 2, '0') || ':00:' || lpad(to_hex(i * 3 % 256), 2, '0'))::macaddr END AS mac,
    CASE WHEN i % 151 = 0 THEN NULL ELSE (i * 3 % 1000)::oid END AS o,
    CASE WHEN i % 157 = 0 THEN NULL ELSE (i % 1000)::money END AS mo
FROM generate_series(1, 12000) i;
ANALYZE ty;

-- the queries: every ORDER BY ends with the unique id, so it is a total order
CREATE TABLE ty_q (qid serial, label text, sql text);
INSERT INTO ty_q (label, sql) VALUES
('int2',              'SELECT id, i2 FROM ty ORDER BY i2, id'),
('int2 desc',         'SELECT id, i2 FROM ty ORDER BY i2 DESC, id'),
('int4',              'SELECT id, i4, t FROM ty ORDER BY i4, id'),
('int8 desc nulls last', 'SELECT id, i8 FROM ty ORDER BY i8 DESC NULLS LAST, id'),
('float4 NaN -0 Inf', 'SELECT id, f4 FROM ty ORDER BY f4, id'),
('float4 desc',       'SELECT id, f4 FROM ty ORDER BY f4 DESC, id DESC'),
('float8 NaN -0 Inf', 'SELECT id, f8 FROM ty ORDER BY f8, id'),
('float8 nulls first','SELECT id, f8, i2 FROM ty ORDER BY f8 NULLS FIRST, id'),
('numeric',           'SELECT id, n FROM ty ORDER BY n, id'),
('numeric desc',      'SELECT id, n, f8 FROM ty ORDER BY n DESC NULLS LAST, id'),
('text',              'SELECT id, t FROM ty ORDER BY t, id'),
('text desc',         'SELECT id, t, i4 FROM ty ORDER BY t DESC, id'),
('text C',            'SELECT id, t FROM ty ORDER BY t COLLATE "C", id'),
('text C desc',       'SELECT id, t FROM ty ORDER BY t COLLATE "C" DESC NULLS LAST, id'),
('text POSIX',        'SELECT id, t FROM ty ORDER BY t COLLATE "POSIX", id'),
('text ~<~ operator', 'SELECT id, t FROM ty ORDER BY t USING ~<~, id'),
('varchar',           'SELECT id, vc FROM ty ORDER BY vc, id'),
('char(n)',           'SELECT id, ch FROM ty ORDER BY ch, id'),
('char(n) desc',      'SELECT id, ch, t FROM ty ORDER BY ch DESC NULLS LAST, id DESC'),
('bytea',             'SELECT id, b FROM ty ORDER BY b, id'),
('date',              'SELECT id, d FROM ty ORDER BY d, id'),
('timestamptz',       'SELECT id, ts FROM ty ORDER BY ts DESC, id'),
('interval',          'SELECT id, iv FROM ty ORDER BY iv, id'),
('uuid',              'SELECT id, u FROM ty ORDER BY u, id'),
('jsonb',             'SELECT id, j FROM ty ORDER BY j, id'),
('int array',         'SELECT id, ai FROM ty ORDER BY ai, id'),
('text array desc',   'SELECT id, at FROM ty ORDER BY at DESC, id'),
('composite',         'SELECT id, pr FROM ty ORDER BY pr, id'),
('row expression',    'SELECT id, i2, t FROM ty ORDER BY (i2, t), id'),
('domain int',        'SELECT id, dom FROM ty ORDER BY dom, id'),
('domain varchar',    'SELECT id, dv FROM ty ORDER BY dv DESC, id'),
('name',              'SELECT id, nm FROM ty ORDER BY nm, id'),
('bool',              'SELECT id, bo FROM ty ORDER BY bo NULLS FIRST, id'),
('"char"',            'SELECT id, ch1 FROM ty ORDER BY ch1, id'),
('time',              'SELECT id, tm FROM ty ORDER BY tm, id'),
('timetz',            'SELECT id, tz FROM ty ORDER BY tz, id'),
('inet',              'SELECT id, ip FROM ty ORDER BY ip, id'),
('macaddr',           'SELECT id, mac FROM ty ORDER BY mac DESC, id'),
('oid',               'SELECT id, o FROM ty ORDER BY o, id'),
('money',             'SELECT id, mo FROM ty ORDER BY mo, id'),
('tid',               'SELECT ctid, id FROM ty ORDER BY ctid DESC'),
('several keys',      'SELECT id, i2, t, n FROM ty ORDER BY i2 DESC NULLS FIRST, t COLLATE "C", n NULLS FIRST, id'),
('expression key',    'SELECT id, t FROM ty ORDER BY lower(t), length(t) DESC, id'),
('expression keys 2', 'SELECT id, i4, j FROM ty ORDER BY i4 % 7, j->>''k'', abs(f8) DESC, id'),
('key not in output', 'SELECT id FROM ty ORDER BY ts, id DESC'),
('whole row, all types', 'SELECT * FROM ty ORDER BY i2 NULLS FIRST, t, id'),
('whole row by id',   'SELECT * FROM ty ORDER BY id DESC'),
('cstring column',    'SELECT id, x::text FROM (SELECT id, textout(t) AS x FROM ty ORDER BY i4, id) s'),
('constant key',      'SELECT id, t FROM ty ORDER BY 1 + 0 * id, id');

SET work_mem = '64kB';
SELECT label, cs_check(sql, 'spill') AS spilling FROM ty_q ORDER BY qid;

SET work_mem = '64MB';
SELECT label, cs_check(sql, 'memory') AS in_memory FROM ty_q ORDER BY qid;

-- orders that are not total: equal keys may come out in any order, so
-- compare the key sequence and the multiset of rows (keys that compare equal
-- but print differently, numeric 0 and 0.000, interval '1 mon' and '30 days',
-- are normalized first)
SET work_mem = '64kB';
SELECT compare_keys('SELECT * FROM ty ORDER BY i2', 'cs_row.i2', 'spill');
SELECT compare_keys('SELECT id, f8, t FROM ty ORDER BY f8 DESC', 'cs_row.f8', 'spill');
SELECT compare_keys('SELECT id, n, t FROM ty ORDER BY n NULLS FIRST', 'trim_scale(cs_row.n)', 'spill');
SELECT compare_keys('SELECT id, t FROM ty ORDER BY t COLLATE "C"', 'cs_row.t', 'spill');
SELECT compare_keys('SELECT id, iv FROM ty ORDER BY iv', 'justify_interval(cs_row.iv)', 'spill');
SELECT compare_keys('SELECT id, ch, bo FROM ty ORDER BY bo, ch', 'row(cs_row.bo, cs_row.ch)', 'spill');
SET work_mem = '4MB';
SELECT compare_keys('SELECT * FROM ty ORDER BY i2', 'cs_row.i2', 'spill');
SELECT compare_keys('SELECT id, j FROM ty ORDER BY j', 'cs_row.j', 'memory');

RESET work_mem;
DROP TABLE ty, ty_q;
DROP TYPE ty_pair;
DROP DOMAIN ty_posint, ty_code;
