/* sql/compspill--0.1.0.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION compspill" to load this file. \quit

-- Report whether the compspill library is loaded into this backend, so that
-- sorts are rewritten; CREATE EXTENSION alone does not load it.
CREATE FUNCTION compspill_loaded()
RETURNS boolean
AS 'MODULE_PATHNAME', 'compspill_loaded'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;
