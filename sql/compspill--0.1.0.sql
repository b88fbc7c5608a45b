/* sql/compspill--0.1.0.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION compspill" to load this file. \quit

-- Version of the loaded compspill library and the codecs it was built with.
CREATE FUNCTION compspill_version()
RETURNS text
AS 'MODULE_PATHNAME', 'compspill_version'
LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
