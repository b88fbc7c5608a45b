--
-- tempfiles: compspill spills through PostgreSQL's temp files, so what a DBA
-- relies on keeps working: one file per sort, temp_tablespaces,
-- temp_file_limit, removal on error, pg_stat_database counters.
--
LOAD 'compspill';

CREATE TABLE tf AS
SELECT i AS id, (i * 7919) % 10007 AS k, md5(i::text) AS t
FROM generate_series(1, 30000) i;
ANALYZE tf;
SET work_mem = '64kB';
SET compspill.codec = none;

-- the spill files of this backend, seen from inside the sort's own output:
-- a row-by-row subquery above the CompSpill Sort lists pgsql_tmp while the
-- sort is being read
CREATE FUNCTION tf_files_now(tblspc oid DEFAULT NULL) RETURNS bigint
LANGUAGE sql VOLATILE AS $$
    SELECT count(*) FROM (
        SELECT name FROM pg_ls_tmpdir(coalesce(tblspc, (SELECT oid FROM pg_tablespace WHERE spcname = 'pg_default')))
        WHERE name LIKE 'pgsql_tmp' || pg_backend_pid() || '.%') f
$$;
SELECT plan_shape('SELECT tf_files_now() FROM (SELECT id FROM tf ORDER BY k, id OFFSET 0) s WHERE id = 1');
SELECT tf_files_now() AS files_while_reading
FROM (SELECT id FROM tf ORDER BY k, id OFFSET 0) s WHERE id = 1;
SELECT tf_files_now() AS files_after;

-- temp_tablespaces is honoured
SET allow_in_place_tablespaces = true;
CREATE TABLESPACE regress_compspill_tmp LOCATION '';
SET temp_tablespaces = regress_compspill_tmp;
SELECT tf_files_now((SELECT oid FROM pg_tablespace WHERE spcname = 'regress_compspill_tmp')) AS files_in_tablespace,
       tf_files_now() AS files_in_default
FROM (SELECT id FROM tf ORDER BY k, id OFFSET 0) s WHERE id = 1;
SELECT compare_sorted('SELECT * FROM tf ORDER BY t', 'spill');
RESET temp_tablespaces;

-- temp_file_limit stops a spill that is too big, and the file goes away
-- (the SQLSTATE only: 18 quotes the setting's name in the message)
SET temp_file_limit = '100kB';
\set VERBOSITY sqlstate
SELECT count(*) FROM (SELECT * FROM tf ORDER BY t) s;
SELECT tf_files_now() AS files_after_error;
-- the same sort under native Sort fails the same way
SET compspill.enabled = off;
SELECT count(*) FROM (SELECT * FROM tf ORDER BY t) s;
\set VERBOSITY default
SET compspill.enabled = on;
RESET temp_file_limit;
SELECT compare_sorted('SELECT * FROM tf ORDER BY t', 'spill');

-- an error in the middle of reading a spilled sort removes the file as well
SELECT CASE WHEN id = 20000 THEN 1 / 0 END
FROM (SELECT id FROM tf ORDER BY k, id OFFSET 0) s;
SELECT tf_files_now() AS files_after_division_by_zero;
-- a cancelled statement too
SET statement_timeout = '50ms';
SELECT count(*) FROM (SELECT id, pg_sleep(0.001) FROM tf ORDER BY k, id OFFSET 0) s;
RESET statement_timeout;
SELECT tf_files_now() AS files_after_timeout;
-- and a subtransaction that fails half-way
BEGIN;
SAVEPOINT a;
SELECT CASE WHEN id = 20000 THEN 1 / 0 END FROM (SELECT id FROM tf ORDER BY t OFFSET 0) s;
ROLLBACK TO a;
SELECT tf_files_now() AS files_after_rollback_to_savepoint;
SELECT compare_sorted('SELECT * FROM tf ORDER BY t', 'spill');
COMMIT;

-- pg_stat_database counts compspill's temp files and bytes
SELECT pg_stat_force_next_flush();
SELECT temp_files AS files_before, temp_bytes AS bytes_before
FROM pg_stat_database WHERE datname = current_database() \gset
SELECT count(*) FROM (SELECT * FROM tf ORDER BY t) s;
SELECT pg_stat_force_next_flush();
SELECT pg_stat_clear_snapshot();
SELECT temp_files - :files_before AS new_temp_files,
       temp_bytes - :bytes_before > 500000 AS temp_bytes_grew
FROM pg_stat_database WHERE datname = current_database();

RESET compspill.codec;
RESET work_mem;
DROP TABLESPACE regress_compspill_tmp;
DROP TABLE tf;
DROP FUNCTION tf_files_now(oid);
