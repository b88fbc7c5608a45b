"""A table of mixed strings, generated in SQL, for the string sort queries.

Table `strings` (id, code, url, path, blob): per row

  * code: a short, low-cardinality product/ticket code such as 'NL-0042':
    one of 12 two-letter prefixes, a dash and a 4-digit number skewed
    towards small values (about 40,000 distinct codes, the popular ones
    repeated often);
  * url: an https URL with realistic structure and long shared prefixes:
    one of 10 hosts (weighted), a section path, /year/month/, a slug of
    TPC-H words and a number, sometimes a query string (50-130 bytes);
  * path: a file system path from one of four templates (source files
    under /home/<user>/projects/..., logs under /var/log, docs under
    /usr/share/doc, web roots under /srv/www), 25-80 bytes;
  * blob: 100-300 bytes that do not compress: SHA-256 digests of the row's
    id, concatenated and cut to a random length.

Deterministic: setseed() before the insert, and the blob depends only on
the id. Scale 1 = 1,000,000 rows (a table of about 430 MB); rows are
round(1,000,000 x scale).
"""

from lineitem import ADJECTIVES, NOUNS, VERBS

GEN_VERSION = 1
ROWS_SF1 = 1000000

CODE_PREFIXES = ["AB", "AC", "BX", "CH", "DE", "FR", "GB", "IT", "NL", "SE",
                 "US", "ZZ"]
HOSTS = [("www.example.com", 30), ("shop.example.com", 20),
         ("blog.example.org", 10), ("cdn.example.net", 10),
         ("docs.example.io", 8), ("api.example.com", 8),
         ("news.example.co.uk", 5), ("m.example.de", 4),
         ("static.example-cdn.com", 3), ("forum.example.net", 2)]
SECTIONS = ["products", "blog", "news", "docs/reference", "support/articles",
            "user/profile", "category/electronics", "category/garden-tools",
            "search/results", "static/img/thumbnails"]
SOURCES = ["newsletter", "twitter", "google", "partner", "email"]
USERS = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi",
         "ivan", "judy", "mallory", "postgres"]
PROJECTS = ["compspill", "webshop", "billing", "analytics", "infra",
            "mobile-app", "data-pipeline", "docs"]
MODULES = ["core", "util", "api", "db", "ui", "tests", "io", "net/http"]
EXTENSIONS = [".c", ".h", ".py", ".go", ".rs", ".js", ".md", ".sql",
              ".json", ".txt"]
SERVICES = ["nginx", "postgresql", "syslog", "cron", "sshd", "app", "kern"]
PACKAGES = ["libc6", "python3", "postgresql-15", "openssl", "zlib1g",
            "libzstd1", "liblz4-1", "coreutils", "bash", "git"]
DOCS = ["README", "changelog.Debian.gz", "copyright", "NEWS.gz",
        "examples/index.html", "TODO"]


def _array(words, weighted=False):
    items = []
    for w in words:
        word, n = w if weighted else (w, 1)
        items.extend(["'" + word.replace("'", "''") + "'"] * n)
    return "ARRAY[" + ",".join(items) + "]::text[]"


def _slug(words):
    return [(w.replace(" ", "-"), n) for w, n in words]


def expected_rows(scale):
    return int(round(ROWS_SF1 * scale))


def generate_sql(scale):
    """SQL that drops and recreates `strings` at `scale`. Run it in one
    transaction."""
    rows = expected_rows(scale)
    arrays = {
        "cp": _array(CODE_PREFIXES),
        "ho": _array(HOSTS, True),
        "se": _array(SECTIONS),
        "so": _array(SOURCES),
        "ad": _array(_slug(ADJECTIVES), True),
        "no": _array(_slug(NOUNS), True),
        "ve": _array(_slug(VERBS), True),
        "us": _array(USERS),
        "pr": _array(PROJECTS),
        "mo": _array(MODULES),
        "ex": _array(EXTENSIONS),
        "sv": _array(SERVICES),
        "pk": _array(PACKAGES),
        "dc": _array(DOCS),
    }

    def pick(k):
        # a uniform pick; a word repeated n times in the array has weight n
        return "w.%s[1 + floor(random() * cardinality(w.%s))::int]" % (k, k)

    code = ("%s || '-' || lpad(floor(random() ^ 2 * 3500)::int::text, 4, '0')"
            % pick("cp"))
    url = ("'https://' || {ho} || '/' || {se} || '/' || (2012 + floor(random() * 12)::int) "
           "|| '/' || lpad((1 + floor(random() * 12)::int)::text, 2, '0') || '/' "
           "|| {ad} || '-' || {no} || '-' || {ve} || '-' || floor(random() * 100000)::int "
           "|| CASE WHEN random() < 0.3 THEN '?utm_source=' || {so} || '&id=' "
           "|| floor(random() * 1000000)::int ELSE '' END").format(
               ho=pick("ho"), se=pick("se"), ad=pick("ad"), no=pick("no"),
               ve=pick("ve"), so=pick("so"))
    path = ("CASE floor(random() * 10)::int "
            "WHEN 0 THEN '/var/log/' || {sv1} || '/' || {sv2} || '.log.' "
            "|| floor(random() * 30)::int "
            "WHEN 1 THEN '/usr/share/doc/' || {pk} || '/' || {dc} "
            "WHEN 2 THEN '/srv/www/' || {ho} || '/htdocs/' || {se} || '/index.html' "
            "ELSE '/home/' || {us} || '/projects/' || {pr} || '/src/' || {mo} "
            "|| '/' || {no} || '_' || {ve} || {ex} END").format(
                sv1=pick("sv"), sv2=pick("sv"), pk=pick("pk"), dc=pick("dc"),
                ho=pick("ho"), se=pick("se"), us=pick("us"), pr=pick("pr"),
                mo=pick("mo"), no=pick("no"), ve=pick("ve"), ex=pick("ex"))
    return f"""
DROP TABLE IF EXISTS strings;
CREATE TABLE strings (
    id   int NOT NULL,
    code text NOT NULL,
    url  text NOT NULL,
    path text NOT NULL,
    blob bytea NOT NULL
);
SELECT setseed(0.1717);
INSERT INTO strings
WITH w AS MATERIALIZED (SELECT {", ".join("%s AS %s" % (a, k) for k, a in arrays.items())})
SELECT r.id, r.code, r.url, r.path,
       (SELECT substring(string_agg(sha256(int8send(r.id::int8 * 16 + k)), ''::bytea
                                    ORDER BY k) FROM 1 FOR r.blen)
        FROM generate_series(0, 9) k)
FROM (SELECT g AS id, {code} AS code, {url} AS url, {path} AS path,
             100 + floor(random() * 201)::int AS blen
      FROM generate_series(1, {rows}) g, w) r;
"""
