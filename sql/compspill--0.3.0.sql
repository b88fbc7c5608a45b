/* sql/compspill--0.3.0.sql */

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
