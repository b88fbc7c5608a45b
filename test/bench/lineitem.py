"""TPC-H-like lineitem generator, in SQL.

Returns the SQL that (re)creates table `lineitem` with the 16 TPC-H columns and
types, generated server side with generate_series and random() (seeded, so a
given scale always gives the same rows on the same PostgreSQL version).

Distributions follow the TPC-H specification (clause 4.2.3):
  * orders: sparse keys (8 of every 32), order date uniform over
    1992-01-01 .. 1998-08-02, 1..7 lines per order;
  * part key uniform over 200,000 x SF, supplier key from the spec's formula
    over 10,000 x SF suppliers, quantity 1..50, price from the part's retail
    price, discount 0.00..0.10, tax 0.00..0.08;
  * ship date = order date + 1..121 days, commit date = order date + 30..90,
    receipt date = ship date + 1..30; return flag R/A for receipts before
    1995-06-17, else N; line status O for ships after it, else F;
  * l_comment: as dbgen does it, a random substring (10..43 characters, at a
    random offset, so it may start or end mid-word) of a text pool built from
    TPC-H's text grammar (noun/verb/prepositional phrases over its weighted
    vocabulary: "furiously", "carefully", "ironic", "deposits", "packages",
    "requests", "accounts" ...).

Scale 1 is exactly 6,001,215 rows (the row count of dbgen's SF 1): rows are
cut at round(6001215 * scale).
"""

GEN_VERSION = 1
ROWS_SF1 = 6001215

# TPC-H text grammar vocabulary, with weights close to dbgen's dists.dss.
NOUNS = [
    ("packages", 40), ("requests", 40), ("accounts", 40), ("deposits", 40),
    ("foxes", 20), ("ideas", 20), ("theodolites", 20), ("pinto beans", 20),
    ("instructions", 20), ("dependencies", 10), ("excuses", 10),
    ("platelets", 10), ("asymptotes", 10), ("courts", 5), ("dolphins", 5),
    ("multipliers", 1), ("sauternes", 1), ("warthogs", 1), ("frets", 1),
    ("dinos", 1), ("attainments", 1), ("somas", 1), ("Tiresias", 1),
    ("patterns", 1), ("forges", 1), ("braids", 1), ("frays", 1),
    ("warhorses", 1), ("dugouts", 1), ("notornis", 1), ("epitaphs", 1),
    ("pearls", 1), ("tithes", 1), ("waters", 1), ("orbits", 1), ("gifts", 1),
    ("sheaves", 1), ("depths", 1), ("sentiments", 1), ("decoys", 1),
    ("realms", 1), ("pains", 1), ("grouches", 1), ("escapades", 1),
    ("hockey players", 1),
]
VERBS = [
    ("sleep", 20), ("wake", 20), ("are", 20), ("cajole", 20), ("haggle", 20),
    ("nag", 10), ("use", 10), ("boost", 10), ("affix", 5), ("detect", 5),
    ("integrate", 5), ("maintain", 1), ("nod", 1), ("was", 1), ("lose", 1),
    ("sublate", 1), ("solve", 1), ("thrash", 1), ("promise", 1),
    ("engage", 1), ("hinder", 1), ("print", 1), ("x-ray", 1), ("breach", 1),
    ("eat", 1), ("grow", 1), ("impress", 1), ("mold", 1), ("poach", 1),
    ("serve", 1), ("run", 1), ("dazzle", 1), ("snooze", 1), ("doze", 1),
    ("unwind", 1), ("kindle", 1), ("play", 1), ("hang", 1), ("believe", 1),
    ("doubt", 1),
]
ADJECTIVES = [
    ("furious", 1), ("sly", 1), ("careful", 1), ("blithe", 1), ("quick", 1),
    ("fluffy", 1), ("slow", 1), ("quiet", 1), ("ruthless", 1), ("thin", 1),
    ("close", 1), ("dogged", 1), ("daring", 1), ("brave", 1),
    ("stealthy", 1), ("permanent", 1), ("enticing", 1), ("idle", 1),
    ("busy", 1), ("regular", 50), ("final", 40), ("ironic", 40),
    ("even", 30), ("bold", 20), ("silent", 10), ("special", 20),
    ("pending", 20), ("express", 20), ("unusual", 10),
]
ADVERBS = [
    ("sometimes", 1), ("always", 1), ("never", 1), ("furiously", 50),
    ("slyly", 50), ("carefully", 50), ("blithely", 40), ("quickly", 30),
    ("fluffily", 20), ("slowly", 1), ("quietly", 1), ("ruthlessly", 1),
    ("thinly", 1), ("closely", 1), ("doggedly", 1), ("daringly", 1),
    ("bravely", 1), ("stealthily", 1), ("permanently", 1),
    ("enticingly", 1), ("idly", 1), ("busily", 1), ("regularly", 1),
    ("finally", 1), ("ironically", 1), ("evenly", 1), ("boldly", 1),
    ("silently", 1),
]
PREPOSITIONS = [
    ("about", 50), ("above", 50), ("according to", 50), ("across", 50),
    ("after", 50), ("against", 40), ("along", 40), ("alongside of", 30),
    ("among", 30), ("around", 20), ("at", 10), ("atop", 1), ("before", 1),
    ("behind", 1), ("beneath", 1), ("beside", 1), ("besides", 1),
    ("between", 1), ("beyond", 1), ("by", 1), ("despite", 1), ("during", 1),
    ("except", 1), ("for", 1), ("from", 1), ("in place of", 1),
    ("inside", 1), ("instead of", 1), ("into", 1), ("near", 1), ("of", 1),
    ("on", 1), ("outside", 1), ("over", 1), ("past", 1), ("since", 1),
    ("through", 1), ("throughout", 1), ("to", 1), ("toward", 1),
    ("under", 1), ("until", 1), ("up", 1), ("upon", 1), ("without", 1),
    ("with", 1), ("within", 1),
]
AUXILIARIES = [
    ("do", 1), ("may", 1), ("might", 1), ("shall", 1), ("will", 1),
    ("would", 1), ("can", 1), ("could", 1), ("should", 1), ("ought to", 1),
    ("must", 1), ("will have to", 1), ("shall have to", 1),
    ("could have to", 1), ("should have to", 1), ("must have to", 1),
    ("need to", 1), ("try to", 1),
]
TERMINATORS = [(".", 50), (";", 1), (":", 1), ("?", 1), ("!", 1), ("--", 1)]


def _weighted_array(words):
    """A SQL text[] literal in which each word appears `weight` times, so that
    a uniform pick from it is a weighted pick."""
    items = []
    for w, n in words:
        items.extend(["'" + w.replace("'", "''") + "'"] * n)
    return "ARRAY[" + ",".join(items) + "]::text[]"


def pool_sql(sentences):
    """A query returning the text pool (bytea): `sentences` sentences of
    TPC-H's grammar, set based (one row per sentence, word arrays built once
    in a CTE, each pick a fresh random subscript)."""
    arrays = {k: _weighted_array(globals()[v]) for k, v in (
        ("n", "NOUNS"), ("v", "VERBS"), ("j", "ADJECTIVES"), ("d", "ADVERBS"),
        ("p", "PREPOSITIONS"), ("x", "AUXILIARIES"), ("t", "TERMINATORS"))}

    def pick(k):
        return "w.%s[1 + floor(random() * cardinality(w.%s))::int]" % (k, k)

    def np(sel):
        # noun phrase: N 10 | J N 20 | J, J N 10 | D J N 50
        return ("(CASE WHEN {s} < 10 THEN {n} WHEN {s} < 30 THEN {j} || ' ' || {n} "
                "WHEN {s} < 40 THEN {j} || ', ' || {j} || ' ' || {n} "
                "ELSE {d} || ' ' || {j} || ' ' || {n} END)").format(
                    s=sel, n=pick("n"), j=pick("j"), d=pick("d"))
    # verb phrase: V 30 | X V 1 | V D 40 | X V D 1
    vp = ("(CASE WHEN s.b < 30 THEN {v} WHEN s.b < 31 THEN {x} || ' ' || {v} "
          "WHEN s.b < 71 THEN {v} || ' ' || {d} ELSE {x} || ' ' || {v} || ' ' || {d} END)").format(
              v=pick("v"), x=pick("x"), d=pick("d"))

    def pp(sel):
        return "(%s || ' the ' || %s)" % (pick("p"), np(sel))
    np1, np2 = np("s.a1"), np("s.a2")
    pp1, pp2 = pp("s.a3"), pp("s.a4")
    # sentence: N V T 3 | N V P T 3 | N V N T 3 | N P V N T 1 | N P V P T 1
    sentence = ("(CASE WHEN s.t < 3 THEN {np1} || ' ' || {vp} "
                "WHEN s.t < 6 THEN {np1} || ' ' || {vp} || ' ' || {pp1} "
                "WHEN s.t < 9 THEN {np1} || ' ' || {vp} || ' ' || {np2} "
                "WHEN s.t < 10 THEN {np1} || ' ' || {pp1} || ' ' || {vp} || ' ' || {np2} "
                "ELSE {np1} || ' ' || {pp1} || ' ' || {vp} || ' ' || {pp2} END || {t})").format(
                    np1=np1, np2=np2, pp1=pp1, pp2=pp2, vp=vp, t=pick("t"))
    return """WITH w AS MATERIALIZED (SELECT {arrays})
SELECT convert_to(string_agg({sentence}, ' '), 'UTF8')
FROM (SELECT floor(random() * 11)::int AS t, floor(random() * 90)::int AS a1,
             floor(random() * 90)::int AS a2, floor(random() * 90)::int AS a3,
             floor(random() * 90)::int AS a4, floor(random() * 72)::int AS b
      FROM generate_series(1, {n})) s, w""".format(
        arrays=", ".join("%s AS %s" % (a, k) for k, a in arrays.items()),
        sentence=sentence, n=sentences)


def generate_sql(scale, pool_mb):
    """SQL that drops and recreates lineitem at `scale`. Run it in one
    transaction (with wal_level=minimal the table's WAL is skipped)."""
    rows = int(round(ROWS_SF1 * scale))
    orders = int(1500000 * scale * 1.06) + 100     # enough orders for `rows`
    parts = max(1, int(round(200000 * scale)))
    supps = max(4, int(round(10000 * scale)))
    # Pool of grammar text; dbgen uses a 300 MB pool, we build a smaller one
    # (default 64 MB; a sentence averages ~58 bytes).
    sentences = max(1000, int(pool_mb * 1024 * 1024 / 58))
    pool = pool_sql(sentences)
    return f"""
SELECT setseed(0.4242);
DROP TABLE IF EXISTS lineitem;
CREATE TABLE lineitem (
    l_orderkey      int8 NOT NULL,
    l_partkey       int NOT NULL,
    l_suppkey       int NOT NULL,
    l_linenumber    int NOT NULL,
    l_quantity      numeric(15,2) NOT NULL,
    l_extendedprice numeric(15,2) NOT NULL,
    l_discount      numeric(15,2) NOT NULL,
    l_tax           numeric(15,2) NOT NULL,
    l_returnflag    char(1) NOT NULL,
    l_linestatus    char(1) NOT NULL,
    l_shipdate      date NOT NULL,
    l_commitdate    date NOT NULL,
    l_receiptdate   date NOT NULL,
    l_shipinstruct  char(25) NOT NULL,
    l_shipmode      char(10) NOT NULL,
    l_comment       varchar(44) NOT NULL
);
DO $gen$
DECLARE
    pool bytea;
    plen int;
BEGIN
    {pool} INTO pool;
    plen := length(pool);
    INSERT INTO lineitem
    SELECT okey, partkey,
           ((partkey + (si * ({supps} / 4 + (partkey - 1) / {supps}))) % {supps}) + 1,
           ln, qty,
           qty * ((90000 + ((partkey / 10) % 20001) + 100 * (partkey % 1000)) / 100.0),
           disc, tax,
           CASE WHEN shipdate + rdelta <= date '1995-06-17'
                THEN CASE WHEN rf < 0.5 THEN 'R' ELSE 'A' END ELSE 'N' END,
           CASE WHEN shipdate > date '1995-06-17' THEN 'O' ELSE 'F' END,
           shipdate, commitdate, shipdate + rdelta,
           (ARRAY['DELIVER IN PERSON', 'COLLECT COD', 'NONE', 'TAKE BACK RETURN'])[1 + si2],
           (ARRAY['REG AIR', 'AIR', 'RAIL', 'SHIP', 'TRUCK', 'MAIL', 'FOB'])[1 + sm],
           convert_from(substring(pool FROM 1 + coff FOR clen), 'UTF8')
    FROM (
        SELECT o.okey, ln,
               1 + floor(random() * {parts})::int AS partkey,
               floor(random() * 4)::int AS si,
               (1 + floor(random() * 50))::numeric AS qty,
               (floor(random() * 11) / 100)::numeric AS disc,
               (floor(random() * 9) / 100)::numeric AS tax,
               o.odate + 1 + floor(random() * 121)::int AS shipdate,
               o.odate + 30 + floor(random() * 61)::int AS commitdate,
               1 + floor(random() * 30)::int AS rdelta,
               random() AS rf,
               floor(random() * 4)::int AS si2,
               floor(random() * 7)::int AS sm,
               floor(random() * (plen - 44))::int AS coff,
               10 + floor(random() * 34)::int AS clen
        FROM (SELECT ((g - 1) / 8) * 32 + (g - 1) % 8 + 1 AS okey,
                     date '1992-01-01' + floor(random() * 2406)::int AS odate,
                     1 + floor(random() * 7)::int AS nlines
              FROM generate_series(1::int8, {orders}::int8) g) o
        CROSS JOIN LATERAL generate_series(1, o.nlines) ln
        LIMIT {rows}
    ) l;
END
$gen$;
"""


def expected_rows(scale):
    return int(round(ROWS_SF1 * scale))


ORDERS_GEN_VERSION = 1


def orders_sql(scale):
    """SQL that drops and recreates an orders-like table `orders` from
    lineitem (which must exist): one row per distinct l_orderkey, with
    TPC-H's order columns. Derived from the order's lines: o_totalprice =
    sum(l_extendedprice * (1 + l_tax) * (1 - l_discount)), o_orderstatus F /
    O / P from the lines' l_linestatus, o_orderdate the latest date
    consistent with the lines' ship and commit dates, o_comment a 19-78
    character prefix of the lines' comments. Random: o_custkey (uniform over
    150,000 x SF customers, skipping every third key as dbgen does),
    o_orderpriority, o_clerk (1,000 x SF clerks). Seeded, generated in key
    order: deterministic."""
    custs = max(3, int(round(150000 * scale)))      # keys 1, 2, 4, 5, 7, ...
    clerks = max(1, int(round(1000 * scale)))
    return f"""
DROP TABLE IF EXISTS orders;
CREATE TABLE orders (
    o_orderkey      int8 NOT NULL,
    o_custkey       int NOT NULL,
    o_orderstatus   char(1) NOT NULL,
    o_totalprice    numeric(15,2) NOT NULL,
    o_orderdate     date NOT NULL,
    o_orderpriority char(15) NOT NULL,
    o_clerk         char(15) NOT NULL,
    o_shippriority  int NOT NULL,
    o_comment       varchar(79) NOT NULL
);
SELECT setseed(0.2121);
INSERT INTO orders
SELECT okey, 3 * floor(random() * {custs // 3})::int + 1 + floor(random() * 2)::int,
       status, total, odate,
       (ARRAY['1-URGENT', '2-HIGH', '3-MEDIUM', '4-NOT SPECIFIED', '5-LOW'])
           [1 + floor(random() * 5)::int],
       'Clerk#' || lpad((1 + floor(random() * {clerks}))::int::text, 9, '0'),
       0, left(words, 19 + floor(random() * 60)::int)
FROM (SELECT l_orderkey AS okey,
             CASE WHEN bool_and(l_linestatus = 'F') THEN 'F'
                  WHEN bool_and(l_linestatus = 'O') THEN 'O' ELSE 'P' END AS status,
             sum(l_extendedprice * (1 + l_tax) * (1 - l_discount))::numeric(15,2) AS total,
             least(min(l_shipdate) - 1, min(l_commitdate) - 30) AS odate,
             string_agg(l_comment, ' ' ORDER BY l_linenumber) AS words
      FROM lineitem GROUP BY l_orderkey ORDER BY l_orderkey) o;
"""
