--
-- upgrade: ALTER EXTENSION compspill UPDATE from the last release (0.4.0),
-- and from each one before it, gives the same objects, with the same
-- properties (a function's volatility, parallel safety, strictness, symbol,
-- result and privileges; a view's definition and privileges), as a fresh
-- install.
--
CREATE FUNCTION cs_ext_objects() RETURNS TABLE (obj text, props text)
LANGUAGE sql AS $$
    SELECT pg_describe_object(d.classid, d.objid, d.objsubid),
           CASE WHEN d.classid = 'pg_proc'::regclass THEN
               (SELECT concat_ws(' ', p.provolatile, p.proparallel, p.proisstrict,
                                 p.prosrc, p.probin, pg_get_function_result(p.oid),
                                 p.proacl)
                FROM pg_proc p WHERE p.oid = d.objid)
           WHEN d.classid = 'pg_class'::regclass THEN
               (SELECT concat_ws(' ', c.relkind, c.relacl,
                                 pg_get_viewdef(c.oid))
                FROM pg_class c WHERE c.oid = d.objid)
           END
    FROM pg_depend d
    WHERE d.refclassid = 'pg_extension'::regclass
      AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'compspill')
      AND d.deptype = 'e'
      -- 18 records a view's row type (and its array) as a member too: it
      -- comes and goes with the view
      AND NOT (d.classid = 'pg_type'::regclass AND EXISTS (
              SELECT 1 FROM pg_type t LEFT JOIN pg_type e ON e.oid = t.typelem
              WHERE t.oid = d.objid AND (t.typrelid <> 0 OR e.typrelid <> 0)))
$$;
CREATE TEMP TABLE fresh AS SELECT * FROM cs_ext_objects();
SELECT extversion FROM pg_extension WHERE extname = 'compspill';

-- install an old version, check that the comparison sees it differ, update,
-- and count the differences left
CREATE FUNCTION cs_upgrade_from(v text)
RETURNS TABLE (installed text, differences_before bigint, updated_to text,
               differences_after bigint)
LANGUAGE plpgsql AS $$
BEGIN
    DROP EXTENSION compspill;
    EXECUTE format('CREATE EXTENSION compspill VERSION %L', v);
    installed := (SELECT extversion FROM pg_extension WHERE extname = 'compspill');
    differences_before := (SELECT count(*)
        FROM ((TABLE fresh EXCEPT SELECT * FROM cs_ext_objects())
              UNION ALL (SELECT * FROM cs_ext_objects() EXCEPT TABLE fresh)) d);
    ALTER EXTENSION compspill UPDATE;
    updated_to := (SELECT extversion FROM pg_extension WHERE extname = 'compspill');
    differences_after := (SELECT count(*)
        FROM ((TABLE fresh EXCEPT SELECT * FROM cs_ext_objects())
              UNION ALL (SELECT * FROM cs_ext_objects() EXCEPT TABLE fresh)) d);
    RETURN NEXT;
END
$$;
SELECT * FROM cs_upgrade_from('0.1.0');
SELECT * FROM cs_upgrade_from('0.2.0');
SELECT * FROM cs_upgrade_from('0.3.0');
-- 0.5.0 changed the library only: 0.4.0's objects are already the same
SELECT * FROM cs_upgrade_from('0.4.0');
-- what a fresh install has (privileges and view definitions left out: they
-- name the installing role)
SELECT obj, CASE WHEN obj LIKE 'view %' THEN '' ELSE regexp_replace(props, ' \{.*\}$', '') END AS props
FROM cs_ext_objects() ORDER BY obj;
SELECT compspill_version() ~ '^compspill 0\.5\.0 \(lz4 [0-9.]+, zstd [0-9.]+\)$' AS version_ok;
DROP FUNCTION cs_upgrade_from(text), cs_ext_objects();
