/* sql/compspill--0.5.0.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION compspill" to load this file. \quit

-- Version of the loaded compspill library and the codecs it was built with.
-- Stable, not immutable: the library can be replaced under a session's
-- feet by an upgrade, and the answer must not be folded into plans.
CREATE FUNCTION compspill_version()
RETURNS text
AS 'MODULE_PATHNAME', 'compspill_version'
LANGUAGE C STRICT STABLE PARALLEL SAFE;

-- Bytes of compspill temporary files in the whole cluster right now: what
-- compspill.max_temp_space is compared with.  Needs compspill in
-- shared_preload_libraries.
CREATE FUNCTION compspill_temp_space()
RETURNS bigint
AS 'MODULE_PATHNAME', 'compspill_temp_space'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

-- Cumulative figures of the spills of each database, since the last
-- compspill_stats_reset().  Needs compspill in shared_preload_libraries.
CREATE FUNCTION compspill_stats(
    OUT dbid oid,
    OUT spills bigint,
    OUT runs bigint,
    OUT merge_passes bigint,
    OUT rows_spilled bigint,
    OUT raw_bytes bigint,
    OUT written_bytes bigint,
    OUT read_bytes bigint,
    OUT write_time_ms double precision,
    OUT read_time_ms double precision,
    OUT peak_file_bytes bigint,
    OUT stats_reset timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'compspill_stats'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW compspill_stats AS
    SELECT s.dbid, d.datname, s.spills, s.runs, s.merge_passes,
           s.rows_spilled, s.raw_bytes, s.written_bytes, s.read_bytes,
           s.write_time_ms, s.read_time_ms, s.peak_file_bytes, s.stats_reset
    FROM compspill_stats() s
        LEFT JOIN pg_catalog.pg_database d ON d.oid = s.dbid;

-- The same figures per statement: (userid, dbid, queryid) as in
-- pg_stat_statements.  At most compspill.max_statements rows.
CREATE FUNCTION compspill_statements(
    OUT userid oid,
    OUT dbid oid,
    OUT queryid bigint,
    OUT spills bigint,
    OUT runs bigint,
    OUT merge_passes bigint,
    OUT rows_spilled bigint,
    OUT raw_bytes bigint,
    OUT written_bytes bigint,
    OUT read_bytes bigint,
    OUT write_time_ms double precision,
    OUT read_time_ms double precision,
    OUT peak_file_bytes bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'compspill_statements'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW compspill_statements AS
    SELECT * FROM compspill_statements();

-- Empty compspill_stats and compspill_statements.
CREATE FUNCTION compspill_stats_reset()
RETURNS void
AS 'MODULE_PATHNAME', 'compspill_stats_reset'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

-- The spills in progress: one row per spilling node of every backend and
-- parallel worker.
CREATE FUNCTION compspill_activity(
    OUT pid integer,
    OUT datid oid,
    OUT userid oid,
    OUT queryid bigint,
    OUT node text,
    OUT phase text,
    OUT started timestamptz,
    OUT rows bigint,
    OUT runs integer,
    OUT bytes_written bigint,
    OUT bytes_read bigint,
    OUT file_size bigint,
    OUT codec text,
    OUT direct_io boolean)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'compspill_activity'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW compspill_activity AS
    SELECT * FROM compspill_activity();

GRANT SELECT ON compspill_stats, compspill_statements, compspill_activity
    TO PUBLIC;
REVOKE ALL ON FUNCTION compspill_stats_reset() FROM PUBLIC;
