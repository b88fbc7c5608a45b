--
-- cte: the scans of a materialized CTE share one store, kept in memory
-- within work_mem and beyond it in a compressed run; every CTE Scan
-- becomes a CompSpill CTE Scan.  CTEs read twice, read partly, rescanned
-- by nested loops and with a changed parameter, read backward by a
-- cursor; each result compared with native PostgreSQL, and the plans
-- must show the compressed store, not a fallback.
--
LOAD 'compspill';

CREATE TABLE ce (id int, g int, v int, t text, n numeric);
INSERT INTO ce SELECT i, i % 40, (i * 7919) % 10007,
    CASE WHEN i % 53 = 0 THEN NULL ELSE repeat(chr(97 + i % 26), 1 + i % 30) || i END,
    (i % 777) / 7.0
FROM generate_series(1, 20000) i;
UPDATE ce SET t = repeat(md5(id::text), 250) WHERE id % 2000 = 7;
ANALYZE ce;

SET work_mem = '64kB';

-- read twice, by both sides of a join
SELECT plan_shape('WITH c AS MATERIALIZED (SELECT * FROM ce WHERE id % 2 = 0) SELECT a.id, b.t FROM c a JOIN c b ON a.id = b.id + 2 WHERE a.g < 10');
SELECT compare_cte('WITH c AS MATERIALIZED (SELECT * FROM ce WHERE id % 2 = 0) SELECT a.id, b.t, b.n FROM c a JOIN c b ON a.id = b.id + 2 WHERE a.g < 10', 'spill');
-- the same in memory
SET work_mem = '8MB';
SELECT compare_cte('WITH c AS MATERIALIZED (SELECT * FROM ce WHERE id % 2 = 0) SELECT a.id, b.t, b.n FROM c a JOIN c b ON a.id = b.id + 2 WHERE a.g < 10', 'memory');
SET work_mem = '64kB';
-- read partly: a LIMIT stops the reader, the other reads everything
SELECT compare_cte('WITH c AS MATERIALIZED (SELECT * FROM ce ORDER BY v, id) SELECT * FROM (SELECT id, t FROM c LIMIT 7) x UNION ALL SELECT count(*), max(t) FROM c', 'spill', 'ordered');
SELECT compare_cte('WITH c AS MATERIALIZED (SELECT * FROM ce ORDER BY t DESC, id) SELECT id, t FROM c LIMIT 100', 'memory', 'ordered');
-- read by a nested loop: the inner CTE scan is rescanned 400 times
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_material = off;
SELECT plan_shape('WITH c AS MATERIALIZED (SELECT * FROM ce WHERE id <= 4000) SELECT o.id, c.id FROM ce o JOIN c ON c.g = o.g AND c.v > o.v WHERE o.id <= 400');
SELECT compare_cte('WITH c AS MATERIALIZED (SELECT * FROM ce WHERE id <= 4000) SELECT o.id, c.id, c.t FROM ce o JOIN c ON c.g = o.g AND c.v > o.v WHERE o.id <= 400', 'spill');
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_material;
-- a CTE whose subplan depends on an outer row (a correlated subquery):
-- every rescan with a new parameter empties the store and computes it again
SELECT compare_cte('SELECT o.id, (WITH c AS MATERIALIZED (SELECT * FROM ce WHERE g = o.g) SELECT count(*) || '':'' || max(a.t) FROM c a JOIN c b ON a.id = b.id + 40) FROM ce o WHERE o.id <= 30', 'spill');
-- a recursive CTE read by two scans: the scans of the finished CTE share
-- the compressed store (its recursive union has one of its own)
SELECT compare_cte('WITH RECURSIVE r(n, s) AS (SELECT 1, repeat(''x'', 20) UNION ALL SELECT n + 1, s || n FROM r WHERE n < 5000) SELECT a.n, b.s FROM r a JOIN r b ON a.n = b.n + 1 WHERE a.n % 7 = 0', 'spill');
-- three scans of one CTE, in the main plan and in a subplan
SELECT compare_cte('WITH c AS MATERIALIZED (SELECT id, g, t FROM ce WHERE id % 3 = 0) SELECT a.id, (SELECT count(*) FROM c x WHERE x.g = a.g AND x.id < a.id) FROM c a WHERE a.id % 500 = 0 AND EXISTS (SELECT 1 FROM c b WHERE b.id = a.id + 3)', 'spill');

-- each codec, and direct I/O
SET compspill.codec = 'none';
SELECT compare_cte('WITH c AS MATERIALIZED (SELECT * FROM ce WHERE id % 2 = 0) SELECT a.id, b.t FROM c a JOIN c b ON a.id = b.id + 2', 'spill') AS codec_none;
SET compspill.codec = 'lz4';
SELECT compare_cte('WITH c AS MATERIALIZED (SELECT * FROM ce WHERE id % 2 = 0) SELECT a.id, b.t FROM c a JOIN c b ON a.id = b.id + 2', 'spill') AS codec_lz4;
SET compspill.codec = 'zstd';
SET compspill.enable_dio = on;
SELECT compare_cte('WITH c AS MATERIALIZED (SELECT * FROM ce WHERE id % 2 = 0) SELECT a.id, b.t FROM c a JOIN c b ON a.id = b.id + 2', 'spill') AS codec_zstd_dio;
RESET compspill.codec;
RESET compspill.enable_dio;

-- a scroll cursor over a CTE scan reads it backward and jumps around,
-- next to a native cursor doing the same
BEGIN;
DECLARE cc SCROLL CURSOR FOR WITH c AS MATERIALIZED (SELECT id, t FROM ce WHERE id % 2 = 1) SELECT * FROM c;
MOVE FORWARD ALL IN cc;
SELECT cs_sort_holder() AS cursor_store;
SET LOCAL compspill.enabled = off;
DECLARE cn SCROLL CURSOR FOR WITH c AS MATERIALIZED (SELECT id, t FROM ce WHERE id % 2 = 1) SELECT * FROM c;
MOVE FORWARD ALL IN cn;
SELECT md5_exec('FETCH BACKWARD 4000 FROM cc') = md5_exec('FETCH BACKWARD 4000 FROM cn') AS cursor_backward;
SELECT md5_exec('FETCH ABSOLUTE 5 FROM cc') = md5_exec('FETCH ABSOLUTE 5 FROM cn') AS cursor_absolute;
SELECT md5_exec('FETCH RELATIVE 3000 FROM cc') = md5_exec('FETCH RELATIVE 3000 FROM cn') AS cursor_relative;
SELECT md5_exec('FETCH BACKWARD ALL FROM cc') = md5_exec('FETCH BACKWARD ALL FROM cn') AS cursor_to_start;
SELECT md5_exec('FETCH FORWARD ALL FROM cc') = md5_exec('FETCH FORWARD ALL FROM cn') AS cursor_forward_again;
COMMIT;

-- the spill figures are on the scan that holds the store; memory within
-- work_mem, with the writer of the rows held on top within a 50th of it
-- (as a spilling sort's; store.c)
SET work_mem = '1MB';
SELECT n->>'CTE Store' AS store, n->>'Storage' AS storage, (n->>'Rows Spilled')::int AS rows_spilled,
       (n->>'Peak Memory Used')::int <= 1024 * 1.02 AS within_work_mem
FROM cs_provider_nodes(cs_analyze_json('WITH c AS MATERIALIZED (SELECT * FROM ce) SELECT count(*) FROM c a JOIN c b ON a.id = b.id'), 'CompSpill CTE Scan') n;

-- prepared, generic plan: planned with compspill on, run with it off
SET work_mem = '64kB';
SET plan_cache_mode = force_generic_plan;
SELECT md5_exec_with('WITH c AS MATERIALIZED (SELECT * FROM ce WHERE g >= 5) SELECT count(*), sum(a.v), max(b.t) FROM c a JOIN c b ON a.id = b.id + 40', false) AS native_pc \gset
PREPARE pc(int) AS WITH c AS MATERIALIZED (SELECT * FROM ce WHERE g >= $1) SELECT count(*), sum(a.v), max(b.t) FROM c a JOIN c b ON a.id = b.id + 40;
SELECT cs_store_mode('EXECUTE pc(5)', 'CompSpill CTE Scan') AS prepared_on;
SELECT md5_exec('EXECUTE pc(5)') = :'native_pc' AS prepared_on_same;
SET compspill.enabled = off;
SELECT cs_store_mode('EXECUTE pc(5)', 'CompSpill CTE Scan', false) AS prepared_off;
SELECT md5_exec('EXECUTE pc(5)') = :'native_pc' AS prepared_off_same;
RESET compspill.enabled;
DEALLOCATE pc;
RESET plan_cache_mode;

RESET work_mem;
DROP TABLE ce;
