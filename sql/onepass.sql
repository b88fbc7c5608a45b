--
-- onepass: a sort that makes many runs merges them in one pass when the
-- memory allows it, with every codec and frame kind.  A merge input holds
-- about 10kB (the read buffer holds exactly the largest frame, buffered;
-- a decompression buffer only when frames are compressed; one margin),
-- where it held 24-27kB (page slack, growth room, a decompression buffer
-- for raw frames, two stacked margins): at 1MB and 4kB blocks the fan-in
-- was about 35, so these 60-odd runs took two passes.
--
LOAD 'compspill';
SET max_parallel_workers_per_gather = 0;
CREATE TABLE op AS
SELECT i AS id, (i::int8 * 2654435761 % 1000003)::int AS k,
       (i % 50)::numeric + (i % 100) / 100.0 AS price,
       date '1995-01-01' + (i % 2500) AS d, (i % 7)::int2 AS flag,
       'comment ' || md5(i::text) AS t
FROM generate_series(1, 320000) i;
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
        (n->>'Spill Runs')::int >= 50, (n->>'Merge Passes')::int;
END $$;
SELECT r.* FROM (VALUES ('auto'), ('lz4'), ('zstd'), ('none')) c(codec),
     (VALUES ('column'), ('row')) k(kind),
     LATERAL op_case(codec, kind) r
ORDER BY kind, codec;

DROP FUNCTION op_case(text, text);
DROP TABLE op;
RESET work_mem;
