/* sql/compspill--0.2.0--0.3.0.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION compspill UPDATE TO '0.3.0'" to load this file. \quit

-- Bytes of compspill temporary files in the whole cluster right now: what
-- compspill.max_temp_space is compared with.  Needs compspill in
-- shared_preload_libraries.
CREATE FUNCTION compspill_temp_space()
RETURNS bigint
AS 'MODULE_PATHNAME', 'compspill_temp_space'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;
