--
-- encryption: with compspill.encryption = aes-256-gcm, sorts, Materials,
-- CTE stores and scroll cursors give native's results with every codec and
-- through merge passes; EXPLAIN says the spill was encrypted; the spill
-- file holds none of the plaintext an unencrypted spill of the same rows
-- holds; only a superuser may change the setting.
--
LOAD 'compspill';

CREATE TABLE enc (id int, grp int, s text, n numeric, b bytea);
INSERT INTO enc
SELECT g, g % 97,
       CASE WHEN g % 11 = 0 THEN NULL
            ELSE 'PLAINTEXTMARKER-' || (g % 5000) || '-' || md5(g::text) END,
       g / 7.0, decode(md5(g::text), 'hex')
FROM generate_series(1, 60000) g;
ANALYZE enc;

SET work_mem = '1MB';
SET compspill.encryption = 'aes-256-gcm';

-- every codec, one merge pass and several
SET compspill.codec = none;
SELECT cs_check('SELECT * FROM enc ORDER BY s DESC NULLS FIRST, id', 'spill') AS enc_none;
SET compspill.codec = lz4;
SELECT cs_check('SELECT * FROM enc ORDER BY s, id', 'spill') AS enc_lz4;
SET compspill.codec = zstd;
SELECT cs_check('SELECT * FROM enc ORDER BY n DESC, id', 'spill') AS enc_zstd;
SET compspill.codec = auto;
SELECT cs_check('SELECT * FROM enc ORDER BY b, id', 'spill') AS enc_auto;
SET work_mem = '64kB';
SELECT cs_check('SELECT id, s FROM enc ORDER BY s, id', 'spill') AS enc_multipass;
SELECT (cs_node('SELECT id, s FROM enc ORDER BY s, id')->>'Merge Passes')::int > 1
    AS several_passes;
-- row frames, encrypted, with each codec and several passes
SET compspill.frame_kind = row;
SET compspill.codec = none;
SELECT cs_check('SELECT id, s FROM enc ORDER BY s, id', 'spill') AS enc_rows_none;
SET compspill.codec = lz4;
SELECT cs_check('SELECT * FROM enc ORDER BY b, id', 'spill') AS enc_rows_lz4;
SET compspill.codec = zstd;
SELECT cs_check('SELECT id, s FROM enc ORDER BY s DESC, id', 'spill') AS enc_rows_zstd;
SELECT (n->>'Merge Passes')::int > 1 AS several_passes,
       (n->>'Frames Row')::int > 0 AS row_frames,
       (n->>'Frames Column')::int = 0 AS no_column_frames,
       n->>'Spill Encryption' AS encryption
FROM cs_node('SELECT id, s FROM enc ORDER BY s DESC, id') n;
RESET compspill.codec;
RESET compspill.frame_kind;
SET work_mem = '1MB';

-- EXPLAIN says so, and says so only when it is on
SELECT cs_node('SELECT * FROM enc ORDER BY s, id')->>'Spill Encryption' AS explain_on;
SET compspill.encryption = off;
SELECT cs_node('SELECT * FROM enc ORDER BY s, id')->>'Spill Encryption' AS explain_off;
SET compspill.encryption = 'aes-256-gcm';

-- a Material's store and a CTE's store, read again and again
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SELECT compare_material('SELECT o.id, e.id FROM (SELECT id FROM enc WHERE id <= 3) o
    LEFT JOIN enc e ON e.grp = o.id AND e.s > ''''', 'spill') AS enc_material;
RESET enable_hashjoin;
RESET enable_mergejoin;
SELECT compare_cte('WITH c AS MATERIALIZED (SELECT * FROM enc)
    SELECT a.id, b.s FROM c a JOIN c b ON a.id = b.id + 1', 'spill') AS enc_cte;

-- a scroll cursor walked backward and to absolute positions, next to a
-- native one
BEGIN;
DECLARE ec SCROLL CURSOR FOR SELECT * FROM enc ORDER BY s, id;
MOVE 40000 IN ec;
SELECT cs_sort_holder() AS enc_cursor_sort;
SET LOCAL compspill.enabled = off;
DECLARE en SCROLL CURSOR FOR SELECT * FROM enc ORDER BY s, id;
MOVE 40000 IN en;
SELECT md5_exec('FETCH BACKWARD 25000 FROM ec') = md5_exec('FETCH BACKWARD 25000 FROM en') AS enc_backward_same;
SELECT md5_exec('FETCH ABSOLUTE 7 FROM ec') = md5_exec('FETCH ABSOLUTE 7 FROM en') AS enc_absolute_same;
SELECT md5_exec('FETCH FORWARD 30000 FROM ec') = md5_exec('FETCH FORWARD 30000 FROM en') AS enc_forward_same;
COMMIT;

-- Look for marker in the spill file of a sort of enc, read to its first
-- row with the given encryption and codec: 'no spill file' if it did not
-- spill, else whether the file holds the marker's bytes.
CREATE FUNCTION cs_file_has(marker text, encryption text, codec text)
RETURNS text LANGUAGE plpgsql AS $f$
DECLARE
    c refcursor;
    r record;
    f record;
    nfiles int := 0;
    found bool := false;
BEGIN
    PERFORM set_config('compspill.encryption', encryption, true);
    PERFORM set_config('compspill.codec', codec, true);
    OPEN c FOR EXECUTE 'SELECT * FROM enc ORDER BY s, id';
    FETCH c INTO r;
    FOR f IN SELECT name FROM pg_ls_tmpdir() LOOP
        nfiles := nfiles + 1;
        found := found OR position(convert_to(marker, 'UTF8') IN
            pg_read_binary_file('base/pgsql_tmp/' || f.name)) > 0;
    END LOOP;
    CLOSE c;
    IF nfiles = 0 THEN
        RETURN 'no spill file';
    END IF;
    RETURN CASE WHEN found THEN 'plaintext in file' ELSE 'no plaintext in file' END;
END
$f$;

BEGIN;
SELECT cs_file_has('PLAINTEXTMARKER-', 'off', 'none') AS clear_none;
SELECT cs_file_has('PLAINTEXTMARKER-', 'aes-256-gcm', 'none') AS encrypted_none;
SELECT cs_file_has('PLAINTEXTMARKER-', 'off', 'lz4') AS clear_lz4;
SELECT cs_file_has('PLAINTEXTMARKER-', 'aes-256-gcm', 'lz4') AS encrypted_lz4;
COMMIT;

-- a user cannot turn it off
CREATE ROLE cs_enc_user;
SET ROLE cs_enc_user;
SET compspill.encryption = off;
RESET ROLE;
DROP ROLE cs_enc_user;

DROP FUNCTION cs_file_has(text, text, text);
DROP TABLE enc;
RESET compspill.encryption;
RESET compspill.codec;
RESET work_mem;
