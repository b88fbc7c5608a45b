--
-- room: with compspill.codec = auto, the default, a spill that would not
-- fit under temp_file_limit (or compspill.max_temp_space, or the file
-- system's free space) at the size the
-- plan expects is compressed from its first run, with the codec that fits
-- at least cost, and EXPLAIN says why.  A sort or a CTE that fails
-- natively for lack of room finishes, with native's rows.
--
LOAD 'compspill';

CREATE TABLE rm AS
SELECT i AS id, (i * 7919) % 100003 AS k,
       md5(i::text) || ' ' || repeat(chr(97 + i % 26), 20) AS t,
       date '2026-01-01' - (i % 1000) AS d
FROM generate_series(1, 200000) i;
ANALYZE rm;
SET work_mem = '1MB';
-- one process: temp_file_limit is per process, and the room policy too
SET max_parallel_workers_per_gather = 0;

-- native sort's temp file, in kB (EXPLAIN ANALYZE's "Disk:")
CREATE FUNCTION rm_native_kb(q text) RETURNS int
LANGUAGE plpgsql AS $f$
DECLARE
    l text;
BEGIN
    PERFORM set_config('compspill.enabled', 'off', true);
    FOR l IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
        IF l ~ 'Disk: \d+kB' THEN
            PERFORM set_config('compspill.enabled', 'on', true);
            RETURN substring(l FROM 'Disk: (\d+)kB')::int;
        END IF;
    END LOOP;
    RAISE EXCEPTION 'native sort did not spill';
END
$f$;

-- the digest of q's rows, with compspill on or off, or the SQLSTATE of
-- the error it raised (the messages differ between versions)
CREATE FUNCTION rm_try(q text, enabled bool) RETURNS text
LANGUAGE plpgsql AS $f$
BEGIN
    RETURN md5_exec_with(q, enabled);
EXCEPTION WHEN OTHERS THEN
    RETURN 'error ' || SQLSTATE;
END
$f$;

-- the codec part of EXPLAIN ANALYZE's Spill: line
CREATE FUNCTION rm_codec(q text) RETURNS text
LANGUAGE plpgsql AS $f$
DECLARE
    l text;
BEGIN
    FOR l IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
        IF l ~ 'Spill: ' THEN
            RETURN substring(l FROM 'Spill: (codec=\S+( \([^)]*\))?)');
        END IF;
    END LOOP;
    RETURN 'no spill';
END
$f$;

-- the same figures in JSON and XML: the reason, and whether the file's
-- peak stayed under limit_kb
CREATE FUNCTION rm_json(q text, limit_kb int) RETURNS text
LANGUAGE plpgsql AS $f$
DECLARE
    j json;
BEGIN
    EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || q INTO j;
    RETURN coalesce(j->0->'Plan'->>'Spill Codec Reason', 'no reason') ||
        CASE WHEN (j->0->'Plan'->>'Temp File Peak')::int <= limit_kb
             THEN ', file under the limit' ELSE ', file over the limit' END;
END
$f$;
CREATE FUNCTION rm_xml(q text) RETURNS text
LANGUAGE plpgsql AS $f$
DECLARE
    x text;
BEGIN
    EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT XML) ' || q INTO x;
    RETURN coalesce(substring(x FROM '<Spill-Codec-Reason>([^<]*)</Spill-Codec-Reason>'),
                    'no reason');
END
$f$;

\set q 'SELECT * FROM rm ORDER BY t, id'
SELECT rm_native_kb(:'q') / 2 AS half_kb \gset
SELECT md5_exec_with(:'q', false) AS native_rows \gset

-- without a limit there is room: auto as ever
SELECT rm_codec(:'q') AS no_limit;

-- temp_file_limit at half native's file: native fails, compspill's
-- defaults finish with native's rows, and say why they compressed
SELECT set_config('temp_file_limit', :'half_kb' || 'kB', false) IS NOT NULL AS limit_set;
SELECT rm_try(:'q', false) AS native_at_half;
SELECT rm_try(:'q', true) = :'native_rows' AS compspill_at_half_same_rows;
SELECT rm_codec(:'q') AS at_half;
SELECT rm_json(:'q', :half_kb) AS at_half_json;
SELECT rm_xml(:'q') AS at_half_xml;
-- an explicit codec is what was asked for: no room policy
SET compspill.codec = none;
SELECT rm_try(:'q', true) AS none_at_half;
RESET compspill.codec;
RESET temp_file_limit;

-- Material and CTE stores too: the plan's rows and width say what the
-- store will hold.  A CTE whose native tuplestore writes twice the limit
-- fails natively, and under compspill finishes with native's rows
-- (stored raw, as without a limit, its file passed the limit too)
CREATE FUNCTION rm_native_store_kb(q text) RETURNS int
LANGUAGE plpgsql AS $f$
DECLARE
    j json;
BEGIN
    PERFORM set_config('compspill.enabled', 'off', true);
    EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || q INTO j;
    PERFORM set_config('compspill.enabled', 'on', true);
    RETURN (j->0->'Plan'->>'Temp Written Blocks')::int * 8;
END
$f$;
\set qc 'WITH c AS MATERIALIZED (SELECT * FROM rm) SELECT count(*), sum(length(t)), sum(k) FROM c'
SELECT rm_native_store_kb(:'qc') / 2 AS half_store_kb \gset
SELECT md5_exec_with(:'qc', false) AS native_cte \gset
SELECT set_config('temp_file_limit', :'half_store_kb' || 'kB', false) IS NOT NULL AS limit_set;
SELECT rm_try(:'qc', false) AS native_cte_at_half;
SELECT rm_try(:'qc', true) = :'native_cte' AS compspill_cte_at_half_same_rows;
SELECT rm_codec(:'qc') AS cte_at_half;
RESET temp_file_limit;

-- (a spill near compspill.max_temp_space, which needs compspill in
-- shared_preload_libraries: test/t/008_temp_space_cap.pl)

DROP TABLE rm;
DROP FUNCTION rm_native_kb(text), rm_try(text, bool), rm_codec(text),
    rm_json(text, int), rm_xml(text), rm_native_store_kb(text);
