--
-- reads: a sort that spills and merges its runs in one pass reads each temp
-- block it wrote about once.  A merge input's read window is refilled with
-- whole pages and moves the whole pages it already holds down instead of
-- reading them again, so a frame that straddles a refill is not read twice
-- (issue 25).  What remains is the merge's probe of its first input's first
-- frames, read again when the merge starts: far below the 5% allowed here.
-- The blocks are the CompSpill Sort node's "Temp Read Blocks" and "Temp
-- Written Blocks" (EXPLAIN (ANALYZE, BUFFERS)); the sort reads a table, so
-- nothing below it does temp I/O of its own.  Verdicts only, never counts.
--
LOAD 'compspill';

CREATE TABLE rd AS
SELECT i AS id, (i::bigint * 7919) % 100003 AS k, md5(i::text) AS t,
       'item ' || (i % 977) || ' shipped by '
       || (ARRAY['truck', 'rail', 'air', 'mail', 'ship'])[1 + i % 5] || ' '
       || md5((i * 3)::text) || md5((i * 7)::text)
       || md5((i * 11)::text) || md5((i * 13)::text) AS c
FROM generate_series(1, 80000) i;
ANALYZE rd;
-- one backend: EXPLAIN shows the leader's figures only
SET max_parallel_workers_per_gather = 0;
SET work_mem = '2MB';

-- How the first CompSpill Sort of query ran, with frames of kind ('row' or
-- 'column'): 'one pass, each block read about once' when it spilled,
-- wrote frames of that kind only, merged in one pass and read within 5% of
-- the temp blocks it wrote; else what it did
CREATE FUNCTION rd_reads(query text, kind text) RETURNS text
LANGUAGE plpgsql AS $f$
DECLARE
    n jsonb;
    rd numeric;
    wr numeric;
BEGIN
    SELECT c INTO n
      FROM cs_nodes(cs_analyze_json(query, 'BUFFERS, COSTS OFF, TIMING OFF, SUMMARY OFF')) c
     LIMIT 1;
    IF n IS NULL THEN
        RETURN 'no CompSpill Sort ran';
    END IF;
    IF cs_node_mode(n) IS DISTINCT FROM 'spill' THEN
        RETURN 'did not spill: ' || coalesce(cs_node_mode(n), 'did not run');
    END IF;
    IF (n->>'Spill Runs')::int < 2 OR (n->>'Merge Passes')::int <> 1 THEN
        RETURN format('%s runs in %s merge passes, expected runs in one pass',
                      n->>'Spill Runs', n->>'Merge Passes');
    END IF;
    IF (n->>CASE kind WHEN 'row' THEN 'Frames Column' ELSE 'Frames Row' END)::int <> 0 THEN
        RETURN format('frames row=%s column=%s, expected %s frames only',
                      n->>'Frames Row', n->>'Frames Column', kind);
    END IF;
    rd := (n->>'Temp Read Blocks')::numeric;
    wr := (n->>'Temp Written Blocks')::numeric;
    IF wr = 0 OR abs(rd - wr) > wr * 0.05 THEN
        RETURN format('read %s temp blocks for %s written (%s%%)',
                      rd, wr, round(100 * rd / nullif(wr, 0)));
    END IF;
    RETURN 'one pass, each block read about once';
END
$f$;

-- the output compared with native Sort's, and the reads, with the codec
-- and frame kind as asked, direct I/O when dio
CREATE FUNCTION rd_case(codec text, kind text, dio bool DEFAULT false)
RETURNS TABLE (results text, reads text) LANGUAGE plpgsql AS $f$
DECLARE
    q text := 'SELECT * FROM rd ORDER BY t';
BEGIN
    PERFORM set_config('compspill.codec', codec, true);
    PERFORM set_config('compspill.frame_kind', kind, true);
    PERFORM set_config('compspill.enable_dio', dio::text, true);
    RETURN QUERY SELECT cs_check(q, 'spill'), rd_reads(q, kind);
END
$f$;

-- every codec, column and row frames
SELECT codec, kind, r.*
FROM (VALUES ('none'), ('lz4'), ('zstd'), ('auto')) c(codec),
     (VALUES ('column'), ('row')) k(kind),
     LATERAL rd_case(codec, kind) r
ORDER BY kind, codec;

-- direct I/O (or its fallback to buffered I/O where the file system
-- refuses it, whose NOTICE is not shown): the window was whole pages there
-- already, and stays so
SET client_min_messages = warning;
SELECT kind, r.*
FROM (VALUES ('column'), ('row')) k(kind),
     LATERAL rd_case('lz4', kind, true) r
ORDER BY kind;
RESET client_min_messages;

DROP FUNCTION rd_case(text, text, bool);
DROP FUNCTION rd_reads(text, text);
DROP TABLE rd;
RESET work_mem;
RESET max_parallel_workers_per_gather;
