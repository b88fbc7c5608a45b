--
-- multipass: the smallest work_mem forces many runs and merges in several
-- passes; 4MB with more data makes fewer, larger runs.  Narrow rows, many of
-- them.
--
LOAD 'compspill';

CREATE TABLE mp AS
SELECT i AS id, (i::int8 * 2654435761 % 1000003)::int AS k, (i % 1000)::int2 AS s
FROM generate_series(1, 200000) i;
ANALYZE mp;

SET work_mem = '64kB';
SET compspill.codec = lz4;
SELECT compare_sorted('SELECT * FROM mp ORDER BY k, id', 'spill');
-- many runs, merged in more than one pass
SELECT (n->>'Spill Runs')::int > 20 AS many_runs,
       (n->>'Merge Passes')::int >= 2 AS several_passes,
       (n->>'Rows Spilled')::int = 200000 AS all_rows_spilled
FROM cs_node('SELECT * FROM mp ORDER BY k, id') n;
-- its list of runs outgrows an eighth of 64kB, so runs are merged while
-- the input is read; each of those merges reads at least six runs, as
-- native sort's merges read at least six tapes however small work_mem is,
-- and fewer than a group wait for the next merge: so there are at most a
-- third as many merges as runs (with merges of two runs there were about
-- as many, and each row was written again some log2(runs) times)
SELECT (n->>'Early Merges')::int > 0 AS merged_early,
       (n->>'Early Merges')::int * 3 <= (n->>'Spill Runs')::int AS wide_merges
FROM cs_node('SELECT * FROM mp ORDER BY k, id') n;
SELECT compare_sorted('SELECT id, s FROM mp ORDER BY s DESC, k, id', 'spill');
SELECT compare_keys('SELECT id, s FROM mp ORDER BY s', 'cs_row.s', 'spill');
SET compspill.codec = zstd;
SELECT compare_sorted('SELECT k FROM mp ORDER BY k DESC', 'spill');
SET compspill.codec = none;
SELECT compare_sorted('SELECT * FROM mp ORDER BY s, id DESC', 'spill');
-- direct I/O with many small runs
SET client_min_messages = warning;
SET compspill.enable_dio = on;
SELECT compare_sorted('SELECT * FROM mp ORDER BY k, id', 'spill');
SET compspill.enable_dio = off;
RESET client_min_messages;
RESET compspill.codec;

-- row frames merged in several passes, every codec: the intermediate
-- passes copy rows into row frames (a column frame anywhere fails this)
CREATE FUNCTION mp_kinds(q text) RETURNS TABLE (several_passes bool,
    row_frames bool, no_column_frames bool) LANGUAGE sql AS $$
    SELECT (n->>'Merge Passes')::int >= 2, (n->>'Frames Row')::int > 0,
           (n->>'Frames Column')::int = 0
    FROM cs_node(q) n
$$;
SET compspill.frame_kind = row;
SET compspill.codec = none;
SELECT compare_sorted('SELECT * FROM mp ORDER BY k, id', 'spill');
SELECT * FROM mp_kinds('SELECT * FROM mp ORDER BY k, id');
SET compspill.codec = lz4;
SELECT compare_sorted('SELECT id, s FROM mp ORDER BY s DESC, k, id', 'spill');
SELECT compare_keys('SELECT id, s FROM mp ORDER BY s', 'cs_row.s', 'spill');
SELECT * FROM mp_kinds('SELECT id, s FROM mp ORDER BY s DESC, k, id');
SET compspill.codec = zstd;
SELECT compare_sorted('SELECT k, id FROM mp ORDER BY k DESC, id', 'spill');
-- (a single column sorted on itself is a datum sort: column frames)
SELECT * FROM mp_kinds('SELECT k, id FROM mp ORDER BY k DESC, id');
SET compspill.codec = auto;
SELECT compare_sorted('SELECT * FROM mp ORDER BY s, id DESC', 'spill');
SELECT * FROM mp_kinds('SELECT * FROM mp ORDER BY s, id DESC');
-- direct I/O
SET client_min_messages = warning;
SET compspill.enable_dio = on;
SELECT compare_sorted('SELECT * FROM mp ORDER BY k, id', 'spill');
SET compspill.enable_dio = off;
RESET client_min_messages;
-- a merge join's inner sort, marked and restored, read from the store its
-- final merge of row runs wrote
SET enable_hashjoin = off;
SET enable_nestloop = off;
SELECT compare_rows('SELECT a.id, b.id AS bid FROM mp a JOIN mp b ON a.s = b.s % 7 AND a.k = b.k', 'spill');
SELECT (n->>'Frames Row')::int > 0 AS inner_row_frames
FROM cs_nodes(cs_analyze_json('SELECT a.id, b.id AS bid FROM mp a JOIN mp b ON a.s = b.s % 7 AND a.k = b.k')) n
WHERE n->>'Parent Relationship' = 'Inner';
RESET enable_hashjoin;
RESET enable_nestloop;
-- runs of both kinds merged together: a test-only setting alternates them
SET compspill.frame_kind = alternate;
SELECT compare_sorted('SELECT * FROM mp ORDER BY k, id', 'spill');
SELECT compare_sorted('SELECT id, s FROM mp ORDER BY s DESC, k, id', 'spill');
SELECT (n->>'Merge Passes')::int >= 2 AS several_passes,
       (n->>'Frames Row')::int > 0 AS row_frames,
       (n->>'Frames Column')::int > 0 AS column_frames
FROM cs_node('SELECT * FROM mp ORDER BY k, id') n;
RESET compspill.frame_kind;
-- runs read two ways in one merge: with lz4, a run of row frames of
-- random bytes is stored raw (lz4 does not shrink them) and read through
-- a window of its own, a run with some lz4 frames is read in place, into
-- the tail of its decompression buffer; stretches of 100 rows of each
-- kind make runs of both, which the merges read together, and a reader
-- may move from one way to the other as it takes its next run (once here
-- on 15, counted with a temporary log line)
CREATE TABLE mp_raw AS
SELECT i AS id, (i::int8 * 2654435761 % 1000003)::int AS k,
       CASE WHEN (i / 100) % 2 = 0
            THEN (SELECT decode(string_agg(md5(i || '/' || j), ''), 'hex')
                  FROM generate_series(1, 90) j)
            ELSE convert_to(repeat('spill ', 200) || i, 'UTF8') END AS b
FROM generate_series(1, 800) i;
SET compspill.codec = lz4;
SET compspill.frame_kind = row;
SELECT compare_sorted('SELECT * FROM mp_raw ORDER BY k, id', 'spill');
SELECT (n->>'Merge Passes')::int >= 2 AS several_passes,
       (n->>'Frames Stored Raw')::int > 0 AS raw_frames,
       (n->>'Frames LZ4')::int > 0 AS lz4_frames
FROM cs_node('SELECT * FROM mp_raw ORDER BY k, id') n;
RESET compspill.frame_kind;
DROP TABLE mp_raw;
RESET compspill.codec;
DROP FUNCTION mp_kinds(text);

-- a million rows at 64kB
SELECT compare_sorted('SELECT g FROM generate_series(1, 1000000) g ORDER BY g % 7919, g', 'spill');

-- 4MB: fewer runs, one merge
SET work_mem = '4MB';
CREATE TABLE mp4 AS
SELECT i AS id, (i::int8 * 2654435761 % 1000003)::int AS k,
       'value ' || (i % 10007) || ' ' || repeat('x', i % 40) AS t
FROM generate_series(1, 300000) i;
ANALYZE mp4;
SELECT compare_sorted('SELECT * FROM mp4 ORDER BY t, id', 'spill');
SELECT compare_sorted('SELECT * FROM mp4 ORDER BY k DESC, id', 'spill');
SELECT (n->>'Spill Runs')::int > 1 AS several_runs,
       (n->>'Rows Spilled')::int = 300000 AS rows_spilled
FROM cs_node('SELECT * FROM mp4 ORDER BY t, id') n;
SELECT compare_sorted('SELECT * FROM mp ORDER BY k, id', 'spill');

RESET work_mem;
DROP TABLE mp, mp4;
