--
-- explain: what EXPLAIN shows of a CompSpill Sort, in all four formats.
-- Numbers vary from run to run, so only their presence and shape are
-- checked; the Sort Key must read exactly as native Sort's does.
--
LOAD 'compspill';

CREATE TABLE ex (a int, b int, t text, j jsonb);
INSERT INTO ex
SELECT i, i % 97, 'line ' || (i % 1000) || ' of some quite compressible text',
       jsonb_build_object('k', i % 10)
FROM generate_series(1, 20000) i;
ANALYZE ex;

SET work_mem = '64kB';
SET compspill.codec = lz4;
SET compspill.enable_dio = off;

-- text format, a sort that spills
CREATE TEMP TABLE ex_text AS
SELECT l FROM cs_explain('SELECT * FROM ex ORDER BY b DESC, a',
                         'ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF') l;
SELECT
    bool_or(l ~ '^Custom Scan \(CompSpill Sort\) \(actual rows=20000(\.00)? loops=1\)$') AS node_line,
    bool_or(l ~ '^  Sort Key: b DESC, a$') AS sort_key,
    bool_or(l ~ '^  Sort Method: external merge  Memory: \d+kB  Disk: \d+kB$') AS sort_method,
    bool_or(l ~ '^  Spill: .*codec=lz4') AS spill_codec,
    bool_or(l ~ '^  Spill: .*direct I/O=off') AS spill_dio,
    bool_or(l ~ '^  Spill: .*runs=\d+') AS spill_runs,
    bool_or(l ~ '^  Spill: .*merge passes=\d+') AS spill_passes,
    bool_or(l ~ '^  Spill: .*rows=20000') AS spill_rows,
    bool_or(l ~ '^  Spill Bytes: ') AS spill_bytes,
    bool_or(l ~ '^  Spill Frames: none=0  lz4=[1-9]\d*  zstd=0  stored raw=\d+  block size=\d+kB$') AS spill_frames,
    bool_or(l ~ '^  Spill File: peak=\d+kB  run formation wrote=\d+kB$') AS spill_file,
    bool_or(l ~ '^  Spill I/O: ') AS spill_io,
    bool_or(l ~ '^  Spill CPU: encode=\d+\.\d{3}  compress=\d+\.\d{3}  decompress=\d+\.\d{3}  decode=\d+\.\d{3} ms$') AS spill_cpu,
    bool_or(l ~ '^  ->  Seq Scan on ex \(actual rows=20000(\.00)? loops=1\)$') AS child_line
FROM ex_text;
-- text format, in memory
SET work_mem = '64MB';
SELECT
    bool_or(l ~ '^  Sort Method: quicksort  Memory: \d+kB$') AS sort_method_quicksort,
    bool_and(l !~ 'external') AS no_external
FROM cs_explain('SELECT * FROM ex ORDER BY b DESC, a', 'ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF') l;
-- without ANALYZE: the plan and the key, nothing about execution
SELECT l FROM cs_explain('SELECT * FROM ex ORDER BY b DESC, a') l;
SET work_mem = '64kB';

-- JSON: every key, and the values that can be known
CREATE TEMP TABLE ex_json AS
SELECT cs_node('SELECT * FROM ex ORDER BY t, a') AS n;
SELECT k AS key, n ? k AS present
FROM ex_json, unnest(ARRAY['Sort Key', 'Sort Method', 'Sort Space Used', 'Sort Space Type',
                           'Spill Codec', 'Direct I/O', 'Direct I/O Fallback',
                           'Spill Runs', 'Merge Passes',
                           'Rows Spilled', 'Bytes Before Encoding', 'Bytes Written',
                           'Compression Ratio', 'Frames None', 'Frames LZ4', 'Frames Zstd',
                           'Frames Zstd Dictionary',
                           'Frames Stored Raw', 'Block Size', 'Temp File Peak',
                           'Run Formation Written', 'Write Time', 'Read Time',
                  'Spill Encode Time', 'Spill Compress Time', 'Spill Decompress Time',
                  'Spill Decode Time']) WITH ORDINALITY AS u(k, o)
ORDER BY o;
SELECT n->'Sort Key' AS sort_key,
       n->>'Sort Method' AS sort_method,
       n->>'Sort Space Type' AS space_type,
       n->>'Spill Codec' AS codec,
       n->>'Direct I/O' AS dio,
       (n->>'Spill Runs')::int > 1 AS several_runs,
       (n->>'Merge Passes')::int > 1 AS intermediate_passes,
       (n->>'Rows Spilled')::int = 20000 AS rows_spilled,
       (n->>'Bytes Written')::numeric > 0 AS bytes_written,
       (n->>'Bytes Before Encoding')::numeric > 0 AS bytes_before,
       (n->>'Compression Ratio')::numeric > 1 AS compressed,
       (n->>'Frames LZ4')::int = (n->>'Frames None')::int + (n->>'Frames LZ4')::int
           + (n->>'Frames Zstd')::int AS all_frames_lz4,
       (n->>'Temp File Peak')::numeric <= 1.1 * (n->>'Run Formation Written')::numeric
           + 4 * (n->>'Spill Runs')::int AS one_copy_on_disk
FROM ex_json;
-- Spill CPU: every figure there, none negative; lz4 took time to compress
-- and decompress, and encoding and decoding took some
SELECT (n->>'Spill Encode Time')::numeric > 0 AS encode_time,
       (n->>'Spill Compress Time')::numeric > 0 AS compress_time,
       (n->>'Spill Decompress Time')::numeric > 0 AS decompress_time,
       (n->>'Spill Decode Time')::numeric > 0 AS decode_time
FROM ex_json;
-- with codec none nothing is compressed: those figures are zero
SET compspill.codec = none;
SELECT (n->>'Spill Encode Time')::numeric > 0 AS encode_time,
       (n->>'Spill Compress Time')::numeric = 0 AS no_compress_time,
       (n->>'Spill Decompress Time')::numeric = 0 AS no_decompress_time,
       (n->>'Spill Decode Time')::numeric >= 0 AS decode_time
FROM cs_node('SELECT * FROM ex ORDER BY t, a') n;
SET compspill.codec = lz4;
-- the same figures for every node that spills: a CTE's and a recursive
-- union's stores, an incremental sort
CREATE INDEX ex_a2 ON ex ((a % 2));
ANALYZE ex;
SET enable_seqscan = off;
SET enable_hashjoin = off;
SELECT p AS provider, count(*) > 0 AS spilled,
       bool_and((n->>'Spill Encode Time')::numeric > 0) AS encode_time,
       bool_and((n->>'Spill Compress Time')::numeric > 0) AS compress_time,
       bool_and((n->>'Spill Decompress Time')::numeric >= 0) AS decompress_time,
       bool_and((n->>'Spill Decode Time')::numeric >= 0) AS decode_time
FROM (VALUES ('CompSpill CTE Scan',
              'WITH c AS MATERIALIZED (SELECT * FROM ex) SELECT a.a, b.t FROM c a JOIN c b ON a.a = b.a + 2'),
             ('CompSpill Recursive Union',
              'WITH RECURSIVE r(n, s) AS (SELECT 1, repeat(''x'', 20) UNION ALL SELECT n + 1, s || n FROM r WHERE n < 3000) SELECT count(*), max(s) FROM r'))
     AS q(p, sql),
     cs_provider_nodes(cs_analyze_json(q.sql), q.p) n
WHERE n ? 'Spill Codec'
GROUP BY p ORDER BY p;
-- an incremental sort (15 prefers a full sort over the index, 18 does not)
SET enable_sort = off;
SELECT p AS provider, count(*) > 0 AS spilled,
       bool_and((n->>'Spill Encode Time')::numeric > 0) AS encode_time,
       bool_and((n->>'Spill Compress Time')::numeric > 0) AS compress_time,
       bool_and((n->>'Spill Decompress Time')::numeric >= 0) AS decompress_time,
       bool_and((n->>'Spill Decode Time')::numeric >= 0) AS decode_time
FROM (VALUES ('CompSpill Incremental Sort', 'SELECT * FROM ex ORDER BY a % 2, t'))
     AS q(p, sql),
     cs_provider_nodes(cs_analyze_json(q.sql), q.p) n
WHERE n ? 'Spill Codec'
GROUP BY p ORDER BY p;
RESET enable_sort;
RESET enable_seqscan;
RESET enable_hashjoin;
DROP INDEX ex_a2;
-- a sort whose runs the final merge reads at once makes one pass: the
-- final merge, nothing written twice
SET work_mem = '1MB';
SELECT (n->>'Spill Runs')::int > 1 AS several_runs,
       (n->>'Merge Passes')::int = 1 AS single_pass,
       (n->>'Bytes Written')::numeric = (n->>'Run Formation Written')::numeric AS written_once
FROM cs_node('SELECT t, a FROM ex ORDER BY t, a') n;
SET work_mem = '64kB';
-- BUFFERS: the spill's I/O is counted as temp blocks, as native's is
-- (its bytes in BLCKSZ blocks, rounded up), and with track_io_timing as
-- temp I/O time; natively the same sort writes more blocks
SET track_io_timing = on;
SELECT (n->>'Temp Written Blocks')::numeric
           = ceil((n->>'Bytes Written')::numeric * 1024 / current_setting('block_size')::int)
           AS temp_written_is_bytes_written,
       (n->>'Temp Written Blocks')::int > 0 AS temp_written,
       (n->>'Temp Read Blocks')::int > 0 AS temp_read,
       (n->>'Temp I/O Write Time')::numeric > 0 AS temp_write_time,
       (n->'Plans'->0->>'Temp Written Blocks')::int = 0 AS child_writes_none,
       (n->>'Temp Written Blocks')::int
           < (SELECT (m->>'Temp Written Blocks')::int
              FROM jsonb_path_query(cs_analyze_json('SELECT * FROM ex ORDER BY t, a',
                                                    'BUFFERS, COSTS OFF, TIMING OFF, SUMMARY OFF', false),
                                    'strict $.** ? (@."Node Type" == "Sort")') m) AS fewer_than_native
FROM cs_nodes(cs_analyze_json('SELECT * FROM ex ORDER BY t, a',
                              'BUFFERS, COSTS OFF, TIMING OFF, SUMMARY OFF')) n;
RESET track_io_timing;
-- compressing writes fewer bytes than not compressing
SET compspill.codec = none;
SELECT (cs_node('SELECT * FROM ex ORDER BY t, a')->>'Bytes Written')::numeric
       > (SELECT (n->>'Bytes Written')::numeric FROM ex_json) AS lz4_writes_less_than_none;
SELECT cs_node('SELECT * FROM ex ORDER BY t, a')->>'Spill Codec' AS codec_none;
SET compspill.codec = zstd;
SELECT cs_node('SELECT * FROM ex ORDER BY t, a')->>'Spill Codec' AS codec_zstd;
SET compspill.codec = lz4;
-- in memory, JSON
SET work_mem = '64MB';
SELECT n->>'Sort Method' AS sort_method, n->>'Sort Space Type' AS space_type
FROM cs_node('SELECT * FROM ex ORDER BY t, a') n;
SET work_mem = '64kB';

-- YAML
SELECT k AS key, bool_or(l ~ ('^ *' || k || ': ')) AS present
FROM cs_explain('SELECT * FROM ex ORDER BY b, t', 'ANALYZE, COSTS OFF, FORMAT YAML') l,
     unnest(ARRAY['Custom Plan Provider', 'Sort Key', 'Sort Method', 'Sort Space Used', 'Sort Space Type',
                  'Spill Codec', 'Direct I/O', 'Spill Runs', 'Merge Passes',
                  'Rows Spilled', 'Bytes Before Encoding', 'Bytes Written',
                  'Compression Ratio', 'Frames None', 'Frames LZ4', 'Frames Zstd',
                  'Frames Stored Raw', 'Block Size', 'Temp File Peak',
                  'Run Formation Written', 'Write Time', 'Read Time',
                  'Spill Encode Time', 'Spill Compress Time', 'Spill Decompress Time',
                  'Spill Decode Time']) WITH ORDINALITY AS u(k, o)
GROUP BY k, o ORDER BY o;

-- XML: well formed, and every key is an element of the CompSpill node
CREATE TEMP TABLE ex_xml AS
SELECT string_agg(l, E'\n')::xml AS x
FROM cs_explain('SELECT * FROM ex ORDER BY b, t', 'ANALYZE, COSTS OFF, FORMAT XML') l;
SELECT k AS key,
       (xpath('count(//e:Plan[e:Custom-Plan-Provider="CompSpill Sort"]/e:' ||
              regexp_replace(k, '[^A-Za-z0-9._:-]', '-', 'g') || ')', x,
              ARRAY[ARRAY['e', 'http://www.postgresql.org/2009/explain']]))[1]::text AS count
FROM ex_xml,
     unnest(ARRAY['Sort Key', 'Sort Method', 'Sort Space Used', 'Sort Space Type',
                  'Spill Codec', 'Direct I/O', 'Spill Runs', 'Merge Passes',
                  'Rows Spilled', 'Bytes Before Encoding', 'Bytes Written',
                  'Compression Ratio', 'Frames None', 'Frames LZ4', 'Frames Zstd',
                  'Frames Stored Raw', 'Block Size', 'Temp File Peak',
                  'Run Formation Written', 'Write Time', 'Read Time',
                  'Spill Encode Time', 'Spill Compress Time', 'Spill Decompress Time',
                  'Spill Decode Time']) WITH ORDINALITY AS u(k, o)
ORDER BY o;
SELECT (xpath('//e:Plan[e:Custom-Plan-Provider="CompSpill Sort"]/e:Sort-Method/text()', x,
              ARRAY[ARRAY['e', 'http://www.postgresql.org/2009/explain']]))[1]::text AS xml_sort_method
FROM ex_xml;

-- Sort Key reads exactly as native Sort's, whatever the ORDER BY: the
-- "Sort Key" lines of the two plans, in text and JSON, plain and VERBOSE
CREATE FUNCTION sort_keys(query text, opts text, enabled bool)
RETURNS text LANGUAGE sql AS $f$
    SELECT string_agg(trim(l), ' | ') FROM cs_explain(query, opts, enabled) l
    WHERE l ~ '^\s*(Sort Key|"Sort Key"|<Sort-Key>)' OR l ~ '^\s*- "' OR l ~ '<Item>'
$f$;
CREATE FUNCTION same_sort_keys(query text)
RETURNS text LANGUAGE plpgsql AS $f$
DECLARE
    opts text;
    native text;
    comp text;
BEGIN
    IF position('CompSpill Sort' IN cs_plan(query)) = 0 THEN
        RETURN 'no CompSpill Sort in the plan';
    END IF;
    FOREACH opts IN ARRAY ARRAY['COSTS OFF', 'COSTS OFF, VERBOSE', 'COSTS OFF, FORMAT JSON',
                                'COSTS OFF, VERBOSE, FORMAT YAML', 'COSTS OFF, FORMAT XML'] LOOP
        native := sort_keys(query, opts, false);
        comp := sort_keys(query, opts, true);
        IF native IS NULL THEN
            RETURN 'no Sort Key found in ' || opts;
        END IF;
        IF native IS DISTINCT FROM comp THEN
            RETURN opts || ': native "' || native || '" / compspill "' || coalesce(comp, '<none>') || '"';
        END IF;
    END LOOP;
    RETURN 'same';
END
$f$;

CREATE TABLE ex_q (qid serial, sql text);
INSERT INTO ex_q (sql) VALUES
('SELECT * FROM ex ORDER BY a'),
('SELECT * FROM ex ORDER BY b DESC, a'),
('SELECT * FROM ex ORDER BY b NULLS FIRST, t DESC NULLS LAST'),
('SELECT * FROM ex ORDER BY t COLLATE "C", a DESC'),
('SELECT * FROM ex ORDER BY t USING ~>~'),
('SELECT * FROM ex ORDER BY lower(t), a + b'),
('SELECT * FROM ex ORDER BY j->>''k'', (j->''k'')::int DESC'),
('SELECT a, b FROM ex ORDER BY 2, 1'),
('SELECT a AS x FROM ex ORDER BY x'),
('SELECT * FROM ex ORDER BY (a, t)'),
('SELECT * FROM ex e1 ORDER BY e1.b, e1.a'),
('SELECT b, count(*) FROM ex GROUP BY b'),
('SELECT a, row_number() OVER (PARTITION BY b ORDER BY t) FROM ex'),
('SELECT DISTINCT b, t FROM ex'),
('SELECT * FROM (SELECT a, b FROM ex UNION ALL SELECT b, a FROM ex) s ORDER BY b, a');
SET enable_hashagg = off;
SELECT qid, sql, same_sort_keys(sql) FROM ex_q ORDER BY qid;
-- merge join keys
SET enable_hashjoin = off;
SET enable_nestloop = off;
SELECT same_sort_keys('SELECT * FROM ex e1 JOIN ex e2 ON e1.a = e2.b AND e1.t = e2.t');
RESET enable_hashjoin;
RESET enable_nestloop;
RESET enable_hashagg;

RESET compspill.codec;
RESET compspill.enable_dio;
RESET work_mem;
DROP TABLE ex, ex_q;
DROP FUNCTION sort_keys(text, text, bool), same_sort_keys(text);
