--
-- codecs: every codec (none, lz4, zstd at low and high levels), direct I/O
-- on and off, and the smallest and largest block and write sizes, each
-- compared with native Sort on the same spilling sorts.
--
LOAD 'compspill';
SELECT setseed(0.3);

CREATE TABLE cd (id int, k int, t text, n numeric, b bytea, f float8, d date);
INSERT INTO cd
SELECT i, (i * 7919) % 4001,
    CASE WHEN i % 17 = 0 THEN NULL
         ELSE (ARRAY['the', 'quick', 'brown', 'fox', 'jumps', 'over', 'lazy', 'dog'])[i % 8 + 1] || ' ' ||
              (ARRAY['alpha', 'beta', 'gamma', 'delta', 'epsilon'])[i % 5 + 1] || ' ' || (i % 313) END,
    CASE WHEN i % 19 = 0 THEN NULL ELSE round((random() * 1e6)::numeric, 3) END,
    CASE WHEN i % 23 = 0 THEN NULL ELSE decode(md5(i::text), 'hex') END,
    CASE WHEN i % 29 = 0 THEN 'NaN' ELSE random() END,
    date '2020-01-01' + i % 1000
FROM generate_series(1, 10000) i;
-- some incompressible wide values too
UPDATE cd SET t = (SELECT string_agg(md5(random()::text || g), '') FROM generate_series(1, 20) g)
WHERE id % 50 = 0;
ANALYZE cd;

CREATE TABLE cd_q (qid serial, sql text);
INSERT INTO cd_q (sql) VALUES
('SELECT * FROM cd ORDER BY k, id'),
('SELECT * FROM cd ORDER BY t DESC NULLS LAST, id'),
('SELECT id, n, b FROM cd ORDER BY n NULLS FIRST, b, id'),
('SELECT id, f, d FROM cd ORDER BY f, d DESC, id');

-- Run every query under the current settings; one line per query
CREATE FUNCTION cd_all(expect text DEFAULT 'spill')
RETURNS TABLE (qid int, verdict text) LANGUAGE sql AS $$
    SELECT qid, cs_check(sql, expect) FROM cd_q ORDER BY qid
$$;

SET work_mem = '64kB';
SET compspill.codec = none;
SELECT * FROM cd_all();
SET compspill.codec = lz4;
SELECT * FROM cd_all();
SET compspill.codec = zstd;
SET compspill.compression_level = 1;
SELECT * FROM cd_all();
SET compspill.compression_level = 9;
SELECT * FROM cd_all();
-- the highest level is slow: a smaller input
SET compspill.compression_level = 22;
SELECT cs_check('SELECT * FROM cd WHERE id <= 4000 ORDER BY t, id', 'spill');
SELECT cs_check('SELECT id, n FROM cd WHERE id <= 4000 ORDER BY n DESC, id', 'spill');
RESET compspill.compression_level;
-- the codec in use is the one asked for: the frames say which codec each
-- was written with, not what the setting reads
CREATE FUNCTION cd_frames(codec text) RETURNS TABLE (setting text, none_frames bool,
    lz4_frames bool, zstd_frames bool) LANGUAGE plpgsql AS $$
DECLARE
    n jsonb;
BEGIN
    PERFORM set_config('compspill.codec', codec, true);
    n := cs_node('SELECT * FROM cd ORDER BY k, id');
    RETURN QUERY SELECT n->>'Spill Codec', (n->>'Frames None')::int > 0,
        (n->>'Frames LZ4')::int > 0, (n->>'Frames Zstd')::int > 0;
END $$;
SELECT * FROM cd_frames('none');
SELECT * FROM cd_frames('lz4');
SELECT * FROM cd_frames('zstd');
-- at 64kB zstd's state has no room beside the first run's rows: that run
-- is written with lz4, and zstd comes once its rows are freed; at 4MB,
-- beside 200,000 rows' first run, it has room, and every frame is zstd's
SET work_mem = '4MB';
SET compspill.codec = zstd;
SELECT n->>'Sort Method' AS method, (n->>'Frames LZ4')::int AS lz4_frames,
       (n->>'Frames Zstd')::int > 0 AS zstd_frames
FROM cs_node('SELECT i, md5(i::text) FROM generate_series(1, 200000) i ORDER BY 2') n;
SET work_mem = '64kB';
-- frames count by the codec they were stored with, not the one tried: of
-- blocks of random bytes zstd shrinks some, and the others, stored raw,
-- count as none (the first run's frames, lz4's at 64kB, too)
CREATE TABLE cd_rand AS
SELECT i AS id, decode(md5(i::text) || md5((-i)::text) || md5((i * 7)::text)
                       || md5((i * 13)::text), 'hex') AS b
FROM generate_series(1, 20000) i;
SET compspill.codec = zstd;
SELECT (n->>'Frames Stored Raw')::int > 0 AS some_stored_raw,
       (n->>'Frames None')::int = (n->>'Frames Stored Raw')::int AS raw_counted_as_none,
       (n->>'Frames Zstd')::int > 0 AS some_zstd
FROM cs_node('SELECT b FROM cd_rand ORDER BY b') n;
DROP TABLE cd_rand;

-- zstd compresses against a dictionary made of the spill's first blocks
-- (compspill.zstd_dictionary, 16kB, at most a 256th of work_mem; none under
-- 8kB): the frames after those say so, the file is smaller than without
-- one (by a few percent on these rows, 16-18% on lineitem's), the rows are
-- the same.  Set to 0, or at 1MB, no frame has one.
CREATE FUNCTION cd_dict(size text, wm text) RETURNS TABLE (dict_frames bool,
    frames_without int, kb int, results text) LANGUAGE plpgsql AS $$
DECLARE
    n jsonb;
    q text := 'SELECT c.*, g FROM cd c, generate_series(1, 4) g ORDER BY k, id, g';
BEGIN
    PERFORM set_config('compspill.zstd_dictionary', size, true);
    PERFORM set_config('work_mem', wm, true);
    n := cs_node(q);
    RETURN QUERY SELECT (n->>'Frames Zstd Dictionary')::int > 0,
        (n->>'Frames Zstd')::int - (n->>'Frames Zstd Dictionary')::int,
        (n->>'Bytes Written')::int, cs_check(q, 'spill');
END $$;
SET compspill.codec = zstd;
SELECT w.dict_frames, w.frames_without > 0 AS first_frames_without,
       w.kb < wo.kb AS smaller_file, w.results, NOT wo.dict_frames AS off_has_none,
       wo.results AS off_results, NOT s.dict_frames AS small_work_mem_has_none
FROM cd_dict('16kB', '2MB') w, cd_dict('0', '2MB') wo, cd_dict('16kB', '1MB') s;

-- direct I/O: on a filesystem that refuses O_DIRECT compspill falls back to
-- buffered I/O with a NOTICE, which this test must not depend on
SET client_min_messages = warning;
SET compspill.enable_dio = on;
SET compspill.codec = none;
SELECT * FROM cd_all();
SET compspill.codec = lz4;
SELECT * FROM cd_all();
SET compspill.codec = zstd;
SELECT * FROM cd_all();
SET work_mem = '1MB';
SELECT cs_check('SELECT * FROM cd ORDER BY t DESC NULLS LAST, id', 'spill');
SET work_mem = '64kB';
-- ext4, xfs and (since Linux 6.6) tmpfs accept O_DIRECT; elsewhere the
-- file system refuses it and compspill says so in a NOTICE: either is
-- right, and EXPLAIN's "Direct I/O" and "Direct I/O Fallback" say which
-- (the NOTICE is the only way to be refused)
CREATE FUNCTION cd_dio() RETURNS TABLE (requested bool, on_or_refused bool,
    not_both bool) LANGUAGE sql AS $$
    SELECT (n->>'Direct I/O Requested')::bool,
           (n->>'Direct I/O')::bool OR (n->>'Direct I/O Fallback')::bool,
           NOT ((n->>'Direct I/O')::bool AND (n->>'Direct I/O Fallback')::bool)
    FROM cs_node('SELECT * FROM cd ORDER BY k, id') n
$$;
SELECT * FROM cd_dio();
SET compspill.enable_dio = off;
SELECT (n->>'Direct I/O Requested')::bool AS requested,
       (n->>'Direct I/O')::bool AS dio_off_reported,
       (n->>'Direct I/O Fallback')::bool AS refused
FROM cs_node('SELECT * FROM cd ORDER BY k, id') n;
DROP FUNCTION cd_dio();
RESET client_min_messages;

-- block and write sizes at both ends of their ranges
SET compspill.codec = lz4;
SELECT set_config('compspill.block_size', min_val, false) AS smallest_block
FROM pg_settings WHERE name = 'compspill.block_size';
SELECT * FROM cd_all();
SELECT set_config('compspill.write_size', min_val, false) AS smallest_write
FROM pg_settings WHERE name = 'compspill.write_size';
SELECT * FROM cd_all();
SET client_min_messages = warning;
SET compspill.enable_dio = on;
SELECT * FROM cd_all();
SET compspill.enable_dio = off;
RESET client_min_messages;
-- the largest sizes are capped at a sixteenth of work_mem; with a
-- work_mem that allows 2MB blocks and a sort of two runs, the blocks are
-- really that large (at 512kB, where all four sorts spill natively: at
-- 768kB the two narrower sorts of cd fit in memory natively, 718kB and
-- 631kB on 18, and so under compspill, which keeps the rows native keeps)
SELECT set_config('compspill.block_size', max_val, false) AS largest_block
FROM pg_settings WHERE name = 'compspill.block_size';
SELECT set_config('compspill.write_size', max_val, false) AS largest_write
FROM pg_settings WHERE name = 'compspill.write_size';
SET work_mem = '512kB';
SELECT * FROM cd_all();
SET work_mem = '64kB';
SELECT * FROM cd_all();
CREATE TABLE cd_big AS
SELECT i AS id, md5(i::text) || repeat(' lorem ipsum', 6 + i % 5) AS t
FROM generate_series(1, 200000) i;
ANALYZE cd_big;
SET work_mem = '32MB';
SELECT cs_check('SELECT * FROM cd_big ORDER BY t, id', 'spill');
SELECT (n->>'Spill Runs')::int AS runs, (n->>'Block Size')::int AS block_kb
FROM cs_node('SELECT * FROM cd_big ORDER BY t, id') n;
DROP TABLE cd_big;
SET work_mem = '64kB';
-- a block smaller than one row
SELECT set_config('compspill.block_size', min_val, false) AS smallest_block
FROM pg_settings WHERE name = 'compspill.block_size';
SELECT cs_check('SELECT id, repeat(t, 400) AS wide FROM cd WHERE id % 10 = 0 ORDER BY wide, id', 'spill');
RESET compspill.block_size;
RESET compspill.write_size;

-- compressed bytes written: lz4 stores fewer than none, and zstd about as
-- few as lz4 (at 64kB the blocks are 4kB, where zstd gains little over lz4
-- on these partly random values: 1464 against 1488 kB in one run, and
-- more than lz4 in another; a zstd that stored its blocks raw would write
-- about none's 1728)
CREATE FUNCTION cd_written(codec text) RETURNS numeric LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('compspill.codec', codec, true);
    RETURN (cs_node('SELECT * FROM cd ORDER BY k, id')->>'Bytes Written')::numeric;
END $$;
SELECT cd_written('none') > cd_written('lz4') AS lz4_smaller,
       cd_written('zstd') <= cd_written('lz4') * 1.05 AS zstd_as_small;

-- row frames (compspill.frame_kind = row): rows as native sort writes
-- them, with every codec; EXPLAIN counts the frames of each kind, so a
-- sort that wrote column frames instead fails here
CREATE FUNCTION cd_kinds(codec text) RETURNS TABLE (codec_setting text,
    row_frames bool, no_column_frames bool) LANGUAGE plpgsql AS $$
DECLARE
    n jsonb;
BEGIN
    PERFORM set_config('compspill.codec', codec, true);
    n := cs_node('SELECT * FROM cd ORDER BY t DESC NULLS LAST, id');
    RETURN QUERY SELECT n->>'Spill Codec', (n->>'Frames Row')::int > 0,
        (n->>'Frames Column')::int = 0;
END $$;
SET compspill.frame_kind = row;
SET compspill.codec = none;
SELECT * FROM cd_all();
SET compspill.codec = lz4;
SELECT * FROM cd_all();
SET compspill.codec = zstd;
SELECT * FROM cd_all();
SET compspill.codec = auto;
SELECT * FROM cd_all();
SELECT * FROM cd_kinds('none');
SELECT * FROM cd_kinds('lz4');
SELECT * FROM cd_kinds('zstd');
SELECT * FROM cd_kinds('auto');
-- rows wider than a block, and blocks of the smallest size
SELECT cs_check('SELECT id, repeat(t, 400) AS wide FROM cd WHERE id % 10 = 0 ORDER BY wide, id', 'spill');
SELECT set_config('compspill.block_size', min_val, false) AS smallest_block
FROM pg_settings WHERE name = 'compspill.block_size';
SELECT cs_check('SELECT * FROM cd ORDER BY n, id', 'spill');
RESET compspill.block_size;
-- column frames when asked for, whatever the codec
SET compspill.frame_kind = 'column';
SELECT (n->>'Frames Row')::int = 0 AS no_row_frames,
       (n->>'Frames Column')::int > 0 AS column_frames
FROM cs_node('SELECT * FROM cd ORDER BY k, id') n;
-- the explicit codecs keep column frames by default
RESET compspill.frame_kind;
SET compspill.codec = lz4;
SELECT (n->>'Frames Row')::int = 0 AS lz4_no_row_frames
FROM cs_node('SELECT * FROM cd ORDER BY k, id') n;

RESET compspill.codec;
RESET work_mem;
DROP TABLE cd, cd_q;
DROP FUNCTION cd_all(text), cd_written(text), cd_frames(text), cd_kinds(text);
