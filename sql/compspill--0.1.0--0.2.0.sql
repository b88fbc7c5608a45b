/* sql/compspill--0.1.0--0.2.0.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION compspill UPDATE TO '0.2.0'" to load this file. \quit

-- compspill_version() describes the loaded library, which an upgrade
-- replaces: it is stable, not immutable.
ALTER FUNCTION compspill_version() STABLE;
