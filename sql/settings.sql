--
-- settings: the compspill.* parameters, their types, ranges and errors, and
-- the reserved prefix.
--
LOAD 'compspill';

SELECT name, vartype, unit, enumvals,
       CASE WHEN name = 'compspill.compression_level' THEN min_val || ' .. ' || max_val END AS range
FROM pg_settings WHERE name LIKE 'compspill.%' ORDER BY name;

-- defaults that are specified
SHOW compspill.enabled;
SHOW compspill.enable_dio;
SELECT current_setting('compspill.codec') = 'auto' AS codec_default_is_auto;

-- every codec is accepted, in any case
SET compspill.codec = none;
SHOW compspill.codec;
SET compspill.codec = 'LZ4';
SHOW compspill.codec;
SET compspill.codec = zstd;
SHOW compspill.codec;
SET compspill.compression_level = 1;
SET compspill.compression_level = 22;
SHOW compspill.compression_level;

-- bad values are refused, and the setting keeps its value
SET compspill.codec = 'brotli';
SET compspill.codec = '';
SHOW compspill.codec;
SET compspill.compression_level = 99;
SET compspill.compression_level = 0;
SET compspill.compression_level = -1;
SET compspill.compression_level = 'high';
SHOW compspill.compression_level;
SET compspill.enabled = 'maybe';
SET compspill.enable_dio = 2;
-- (the sizes' ranges are the developers' choice: only the refusal is shown)
CREATE FUNCTION st_try(name text, value text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config(name, value, false);
    RETURN 'accepted';
EXCEPTION WHEN invalid_parameter_value THEN
    RETURN 'refused';
END $$;
SELECT st_try('compspill.block_size', (min_val::int - 1)::text) AS below_min,
       st_try('compspill.block_size', (max_val::bigint + 1)::text) AS above_max
FROM pg_settings WHERE name = 'compspill.block_size';
SELECT st_try('compspill.write_size', (min_val::int - 1)::text) AS below_min,
       st_try('compspill.write_size', (max_val::bigint + 1)::text) AS above_max
FROM pg_settings WHERE name = 'compspill.write_size';
SELECT st_try('compspill.block_size', '-1') AS negative, st_try('compspill.write_size', '1TB') AS huge;
DROP FUNCTION st_try(text, text);

-- the prefix is reserved: unknown names are errors, not placeholders
SET compspill.foo = 1;
SET compspill.enable = off;
SELECT set_config('compspill.codecs', 'lz4', false);
SHOW compspill.foo;

-- enabled off leaves plans alone; on replaces every Sort
SET compspill.enabled = off;
EXPLAIN (COSTS OFF) SELECT * FROM generate_series(1, 10) g ORDER BY g DESC;
SET compspill.enabled = on;
EXPLAIN (COSTS OFF) SELECT * FROM generate_series(1, 10) g ORDER BY g DESC;
-- per transaction
BEGIN;
SET LOCAL compspill.enabled = off;
EXPLAIN (COSTS OFF) SELECT * FROM generate_series(1, 10) g ORDER BY g DESC;
COMMIT;
SHOW compspill.enabled;
-- per function
CREATE FUNCTION st_plan() RETURNS SETOF text LANGUAGE plpgsql
SET compspill.enabled = off
AS $$
DECLARE l text;
BEGIN
    FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) SELECT * FROM generate_series(1, 10) g ORDER BY g' LOOP
        RETURN NEXT l;
    END LOOP;
END $$;
SELECT st_plan();
SHOW compspill.enabled;
DROP FUNCTION st_plan();

-- an ordinary user may change them
CREATE ROLE regress_compspill_user;
SET ROLE regress_compspill_user;
SET compspill.enabled = off;
SET compspill.codec = lz4;
SET compspill.compression_level = 5;
SET compspill.block_size = '32kB';
SET compspill.write_size = '256kB';
RESET ROLE;
DROP ROLE regress_compspill_user;

RESET ALL;
SHOW compspill.enabled;
