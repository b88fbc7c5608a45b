--
-- cursors: scroll cursors, and plain cursors (which PostgreSQL makes
-- scrollable when the plan can go backward), move forward, backward and to
-- absolute positions over a CompSpill Sort (EXEC_FLAG_BACKWARD); holdable
-- cursors are rewound and read again at commit.  Each walk is compared with
-- the same walk over native Sort, and the sort's memory contexts show which
-- code sorted: a fallback to tuplesort is reported, never passed.
--
LOAD 'compspill';

CREATE TABLE cu (id int, g int, t text, n numeric);
INSERT INTO cu SELECT i, (i * 7919) % 1013, repeat(chr(97 + i % 26), 1 + i % 30), (i % 777) / 7.0
FROM generate_series(1, 20000) i;
ANALYZE cu;

-- Walk a scroll cursor over the query: every step's row (or '<none>' past
-- either end) goes into a running md5.  Steps: 'next:N', 'prior:N',
-- 'first', 'last', 'abs:N', 'rel:N', 'fwd:N' and 'back:N' (MOVE), 'end'
-- (MOVE FORWARD ALL), 'start' (MOVE BACKWARD ALL).  The cursor is opened
-- SCROLL, or with scroll = false without a scroll option.  Returns the
-- digest, '|', and which code held the sort at the end (cs_sort_holder).
CREATE FUNCTION cursor_walk(query text, steps text[], enabled bool,
                            scroll bool DEFAULT true)
RETURNS text LANGUAGE plpgsql AS $f$
DECLARE
    c refcursor;
    r record;
    h text := '';
    step text;
    op text;
    k int;
    nrows int := 0;
    holder text;
    old text := current_setting('compspill.enabled');
BEGIN
    PERFORM set_config('compspill.enabled', enabled::text, true);
    IF scroll THEN
        OPEN c SCROLL FOR EXECUTE query;
    ELSE
        OPEN c FOR EXECUTE query;
    END IF;
    FOREACH step IN ARRAY steps LOOP
        op := split_part(step, ':', 1);
        k := coalesce(nullif(split_part(step, ':', 2), '')::int, 1);
        FOR i IN 1 .. CASE WHEN op IN ('next', 'prior') THEN k ELSE 1 END LOOP
            CASE op
                WHEN 'next' THEN FETCH NEXT FROM c INTO r;
                WHEN 'prior' THEN FETCH PRIOR FROM c INTO r;
                WHEN 'first' THEN FETCH FIRST FROM c INTO r;
                WHEN 'last' THEN FETCH LAST FROM c INTO r;
                WHEN 'abs' THEN FETCH ABSOLUTE k FROM c INTO r;
                WHEN 'rel' THEN FETCH RELATIVE k FROM c INTO r;
                WHEN 'fwd' THEN MOVE FORWARD k FROM c;
                WHEN 'back' THEN MOVE BACKWARD k FROM c;
                WHEN 'end' THEN MOVE FORWARD ALL FROM c;
                WHEN 'start' THEN MOVE BACKWARD ALL FROM c;
            END CASE;
            IF op IN ('fwd', 'back', 'end', 'start') THEN
                h := md5(h || op || FOUND::text);
            ELSIF FOUND THEN
                h := md5(h || r::text);
                nrows := nrows + 1;
            ELSE
                h := md5(h || '<none>');
            END IF;
        END LOOP;
    END LOOP;
    holder := cs_sort_holder();
    CLOSE c;
    PERFORM set_config('compspill.enabled', old, true);
    RETURN nrows || ' rows fetched, md5 ' || h || '|' || holder;
END
$f$;

-- native vs compspill walk of the same query; the cursor's plan must hold
-- a CompSpill Sort or Material, the compspill walk must not have sorted with tuplesort,
-- and the sort must have been held as expect says
-- ('compspill store': spilled and read by position, or a Material's store
-- that spilled; 'compspill store in memory': a store that did not spill;
-- 'compspill': a sort in memory)
CREATE FUNCTION compare_walk(query text, steps text[],
                             expect text, scroll bool DEFAULT true)
RETURNS text LANGUAGE plpgsql AS $f$
DECLARE
    native text;
    comp text;
    holder text;
BEGIN
    IF position('CompSpill ' IN cs_plan('DECLARE c ' ||
            CASE WHEN scroll THEN 'SCROLL ' ELSE '' END || 'CURSOR FOR ' || query)) = 0 THEN
        RETURN 'no CompSpill node in the plan';
    END IF;
    native := split_part(cursor_walk(query, steps, false, scroll), '|', 1);
    BEGIN
        comp := cursor_walk(query, steps, true, scroll);
    EXCEPTION WHEN OTHERS THEN
        RETURN 'compspill failed: ' || SQLERRM;
    END;
    holder := split_part(comp, '|', 2);
    comp := split_part(comp, '|', 1);
    IF holder = 'tuplesort' THEN
        RETURN 'compspill fell back to tuplesort';
    END IF;
    IF native IS DISTINCT FROM comp THEN
        RETURN 'MISMATCH native: ' || native || ' / compspill: ' || comp;
    END IF;
    IF holder IS DISTINCT FROM expect THEN
        RETURN 'results equal, but expected ' || expect || ', got ' || holder;
    END IF;
    RETURN 'ok';
END
$f$;

CREATE TABLE walks (wid serial, label text, steps text[]);
INSERT INTO walks (label, steps) VALUES
('forward then back',  '{next:300,prior:299,prior,prior,next:5}'),
('absolute jumps',     '{abs:1,abs:20000,abs:10000,abs:-1,abs:-20000,abs:5,abs:19999,abs:20001,prior:3,abs:0,next:2}'),
('relative jumps',     '{next,rel:5000,rel:-2500,rel:0,rel:12000,rel:-1,rel:100000,prior:2,rel:-100000,next:2}'),
('last and back',      '{last,prior:1000,first,prior,next:2}'),
('past the end',       '{end,prior:3,next:5,prior:2}'),
('move around',        '{fwd:7000,next:3,back:6000,next:3,start,next:3,end,prior,back:10,next}'),
('zigzag',             '{next:50,prior:25,next:50,prior:25,next:50,prior:25,next:50,prior:150,next:10}'),
('deep backward',      '{abs:15000,prior:4000,rel:-3000,prior:100,abs:2,prior,prior,next:3}');

SET work_mem = '64kB';
SELECT label, compare_walk('SELECT * FROM cu ORDER BY g, id', steps, 'compspill store') AS by_int FROM walks ORDER BY wid;
SELECT label, compare_walk('SELECT id, t, n FROM cu ORDER BY t DESC, n, id', steps, 'compspill store') AS by_text FROM walks ORDER BY wid;
-- a cursor declared without SCROLL is scrollable all the same
SELECT label, compare_walk('SELECT * FROM cu ORDER BY t, g, id', steps, 'compspill store', false) AS plain_cursor FROM walks ORDER BY wid;
-- the sort really spills here
SELECT cs_spill_mode('SELECT * FROM cu ORDER BY g, id') AS sort_mode;
-- each codec, and direct I/O
SET compspill.codec = 'none';
SELECT compare_walk('SELECT * FROM cu ORDER BY n, id', steps, 'compspill store') AS codec_none FROM walks WHERE wid IN (2, 8) ORDER BY wid;
SET compspill.codec = 'lz4';
SELECT compare_walk('SELECT * FROM cu ORDER BY n, id', steps, 'compspill store') AS codec_lz4 FROM walks WHERE wid IN (2, 8) ORDER BY wid;
-- runs of row frames, merged into the store
SET compspill.frame_kind = row;
SELECT compare_walk('SELECT * FROM cu ORDER BY n, id', steps, 'compspill store') AS row_frames_lz4 FROM walks WHERE wid IN (2, 8) ORDER BY wid;
SELECT (n->>'Frames Row')::int > 0 AS row_frames
FROM cs_node('SELECT * FROM cu ORDER BY n, id') n;
-- runs of both kinds (a test-only setting alternates them) merged into
-- the store, each input handing on tuples or values
SET compspill.frame_kind = alternate;
SELECT compare_walk('SELECT * FROM cu ORDER BY n, id', steps, 'compspill store') AS mixed_runs_lz4 FROM walks WHERE wid IN (2, 8) ORDER BY wid;
SELECT compare_walk('SELECT id, t, n FROM cu ORDER BY t DESC, n, id', steps, 'compspill store') AS mixed_runs_by_text FROM walks WHERE wid IN (2, 8) ORDER BY wid;
RESET compspill.frame_kind;
SET compspill.codec = 'zstd';
SET compspill.enable_dio = on;
SELECT compare_walk('SELECT * FROM cu ORDER BY n, id', steps, 'compspill store') AS codec_zstd_dio FROM walks WHERE wid IN (2, 8) ORDER BY wid;
RESET compspill.codec;
RESET compspill.enable_dio;
SET work_mem = '4MB';
SELECT label, compare_walk('SELECT * FROM cu ORDER BY n DESC, id', steps, 'compspill') AS at_4mb FROM walks ORDER BY wid;
SET work_mem = '64MB';
SELECT label, compare_walk('SELECT * FROM cu ORDER BY t, id', steps, 'compspill') AS in_memory FROM walks ORDER BY wid;

-- a scroll cursor over a Sort below other nodes (a Result projecting, a
-- subquery), and an empty one
SET work_mem = '64kB';
SELECT compare_walk('SELECT id, g * 2 AS g2 FROM (SELECT * FROM cu ORDER BY g DESC, id) s', steps, 'compspill store') AS nested FROM walks WHERE wid IN (1, 2, 6) ORDER BY wid;
SELECT compare_walk('SELECT * FROM cu WHERE id < 0 ORDER BY g', '{next,prior,last,first,abs:3,end,start}', 'compspill') AS empty;
SELECT compare_walk('SELECT * FROM cu WHERE id = 10 ORDER BY g', '{next,prior,last,first,abs:1,abs:2,end,prior,start,next}', 'compspill') AS one_row;

-- a scroll cursor over a plan that cannot go backward (a join): the
-- planner puts a Material on top, which keeps the rows and serves every
-- direction
SET work_mem = '64kB';
SELECT plan_shape('DECLARE c SCROLL CURSOR FOR SELECT a.id, b.id AS bid, a.t FROM cu a JOIN cu b ON a.id = b.id + 1');
-- (a Material stores rows as the walk reaches them: the zigzag walk reads
-- 150, which fit in memory; the others go far enough to spill)
SELECT label, compare_walk('SELECT a.id, b.id AS bid, a.t, a.n FROM cu a JOIN cu b ON a.id = b.id + 1', steps,
                           CASE label WHEN 'zigzag' THEN 'compspill store in memory' ELSE 'compspill store' END) AS material_walk
FROM walks ORDER BY wid;
SET work_mem = '64MB';
SELECT label, compare_walk('SELECT a.id, b.id AS bid, a.t FROM cu a JOIN cu b ON a.id = b.id + 1', steps, 'compspill store in memory') AS material_in_memory FROM walks WHERE wid IN (1, 5, 8) ORDER BY wid;
SET work_mem = '64kB';

-- forward-only cursor in SQL: FETCH in chunks, compared as a whole
CREATE FUNCTION fetch_all_md5(cur text, chunk int)
RETURNS text LANGUAGE plpgsql AS $f$
DECLARE
    r record;
    h text := '';
    n bigint := 0;
    got int;
BEGIN
    LOOP
        got := 0;
        FOR r IN EXECUTE format('FETCH %s FROM %I', chunk, cur) LOOP
            h := md5(h || r::text);
            n := n + 1;
            got := got + 1;
        END LOOP;
        EXIT WHEN got = 0;
    END LOOP;
    RETURN n || ' rows, ' || h;
END
$f$;
SELECT md5_exec_with('SELECT * FROM cu ORDER BY g, id', false) AS native \gset
BEGIN;
DECLARE fc NO SCROLL CURSOR FOR SELECT * FROM cu ORDER BY g, id;
SELECT fetch_all_md5('fc', 333) = :'native' AS chunked_fetch_same;
COMMIT;

-- WITH HOLD: at COMMIT the cursor's query is rewound and run to completion
-- into a store, then the cursor goes on from where it was
SELECT md5_exec_with('SELECT * FROM cu ORDER BY t, id OFFSET 5000', false) AS native_rest \gset
BEGIN;
DECLARE hc CURSOR WITH HOLD FOR SELECT * FROM cu ORDER BY t, id;
MOVE 5000 IN hc;
COMMIT;
SELECT fetch_all_md5('hc', 1000) = :'native_rest' AS held_cursor_same;
CLOSE hc;
-- the same for a scroll cursor, read backward after the commit
SELECT md5_exec_with('SELECT * FROM (SELECT * FROM cu ORDER BY t, id LIMIT 7000) s ORDER BY t DESC, id DESC', false) AS native_back \gset
BEGIN;
DECLARE hs SCROLL CURSOR WITH HOLD FOR SELECT * FROM cu ORDER BY t, id;
MOVE 7001 IN hs;
COMMIT;
SELECT md5_exec('FETCH BACKWARD ALL FROM hs') = :'native_back' AS held_scroll_backward_same;
CLOSE hs;

-- a plain DECLARE CURSOR in SQL: read backward from the middle, next to a
-- native cursor doing the same
BEGIN;
DECLARE pc CURSOR FOR SELECT * FROM cu ORDER BY t, n, id;
MOVE 12000 IN pc;
SELECT cs_sort_holder() AS plain_cursor_sort;
SET LOCAL compspill.enabled = off;
DECLARE pn CURSOR FOR SELECT * FROM cu ORDER BY t, n, id;
MOVE 12000 IN pn;
SELECT md5_exec('FETCH BACKWARD 7000 FROM pc') = md5_exec('FETCH BACKWARD 7000 FROM pn') AS plain_backward_same;
SELECT md5_exec('FETCH FORWARD 10000 FROM pc') = md5_exec('FETCH FORWARD 10000 FROM pn') AS plain_forward_same;
COMMIT;

-- the plans above are CompSpill Sorts
SELECT plan_shape('DECLARE x NO SCROLL CURSOR FOR SELECT * FROM cu ORDER BY g, id');
SELECT plan_shape('DECLARE x SCROLL CURSOR WITH HOLD FOR SELECT * FROM cu ORDER BY t, id');

-- the datum path (one by-value column sorted on itself) read by position,
-- in memory and spilled
SET work_mem = '16MB';
SELECT label, compare_walk('SELECT g FROM cu ORDER BY g', steps, 'compspill') AS datum_in_memory FROM walks ORDER BY wid;
SET work_mem = '64kB';
SELECT label, compare_walk('SELECT g FROM cu ORDER BY g DESC', steps, 'compspill store') AS datum_spilled FROM walks ORDER BY wid;
RESET work_mem;
DROP TABLE cu, walks;
DROP FUNCTION cursor_walk(text, text[], bool, bool), compare_walk(text, text[], text, bool), fetch_all_md5(text, int);

