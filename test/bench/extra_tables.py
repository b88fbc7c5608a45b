"""The tables of bench.py's narrower queries, generated in SQL, seeded.

  bigints_<N>  one bigint column, N rows of hashint8extended(i, 42): the
               narrow single-column sort (a datum sort in native 15+) of
               issue 18's "64kB, 50M bigints" row. The count is in the name,
               so a smaller count (--bigints) is a table of its own, and each
               count is generated once with --keep; bigints_N's rows are the
               first N rows of any larger one.
  isort        (id, a, b, c): groups of ISORT_GROUP rows of equal `a`, stored
               in `a` order (correlation 1), a btree index on `a`, `b` a
               random bigint, `c` a short text (a status word and 12 hex
               digits): ORDER BY a, b over the index is an Incremental Sort
               whose groups (about 10 MB each in memory) outgrow 4MB.
  graph        (src, k, dst, w, label): every node 0..N-1 has two out-edges
               (k = 0, 1) to pseudo-random nodes, primary key (src, k): the
               graph a recursive walk follows, one index probe per step.

hashint8extended() is the stable hash PostgreSQL uses for hash partitioning
(the same values on every version since 11), so a scale gives the same rows
on 15 and 18.
"""

GEN_VERSION = 1

ISORT_ROWS = 2_000_000      # at scale 1
ISORT_GROUP = 100_000       # rows per group of equal a
GRAPH_NODES = 1_000_000     # at scale 1
WALK_START_EVERY = 100      # every 100th node starts a walk
WALK_DEPTH = 6              # steps: 2^6 = 64 times the start rows in the last one


def bigints_table(n):
    return "bigints_%d" % n


def bigints_sql(n):
    t = bigints_table(n)
    return """
DROP TABLE IF EXISTS {t};
CREATE TABLE {t} (x bigint NOT NULL);
INSERT INTO {t} SELECT hashint8extended(i, 42) FROM generate_series(1, {n}::bigint) i;
""".format(t=t, n=n)


def isort_rows(scale):
    return max(ISORT_GROUP, int(round(ISORT_ROWS * scale)))


def isort_sql(scale):
    n = isort_rows(scale)
    return """
DROP TABLE IF EXISTS isort;
CREATE TABLE isort (id bigint NOT NULL, a int NOT NULL, b bigint NOT NULL, c text NOT NULL);
INSERT INTO isort
SELECT i, ((i - 1) / {g})::int, hashint8extended(i, 7),
       (ARRAY['new', 'open', 'held', 'shipped', 'closed', 'returned'])[1 + (i * 7) % 6]
       || ' ' || substr(md5(i::text), 1, 12)
FROM generate_series(1, {n}::bigint) i;
CREATE INDEX isort_a ON isort (a);
""".format(n=n, g=ISORT_GROUP)


def graph_nodes(scale):
    return max(10_000, int(round(GRAPH_NODES * scale)))


def graph_sql(scale):
    n = graph_nodes(scale)
    return """
DROP TABLE IF EXISTS graph;
CREATE TABLE graph (src int NOT NULL, k int NOT NULL, dst int NOT NULL, w int NOT NULL,
                    label text NOT NULL, PRIMARY KEY (src, k));
INSERT INTO graph
SELECT s, k, ((hashint8extended(s * 2 + k, 11) & 2147483647) % {n})::int,
       1 + ((hashint8extended(s * 2 + k, 13) & 1023))::int,
       'edge ' || s || '.' || k
FROM generate_series(0, {n} - 1) s, generate_series(0, 1) k
ORDER BY s, k;
""".format(n=n)


def walk_sql(order_by=""):
    """The recursive walk: from every WALK_START_EVERY-th node, WALK_DEPTH
    steps along both out-edges (UNION ALL: paths, not nodes), carrying the
    path's start, depth, summed weight and last edge's label."""
    return ("WITH RECURSIVE walk(start, node, depth, cost, via) AS ("
            "SELECT src, src, 0, 0::bigint, ''::text FROM graph "
            "WHERE k = 0 AND src %% %d = 0 "
            "UNION ALL "
            "SELECT w.start, g.dst, w.depth + 1, w.cost + g.w, g.label "
            "FROM walk w JOIN graph g ON g.src = w.node WHERE w.depth < %d) "
            "SELECT * FROM walk%s" % (WALK_START_EVERY, WALK_DEPTH, order_by))


def walk_rows(scale):
    starts = (graph_nodes(scale) + WALK_START_EVERY - 1) // WALK_START_EVERY
    return starts * (2 ** (WALK_DEPTH + 1) - 1)
