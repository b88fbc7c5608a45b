--
-- onepass: a sort that makes many runs merges them in one pass when the
-- memory allows it, with every codec and frame kind.  A merge input's read
-- buffer holds exactly the largest frame (buffered), its decompression
-- buffer exists only when frames are compressed, and both are sized
-- exactly; an lz4 input of these rows holds 9.5kB, where it held 12.1kB
-- with a quarter more in each buffer.  Runs hold as many rows as native's
-- (the writer is reserved when the first run spills, in the memory that
-- compacting the tuple array frees), so the 320000 rows make 40-53 runs at
-- 1MB, and every codec, auto included (whose first frames try zstd and
-- whose merge keeps room for zstd's decompression context), merges them in
-- one pass.  So do 600,000 rows with lz4, in about 80 runs.
--
LOAD 'compspill';
SET max_parallel_workers_per_gather = 0;
-- the rows lo to hi of the table sorted here
CREATE FUNCTION op_rows(lo int, hi int) RETURNS TABLE (id int, k int,
    price numeric, d date, flag int2, t text) LANGUAGE sql AS $$
    SELECT i, (i::int8 * 2654435761 % 1000003)::int,
           (i % 50)::numeric + (i % 100) / 100.0,
           date '1995-01-01' + (i % 2500), (i % 7)::int2,
           'comment ' || md5(i::text)
    FROM generate_series(lo, hi) i
$$;
CREATE TABLE op AS SELECT * FROM op_rows(1, 320000);
ANALYZE op;
SET work_mem = '1MB';

-- runs, passes and the result against native's, per codec and frame kind
CREATE FUNCTION op_case(c text, fk text) RETURNS TABLE (codec text,
    kind text, results text, many_runs bool, merge_passes int) LANGUAGE plpgsql AS $$
DECLARE
    n jsonb;
    q text := 'SELECT * FROM op ORDER BY t, id';
BEGIN
    PERFORM set_config('compspill.codec', c, true);
    PERFORM set_config('compspill.frame_kind', fk, true);
    n := cs_node(q);
    RETURN QUERY SELECT c, fk, cs_check(q, 'spill'),
        (n->>'Spill Runs')::int >= 30, (n->>'Merge Passes')::int;
END $$;
SELECT r.* FROM (VALUES ('auto'), ('lz4'), ('zstd'), ('none')) c(codec),
     (VALUES ('column'), ('row')) k(kind),
     LATERAL op_case(codec, kind) r
ORDER BY kind, codec;

-- The first run's blocks are sized before any frame exists, as if frames
-- did not shrink (4kB here); the later runs' from what the first run's
-- frames measure, as large as a one-pass merge of the runs the plan
-- expects allows: larger blocks encode and compress better.  With 4kB
-- blocks throughout (before), Block Size says 4.
SET compspill.codec = lz4;
SELECT (n->>'Block Size')::int > 4 AS later_blocks_larger,
       (n->>'Merge Passes')::int AS merge_passes,
       (n->>'Peak Memory Used')::int <= 1024 * 1.02 AS within_2pct_of_work_mem
FROM cs_node('SELECT * FROM op ORDER BY t, id') n;
RESET compspill.codec;

-- 600,000 rows make about 80 runs at 1MB: lz4 merges them in one pass.
-- The final merge writes nothing, so it takes the memory of the writer,
-- of lz4's state and of the extent maps no pass will write, and an input
-- costs what it holds and its buffers' growth to the largest frame
-- written, not an eighth more (two passes before)
INSERT INTO op SELECT * FROM op_rows(320001, 600000);
ANALYZE op;
SET compspill.codec = lz4;
SELECT (n->>'Spill Runs')::int >= 60 AS many_runs,
       (n->>'Merge Passes')::int AS merge_passes,
       (n->>'Peak Memory Used')::int <= 1024 * 1.02 AS within_2pct_of_work_mem
FROM cs_node('SELECT * FROM op ORDER BY t, id') n;
SELECT cs_check('SELECT * FROM op ORDER BY t, id', 'spill') AS results;

-- What the sort's memory contexts hold, and with it how many rows its runs
-- take, the later runs' block size and the peak, does not depend on what
-- the backend ran before: the same sort, run again after other sorts
-- (compspill's of other rows, native's) and a PL/pgSQL loop that plans and
-- frees statements, makes the same runs of the same blocks, writes the
-- same bytes and peaks at the same memory each time.  compspill's
-- contexts used to match aset.c's free lists, which hand back a context
-- freed earlier, made with other sizes, with its chunk limit: on the
-- assert-enabled 18, after the loop, the sort made 81 runs for 80, wrote
-- 24,948kB for 25,016kB and peaked at 1,050kB, over work_mem's 2%
-- (before the run readers' contexts were made afresh, three different
-- sizes in four runs).
SET synchronize_seqscans = off;	-- each scan reads the rows in one order
CREATE TEMP TABLE op_again (b int, written int, runs int, peak int);
CREATE FUNCTION op_again() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO op_again SELECT (n->>'Block Size')::int,
        (n->>'Run Formation Written')::int, (n->>'Spill Runs')::int,
        (n->>'Peak Memory Used')::int
    FROM cs_node('SELECT * FROM op ORDER BY t, id') n;
END $$;
SELECT op_again();
SELECT count(*) FROM (SELECT * FROM op ORDER BY k, d OFFSET 0) s;
SELECT op_again();
DO $$
DECLARE
    r record;
BEGIN
    FOR i IN 1..20 LOOP
        EXECUTE format('SELECT count(*) FROM (SELECT t FROM op WHERE id %% 20 = %s ORDER BY price) s', i) INTO r;
    END LOOP;
END $$;
SELECT op_again();
SET compspill.enabled = off;
SELECT count(*) FROM (SELECT * FROM op ORDER BY price, t OFFSET 0) s;
RESET compspill.enabled;
SELECT op_again();
SELECT count(*) AS sorts, count(DISTINCT (b, written, runs, peak)) AS sizes,
       min(b) > 4 AS later_blocks_larger,
       max(peak) <= 1024 * 1.02 AS within_2pct_of_work_mem
FROM op_again;
DROP FUNCTION op_again();
DROP TABLE op_again;
RESET synchronize_seqscans;

-- A run begins where the one before it ended, in that run's last extent
-- (16kB here) when it has room: the file of a one-pass spill is its runs'
-- bytes and at most a page more each (the rest of its last page).  With every run starting an
-- extent of its own (before), the file held about half an extent more per
-- run (a 64th of work_mem: 32kB a run at 4MB, a twentieth of a lineitem
-- sort's lz4 file).
-- Buffered, a run's last page is written only as far as the run goes, so
-- the bytes written are the runs' bytes and the rest of each last page is
-- a hole in the file (it was written as zeros: the file and the bytes
-- written were the same, 25,016kB for 80 runs on 18).
SELECT (n->>'Merge Passes')::int AS merge_passes,
       (n->>'Temp File Peak')::int <= (n->>'Run Formation Written')::int +
           4 * (n->>'Spill Runs')::int + 1 AS file_is_runs_and_a_page_each,
       (n->>'Temp File Peak')::int - (n->>'Run Formation Written')::int >=
           (n->>'Spill Runs')::int / 4 AS last_pages_not_padded
FROM cs_node('SELECT * FROM op ORDER BY t, id') n;
RESET compspill.codec;

DROP FUNCTION op_case(text, text);
DROP TABLE op;
RESET work_mem;
