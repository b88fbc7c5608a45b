/* sql/compspill--0.4.0--0.5.0.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION compspill UPDATE TO '0.5.0'" to load this file. \quit

-- 0.5.0 changes the library only: row frames, per-run encodings, a merge
-- on first keys, writeback in codec = auto's costs, and the CompSpill
-- Incremental Sort, Recursive Union and WorkTable Scan nodes.  No SQL
-- object changes; compspill_activity's node column can now also read
-- 'incremental sort' and 'recursive union'.
