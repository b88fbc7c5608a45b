#!/usr/bin/env python3
#
# test/load.py
#	  Load test: many sessions at once run spilling sorts, Materials, CTE
#	  scans and recursive unions through compspill, each result checked
#	  against native PostgreSQL's (compspill.enabled = off).
#
# Usage (Python 3 standard library and psql; connection from the usual
# PGHOST, PGPORT, PGUSER, PGDATABASE; compspill must be loaded in the
# server, best through shared_preload_libraries):
#
#	python3 test/load.py [--duration 120] [--sessions 16] [--seed 1]
#		[--pgdata DIR] [--scale 1] [--extra NAME=VALUE ...]
#		[--cancel-fraction 0.05] [--statement-timeout 300] [--no-probe]
#		[--keep-tables] [--reuse-tables]
#
#	# what CI runs, against a throw-away cluster:
#	python3 test/load.py --duration 20
#
# What it does:
#   1. Creates its tables (load_wide, load_narrow, load_num, load_nulls,
#      load_toast, load_dup, load_groups: wide text rows, narrow integers,
#      numerics of mixed scales and NaN/Infinity, mostly-NULL columns,
#      TOASTed values, many equal keys, large groups behind an index on
#      their key), the same rows for the same --seed, in a few seconds.
#      Every query below spills at work_mem = 4MB (and so at 1MB and 64kB).
#   2. Probe: runs each query once, alone, under EXPLAIN ANALYZE with
#      compspill at work_mem = 4MB, and checks that a CompSpill node spilled
#      (for the incremental sorts, the CompSpill Incremental Sort itself)
#      and that pg_stat_database's temp_files and temp_bytes grew by at
#      least the files the spilling nodes report (Temp File Peak).
#   3. Load: --sessions psql processes, each one long-lived session, loop
#      until --duration seconds have passed.  Each iteration picks a query
#      (ORDER BY with DESC / NULLS FIRST / COLLATE "C", default or ICU,
#      DISTINCT, window functions, incremental sorts of large groups over
#      an index, merge joins, a nested loop over a
#      Material, a MATERIALIZED CTE read twice, recursive walks (UNION ALL,
#      UNION, rescanned in a correlated subquery), a scroll cursor fetched
#      backwards and by absolute position, a parallel sort, values larger
#      than a block, 40 columns of 30 types), a codec, work_mem (64kB, 1MB,
#      4MB), compspill.enable_dio on or off, a block size, a write size,
#      and each --extra setting on or off.  It runs the query with
#      compspill on (directly, or as EXECUTE of a generic plan made with
#      compspill on, or that plan run with compspill off, when its
#      CompSpill nodes fall back to PostgreSQL's tuplesort and tuplestore:
#      "via" in the summary) and compares the result with the native one
#      at the same work_mem (computed once and cached).  A result is
#      compared in its order: count and md5 of the rows in output order,
#      or, where the query leaves the order of equal keys open, md5 of the
#      keys in output order plus an order-free hash of the rows.  A
#      cursor's fetched rows are hashed as psql prints them.  A few queries
#      (--cancel-fraction) get a statement_timeout of 20 to 500 ms, so that
#      spills are also cut short under load: being cancelled is expected of
#      them, not an error, and they are not counted as checked.
#   4. At the end, first with every session idle but still connected (a
#      leak that backend exit would clean up shows there), then with every
#      session closed: pgsql_tmp (base/ and each tablespace's, read from
#      the data directory, --pgdata or SHOW data_directory) must be empty,
#      compspill_temp_space() back to 0 and compspill_activity empty (when
#      the extension is there and compspill is preloaded),
#      pg_stat_database's temp counters must only have grown (also sampled
#      every second during the load) and temp_files grown by at least the
#      spills compspill_stats counted.
#
# The summary ends with one line:
#	load: N queries checked, E errors, W wrong, pgsql_tmp empty: PASS
# and the exit status is 0 only on PASS.
#
# --extra NAME=VALUE (repeatable; replaces the default list, which is
# compspill.encryption=aes-256-gcm) names a setting that each compspill
# query turns on or off at random; a setting the server does not know
# (SELECT count(*) FROM pg_settings WHERE name = ...) is skipped with a
# note.  Run it as a user who can read the data directory (root or the
# server's owner), connecting as a superuser (or pass --pgdata: SHOW
# data_directory needs pg_read_all_settings).  The tables are dropped at
# the end unless --keep-tables; --reuse-tables keeps tables of the same
# seed and scale from an earlier --keep-tables run.
#

import argparse
import collections
import glob
import hashlib
import json
import os
import random
import subprocess
import sys
import threading
import time

WORK_MEMS = ['64kB', '1MB', '4MB']
CODECS = ['none', 'lz4', 'zstd', 'auto']
BLOCK_SIZES = [None, '8kB', '256kB']	# None: the default
WRITE_SIZES = [None, '16kB', '4MB']
DEFAULT_EXTRAS = ['compspill.encryption=aes-256-gcm']
TABLES = ['load_wide', 'load_narrow', 'load_num', 'load_nulls',
		  'load_toast', 'load_dup', 'load_groups']
DATA_VERSION = 2				# bump when the generated data changes
END = '__load_end__'


def log(msg):
	print(msg, flush=True)


# ---------------------------------------------------------------------------
# One psql session, fed through stdin
# ---------------------------------------------------------------------------

class SessionLost(Exception):
	pass


class Psql:
	"""A long-lived psql process.  run() sends one statement followed by an
	\\echo of a marker with psql's ERROR and SQLSTATE variables, and reads
	stdout up to that marker, so each statement's output and outcome are
	known without parsing psql's messages."""

	def __init__(self, name):
		env = dict(os.environ)
		env['PGAPPNAME'] = name
		self.name = name
		self.proc = subprocess.Popen(
			['psql', '-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=0',
			 '-v', 'VERBOSITY=terse', '-P', 'null=\\N'],
			stdin=subprocess.PIPE, stdout=subprocess.PIPE,
			stderr=subprocess.PIPE, env=env)
		self.stderr_tail = collections.deque(maxlen=50)
		self.prepared = set()			# names of prepared statements
		self.err_thread = threading.Thread(target=self._drain_stderr,
										   daemon=True)
		self.err_thread.start()

	def _drain_stderr(self):
		for line in self.proc.stderr:
			self.stderr_tail.append(line.decode('utf-8', 'replace').rstrip())

	def run(self, sql, hasher=None):
		"""Run one statement.  Returns (ok, sqlstate, message, lines); with
		hasher, the output goes into it instead of lines."""
		text = sql.rstrip().rstrip(';') + ';\n'
		text += '\\echo %s :ERROR :SQLSTATE\n' % END
		text += '\\if :ERROR\n\\echo :LAST_ERROR_MESSAGE\n\\endif\n'
		text += '\\echo %s\n' % END
		try:
			self.proc.stdin.write(text.encode())
			self.proc.stdin.flush()
		except (BrokenPipeError, OSError):
			raise SessionLost(self._lost())
		lines = []
		status = None
		while True:
			line = self.proc.stdout.readline()
			if not line:
				raise SessionLost(self._lost())
			if line.startswith(END.encode()):
				status = line.decode().split()
				break
			if hasher is not None:
				hasher.update(line)
			else:
				lines.append(line.decode('utf-8', 'replace').rstrip('\n'))
		msg = []
		while True:
			line = self.proc.stdout.readline()
			if not line:
				raise SessionLost(self._lost())
			if line.rstrip() == END.encode():
				break
			msg.append(line.decode('utf-8', 'replace').rstrip())
		ok = len(status) >= 2 and status[1] == 'false'
		sqlstate = status[2] if len(status) >= 3 else '?'
		return ok, sqlstate, ' '.join(msg), lines

	def value(self, sql):
		"""Run a statement that must work and return its output lines."""
		ok, state, msg, lines = self.run(sql)
		if not ok:
			raise RuntimeError('%s: %s (%s)' % (sql, msg, state))
		return lines

	def _lost(self):
		try:
			self.proc.wait(timeout=5)
		except subprocess.TimeoutExpired:
			pass
		tail = ' | '.join(list(self.stderr_tail)[-3:])
		return 'psql %s exited (status %s): %s' % (
			self.name, self.proc.returncode, tail)

	def close(self):
		try:
			self.proc.stdin.write(b'\\q\n')
			self.proc.stdin.close()
		except (BrokenPipeError, OSError):
			pass
		try:
			self.proc.wait(timeout=30)
		except subprocess.TimeoutExpired:
			self.proc.kill()
			self.proc.wait()

	def kill(self):
		if self.proc.poll() is None:
			self.proc.kill()
			self.proc.wait()


# ---------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------

WORDS = '''the of and to in is that for it as was with be by on not he this
are or his from at which but have an they you were her she there been one
all we their has would when if so no will can more other its into only some
could time these two may then do first any my now such like our over man me
even most made after also did many before must through back years where much
your way well down should because each just those people how too little
carefully quickly final regular special express pending ironic bold furious
silent blithely slyly deposits requests accounts packages instructions foxes
pinto beans theodolites dependencies platelets ideas asymptotes courts
dolphins warhorses sheaves Ärger über café naïve Zebra apple Apple ápple
-dash _under 10 9 Ω'''.split()


def generation_sql(seed, scale):
	"""Statements that create the tables; deterministic in seed and scale."""
	def n(rows):
		return max(1, int(rows * scale))
	words = ','.join("'%s'" % w for w in WORDS)
	s = int(seed)
	return [
		'DROP TABLE IF EXISTS %s, load_meta' % ', '.join(TABLES),
		# h(i, s): a deterministic pseudo-random non-negative bigint
		'CREATE FUNCTION pg_temp.h(i bigint, s int) RETURNS bigint '
		'LANGUAGE sql IMMUTABLE AS $$ SELECT abs(hashint8extended(i, s)) $$',
		# words(i, n, s): n words chosen by h
		'CREATE FUNCTION pg_temp.words(i bigint, n int, s int) RETURNS text '
		'LANGUAGE sql IMMUTABLE AS $$ SELECT string_agg((ARRAY[%s])'
		'[1 + pg_temp.h(i * 4096 + j, s) %% %d], \' \') '
		'FROM generate_series(1, n) j $$' % (words, len(WORDS)),
		# wide text rows; k has repeats, payload is 8-40 words
		f'''CREATE TABLE load_wide AS SELECT i AS id,
			(pg_temp.h(i, {s}) % 200)::int AS grp,
			pg_temp.words(i, 1 + (pg_temp.h(i, {s} + 1) % 3)::int, {s}) AS k,
			pg_temp.words(i + 100000000, 8 + (pg_temp.h(i, {s} + 2) % 33)::int, {s}) AS payload,
			timestamptz '2020-01-01' + (pg_temp.h(i, {s} + 3) % 100000000) * interval '1 second' AS ts,
			pg_temp.h(i, {s} + 4) % 3 = 0 AS flag
		FROM generate_series(1, {n(40000)}) i''',
		# narrow integers
		f'''CREATE TABLE load_narrow AS SELECT i AS id,
			(pg_temp.h(i, {s}) % {n(40000)})::int + 1 AS a,
			pg_temp.h(i, {s} + 1) - 4611686018427387904 AS b,
			(pg_temp.h(i, {s} + 2) % 65536 - 32768)::smallint AS c,
			date '2000-01-01' + (pg_temp.h(i, {s} + 3) % 9000)::int AS d
		FROM generate_series(1, {n(150000)}) i''',
		# numerics: mixed scales (1.5 = 1.50), NaN, +-Infinity, huge ones
		f'''CREATE TABLE load_num AS SELECT i AS id,
			CASE pg_temp.h(i, {s}) % 40
				WHEN 0 THEN 'NaN'::numeric
				WHEN 1 THEN 'Infinity'::numeric
				WHEN 2 THEN '-Infinity'::numeric
				ELSE round((pg_temp.h(i, {s} + 1) % 2000001 - 1000000)::numeric / 1000,
						   (pg_temp.h(i, {s} + 2) % 5)::int) END AS n,
			((pg_temp.h(i, {s} + 3) % 10000000000) / 100.0)::numeric(12,2) AS m,
			round(pg_temp.h(i, {s} + 4)::numeric * pg_temp.h(i, {s} + 5) / 7
				  * power(10::numeric, (pg_temp.h(i, {s} + 6) % 60)::int - 40), 20) AS p
		FROM generate_series(1, {n(80000)}) i''',
		# mostly NULL columns, and one always NULL
		f'''CREATE TABLE load_nulls AS SELECT i AS id,
			CASE WHEN pg_temp.h(i, {s}) % 10 < 7 THEN NULL
				 ELSE (pg_temp.h(i, {s} + 1) % 1000)::int END AS a,
			CASE WHEN pg_temp.h(i, {s} + 2) % 2 = 0 THEN NULL
				 ELSE pg_temp.words(i, 1 + (pg_temp.h(i, {s} + 3) % 3)::int, {s}) END AS t,
			CASE WHEN pg_temp.h(i, {s} + 4) % 5 < 4 THEN NULL
				 ELSE (pg_temp.h(i, {s} + 5) % 100000)::numeric / 100 END AS n,
			CASE WHEN pg_temp.h(i, {s} + 6) % 10 < 3 THEN NULL
				 ELSE pg_temp.h(i, {s} + 7) % 2 = 0 END AS b,
			NULL::int AS z
		FROM generate_series(1, {n(100000)}) i''',
		# TOASTed values: big (compressible, external or inline compressed),
		# raw (STORAGE EXTERNAL, not compressed), mid (inline)
		'CREATE TABLE load_toast (id int, k int, big text, raw text, mid text)',
		'ALTER TABLE load_toast ALTER COLUMN raw SET STORAGE EXTERNAL',
		f'''INSERT INTO load_toast SELECT i,
			(pg_temp.h(i, {s}) % 50)::int,
			pg_temp.words(i + 200000000, 100 + (pg_temp.h(i, {s} + 1) % 1100)::int, {s}),
			CASE WHEN pg_temp.h(i, {s} + 2) % 4 = 0 THEN NULL ELSE
				(SELECT string_agg(md5((i * 1000 + j)::text), '')
				 FROM generate_series(1, 20 + (pg_temp.h(i, {s} + 3) % 150)::int) j) END,
			pg_temp.words(i + 300000000, 60 + (pg_temp.h(i, {s} + 4) % 100)::int, {s})
		FROM generate_series(1, {n(5000)}) i''',
		# many equal keys
		f'''CREATE TABLE load_dup AS SELECT i AS id,
			(pg_temp.h(i, {s}) % 8)::int AS k,
			(ARRAY['alpha','beta','gamma','delta','epsilon'])[1 + pg_temp.h(i, {s} + 1) % 5] AS s,
			(pg_temp.h(i, {s} + 2) % 3000)::int AS v
		FROM generate_series(1, {n(120000)}) i''',
		# large groups of equal g (30000 rows of about 200 bytes: more than
		# 4MB each), stored in g's order, then small ones, with an index on
		# g: ORDER BY g, ... is an Incremental Sort over it whose large
		# groups spill; the text is load_wide's
		f'''CREATE TABLE load_groups AS SELECT i AS id,
			CASE WHEN i <= {n(150000)} THEN (i - 1) / 30000
				 ELSE 1000 + (pg_temp.h(i, {s}) % 2000)::int END AS g,
			(pg_temp.h(i, {s} + 1) % 100000)::int AS v,
			w.k, w.payload
		FROM generate_series(1, {n(150000) + n(10000)}) i
			JOIN load_wide w ON w.id = 1 + i % {n(40000)}
		ORDER BY i''',
		'CREATE INDEX load_groups_g ON load_groups (g)',
		'CREATE TABLE load_meta (seed bigint, scale float8, version int)',
		'INSERT INTO load_meta VALUES (%d, %r, %d)' % (s, float(scale),
													   DATA_VERSION),
		'VACUUM ANALYZE %s' % ', '.join(TABLES),
	]


# ---------------------------------------------------------------------------
# Queries
# ---------------------------------------------------------------------------

class Query:
	"""One query.  key: None when the query orders its rows completely (the
	rows are compared in output order); otherwise an expression over q, the
	query's output, whose sequence is compared in output order while the
	rows themselves are compared as a multiset (the order of rows with
	equal keys is left open by SQL and differs between sorts).  cursor:
	the FETCH/MOVE commands run on a SCROLL cursor over sql.  node: the
	CompSpill node that must spill in the probe (else any may)."""

	def __init__(self, qid, shape, sql, key=None, settings=None,
				 cursor=None, node=None):
		self.qid = qid
		self.shape = shape
		self.sql = ' '.join(sql.split())
		self.key = key
		self.settings = settings or {}
		self.cursor = cursor
		self.node = node

	def checked_sql(self):
		if self.key is None:
			return ("SELECT count(*) || ' ' || coalesce(md5(string_agg("
					"md5(q::text), '')), '-') FROM (%s) q" % self.sql)
		return ("SELECT count(*) || ' ' || coalesce(md5(string_agg(%s, "
				"',')), '-') || ' ' || coalesce(sum(hashtextextended("
				"q::text, 0)::numeric), 0) FROM (%s) q" % (self.key, self.sql))


# 40 columns of many types from load_wide, some NULL
TYPES_COLUMNS = ', '.join([
	'id', 'grp', 'k', 'flag', 'ts',
	'(id %% 7)::int2 AS t_int2', 'id::int8 * 1000003 AS t_int8',
	"CASE WHEN id %% 11 = 0 THEN 'NaN'::float8 WHEN id %% 13 = 0 THEN "
	"'-0'::float8 ELSE grp / 7.0::float8 END AS t_float8",
	'(grp / 3.0)::float4 AS t_float4', 'id::numeric / 7 AS t_numeric',
	"md5(k)::uuid AS t_uuid", "jsonb_build_object('k', k, 'g', grp) AS t_jsonb",
	'ARRAY[grp, id, NULL] AS t_int_array', "string_to_array(k, ' ') AS t_text_array",
	"convert_to(payload, 'UTF8') AS t_bytea", "(grp || ' minutes')::interval AS t_interval",
	'ts::date AS t_date', 'ts::time AS t_time', "'(1,2)'::point AS t_point",
	"inet '10.0.0.0' + id AS t_inet", "int4range(grp, grp + id) AS t_range",
	"CASE WHEN flag THEN NULL ELSE payload END AS t_text_null",
	'left(payload, 1)::char(3) AS t_char', "k::varchar(40) AS t_varchar",
	'k::name AS t_name', "(id %% 5 = 0) AS t_bool",
	'NULL::text AS t_all_null', "'x'::text AS t_const",
	'ts::timestamp AS t_timestamp', 'id::oid AS t_oid', 'grp::money AS t_money',
	"to_tsvector('simple', k) AS t_tsvector", "('<a>' || grp || '</a>')::xml::text AS t_xml",
	"B'1011'::bit(4) AS t_bit", "('x' || lpad(to_hex(id), 8, '0'))::bit(32)::varbit AS t_varbit",
	"md5(payload) AS t_md5", "payload || payload AS t_long",
	"CASE WHEN id %% 3 = 0 THEN NULL ELSE id END AS t_int_null",
	"(id * 1.5)::numeric(20, 3) AS t_numeric3", "ts AT TIME ZONE 'UTC' AS t_ts_utc",
]).replace('%%', '%')


CURSOR_FETCHES = [
	'MOVE LAST IN c', 'FETCH BACKWARD 1500 FROM c', 'FETCH ABSOLUTE 7000 FROM c',
	'FETCH RELATIVE -2000 FROM c', 'FETCH FORWARD 400 FROM c',
	'MOVE ABSOLUTE 100 IN c', 'FETCH BACKWARD 60 FROM c', 'FETCH PRIOR FROM c',
	'FETCH LAST FROM c', 'FETCH ABSOLUTE -20000 FROM c', 'FETCH FORWARD 10 FROM c',
]


def make_queries(icu):
	"""The queries; icu is a linguistic collation's name or None."""
	ling = icu or 'C'
	no_hj = {'enable_hashjoin': 'off', 'enable_nestloop': 'off'}
	nl_only = {'enable_hashjoin': 'off', 'enable_mergejoin': 'off'}
	no_ha = {'enable_hashagg': 'off'}
	# an Incremental Sort over the index on load_groups.g
	inc = {'enable_seqscan': 'off', 'enable_bitmapscan': 'off',
		   'enable_sort': 'off'}
	inc_node = 'CompSpill Incremental Sort'
	par = {'max_parallel_workers_per_gather': '2', 'parallel_setup_cost': '0',
		   'parallel_tuple_cost': '0', 'min_parallel_table_scan_size': '0'}
	qs = [
		# ORDER BY: text keys in three collations, DESC, NULLS FIRST
		Query('text_default', 'order_text',
			  'SELECT * FROM load_wide ORDER BY k, id'),
		Query('text_c_desc', 'order_text',
			  'SELECT * FROM load_wide ORDER BY k COLLATE "C" DESC, id'),
		Query('text_icu', 'order_text',
			  'SELECT * FROM load_wide ORDER BY k COLLATE "%s" DESC NULLS FIRST, '
			  'payload COLLATE "%s", id DESC' % (ling, ling)),
		Query('text_ts', 'order_text',
			  'SELECT * FROM load_wide ORDER BY ts DESC, grp, id'),
		Query('narrow_1', 'order_narrow',
			  'SELECT * FROM load_narrow ORDER BY c DESC, b, id'),
		Query('narrow_2', 'order_narrow',
			  'SELECT * FROM load_narrow ORDER BY d NULLS FIRST, a DESC, id'),
		Query('num_1', 'order_numeric',
			  'SELECT * FROM load_num ORDER BY n, id'),
		Query('num_2', 'order_numeric',
			  'SELECT * FROM load_num ORDER BY m DESC NULLS LAST, p, id'),
		Query('nulls_1', 'order_nulls',
			  'SELECT * FROM load_nulls ORDER BY a NULLS FIRST, t DESC, id'),
		Query('nulls_2', 'order_nulls',
			  'SELECT * FROM load_nulls ORDER BY n DESC NULLS LAST, b, z, id'),
		Query('nulls_3', 'order_nulls',
			  'SELECT * FROM load_nulls ORDER BY t COLLATE "%s" NULLS FIRST, id'
			  % ling),
		Query('toast_1', 'order_toast',
			  'SELECT * FROM load_toast ORDER BY k DESC, id'),
		Query('toast_2', 'order_toast',
			  'SELECT id, raw, big, mid FROM load_toast ORDER BY mid, id'),
		# values larger than a block (computed, so not TOASTed), and many
		# columns of many types
		Query('big_values', 'big_values',
			  'SELECT id, grp, repeat(payload || \' \', 1 + (id * 7) % 150) AS big '
			  'FROM load_wide WHERE id <= 1200 ORDER BY grp DESC, id'),
		Query('types', 'big_values',
			  'SELECT %s FROM load_wide WHERE id <= 15000 ORDER BY t_jsonb, id'
			  % TYPES_COLUMNS),
		# many equal keys: the order among equal keys is open
		Query('ties_1', 'ties', 'SELECT k, s, v, id FROM load_dup ORDER BY k, s',
			  key='ROW(q.k, q.s)::text'),
		Query('ties_2', 'ties',
			  'SELECT * FROM load_wide ORDER BY grp DESC, flag',
			  key='ROW(q.grp, q.flag)::text'),
		# incremental sorts: input ordered on g, each group sorted on the
		# rest of the keys, the large ones spilling; backward on the index;
		# ties within a group
		Query('inc_1', 'incremental', 'SELECT id, g, v, k, payload FROM '
			  'load_groups ORDER BY g, v, id', settings=inc, node=inc_node),
		Query('inc_2', 'incremental', 'SELECT g, k, payload, id FROM '
			  'load_groups ORDER BY g DESC, k COLLATE "C", id DESC',
			  settings=inc, node=inc_node),
		Query('inc_ties', 'incremental', 'SELECT g, v % 100 AS v100, id, k, payload '
			  'FROM load_groups ORDER BY g, v % 100',
			  key='ROW(q.g, q.v100)::text', settings=inc, node=inc_node),
		# DISTINCT (Sort + Unique)
		Query('distinct_1', 'distinct',
			  'SELECT DISTINCT k, s, v FROM load_dup ORDER BY k, s, v',
			  settings=no_ha),
		Query('distinct_2', 'distinct',
			  'SELECT DISTINCT ON (grp) grp, k, id, payload FROM load_wide '
			  'ORDER BY grp, k COLLATE "C" DESC, id', settings=no_ha),
		# window functions over a sort
		Query('window_1', 'window',
			  'SELECT id, grp, k, sum(id) OVER w, rank() OVER (PARTITION BY grp '
			  'ORDER BY k), first_value(payload) OVER w FROM load_wide '
			  'WINDOW w AS (PARTITION BY grp ORDER BY k, id)'),
		Query('window_2', 'window',
			  'SELECT id, k, s, v, lag(v) OVER (PARTITION BY k, s ORDER BY v, id), '
			  'count(*) OVER (PARTITION BY k, s) FROM load_dup'),
		# merge joins: sorts on both sides, the inner one marked and restored
		Query('mj_1', 'merge_join',
			  'SELECT w.id, w.k, n.id AS nid, n.b FROM load_wide w '
			  'JOIN load_narrow n ON n.a = w.id', key='q.id::text',
			  settings=no_hj),
		Query('mj_2', 'merge_join',
			  'SELECT a.k, a.s, a.v, a.id, b.id AS bid FROM load_dup a '
			  'JOIN load_dup b USING (k, s, v)', key='ROW(q.k, q.s, q.v)::text',
			  settings=no_hj),
		# nested loops over a Material
		Query('mat_1', 'material',
			  'SELECT o.id AS oid, i.id, i.payload FROM (SELECT id, v FROM '
			  'load_dup WHERE id <= 12) o LEFT JOIN load_wide i '
			  'ON i.grp = o.v % 200',
			  settings=nl_only),
		Query('mat_2', 'material',
			  'SELECT a.id, b.id AS bid, b.s FROM load_narrow a LEFT JOIN '
			  'load_dup b ON b.v = a.a % 3000 WHERE a.id <= 25', settings=nl_only),
		# a MATERIALIZED CTE read twice
		Query('cte_1', 'cte',
			  'WITH c AS MATERIALIZED (SELECT id, grp, k, payload FROM load_wide) '
			  'SELECT * FROM c WHERE grp < 100 UNION ALL '
			  'SELECT * FROM c WHERE grp >= 100'),
		Query('cte_2', 'cte',
			  'WITH c AS MATERIALIZED (SELECT id, a, c FROM load_narrow) '
			  'SELECT x.id, y.id AS yid, x.c FROM c x JOIN c y ON x.id = y.a',
			  key='q.id::text', settings=no_hj),
		Query('cte_3', 'cte',
			  'WITH c AS MATERIALIZED (SELECT id, grp, k, payload FROM load_wide) '
			  'SELECT a.id, b.id AS bid, b.k FROM (SELECT * FROM c WHERE id <= 6) a '
			  'LEFT JOIN c b ON b.grp = a.grp', settings=nl_only),
		# scroll cursors fetched backwards and by position
		Query('cursor_1', 'cursor',
			  'SELECT id, k, payload FROM load_wide ORDER BY k, id',
			  cursor=CURSOR_FETCHES),
		Query('cursor_2', 'cursor',
			  'SELECT * FROM load_num ORDER BY n DESC, id', cursor=CURSOR_FETCHES),
		# a join cannot go backwards: a Material on top of it does
		Query('cursor_3', 'cursor',
			  'SELECT w.id, w.k, n.id AS nid, n.b FROM load_wide w '
			  'JOIN load_narrow n ON n.a = w.id', cursor=CURSOR_FETCHES),
		# a CTE scan read backwards
		Query('cursor_4', 'cursor',
			  'WITH c AS MATERIALIZED (SELECT * FROM load_nulls) '
			  'SELECT * FROM c', cursor=CURSOR_FETCHES),
		# recursive walks: the union's working and intermediate tables in
		# one store, iteration after iteration (UNION ALL; UNION with its
		# hash table; a rescan per outer row)
		Query('rec_1', 'recursive',
			  'WITH RECURSIVE w(id, d, k, payload) AS (SELECT id, 0, k, payload '
			  'FROM load_wide WHERE id % 2 = 0 UNION ALL SELECT w.id + 1, w.d + 1, '
			  'w.k, w.payload FROM w WHERE w.d < 3) SELECT * FROM w'),
		Query('rec_2', 'recursive',
			  'WITH RECURSIVE r(v, h) AS (SELECT v, repeat(md5(v::text), 8) FROM '
			  'load_dup WHERE id <= 50 UNION SELECT (r.v * m.m + 3) % 30000, '
			  'repeat(md5(((r.v * m.m + 3) % 30000)::text), 8) FROM r, '
			  '(VALUES (7), (13)) m(m)) SELECT * FROM r'),
		Query('rec_3', 'recursive',
			  'SELECT o.id, (WITH RECURSIVE w(n, p) AS (SELECT g, repeat(o.payload, 4) '
			  'FROM generate_series(1, 20000) g UNION ALL SELECT n + 20000, p FROM w '
			  'WHERE n <= 40000) SELECT count(*) || max(p) FROM w) FROM load_wide o '
			  'WHERE o.id <= 4'),
		# a parallel sort under Gather Merge
		Query('parallel_1', 'parallel',
			  'SELECT * FROM load_narrow ORDER BY b, id', settings=par),
	]
	return {q.qid: q for q in qs}


# ---------------------------------------------------------------------------
# The run
# ---------------------------------------------------------------------------

class Stats:
	def __init__(self):
		self.lock = threading.Lock()
		self.checked = collections.Counter()	# shape -> compared results
		self.errors = collections.Counter()
		self.wrong = collections.Counter()
		self.cancelled = collections.Counter()	# by statement_timeout, on purpose
		self.cancel_tried = 0
		self.knobs = collections.Counter()		# (knob, value) -> queries
		self.slowest = (0.0, '')				# compspill side
		self.slowest_native = (0.0, '')
		self.messages = []

	def note(self, msg):
		with self.lock:
			if len(self.messages) < 200:
				self.messages.append(msg)
		log(msg)


class Load:
	def __init__(self, args):
		self.args = args
		self.stats = Stats()
		self.native = {}				# (qid, work_mem) -> result
		self.native_events = {}
		self.native_lock = threading.Lock()
		self.deadline = None
		self.extras = []				# (name, value) the server knows
		self.queries = {}
		self.live = set()				# Psql objects of the sessions
		self.parked = 0					# sessions done, waiting for release
		self.release = threading.Event()

	# -- native results, computed once per (query, work_mem) --

	def native_result(self, sess, q, work_mem):
		"""The native result of q at work_mem: from the cache, or computed
		here (once: other sessions wanting it meanwhile wait)."""
		key = (q.qid, work_mem)
		while True:
			with self.native_lock:
				if key in self.native:
					return self.native[key]
				ev = self.native_events.get(key)
				if ev is None:
					ev = self.native_events[key] = threading.Event()
					break
			ev.wait()
		res = None
		t = time.time()
		try:
			res = self.execute(sess, q, work_mem, compspill=False)
		finally:
			t = time.time() - t
			with self.stats.lock:
				if t > self.stats.slowest_native[0]:
					self.stats.slowest_native = (t, '%s work_mem=%s' % key)
			with self.native_lock:
				if res is not None and res[0] == 'ok':
					self.native[key] = res
				del self.native_events[key]
			ev.set()
		return res

	# -- one query --

	def configure(self, sess, q, work_mem, compspill, knobs):
		sets = {'work_mem': work_mem,
				'compspill.enabled': 'on' if compspill else 'off',
				'client_min_messages': 'warning',
				'synchronize_seqscans': 'off',
				'max_parallel_workers_per_gather': '0',
				'statement_timeout': '%ds' % self.args.statement_timeout}
		sets.update(q.settings)
		if compspill:
			sets.update(knobs)
		sess.value('RESET ALL')
		sess.value('SELECT ' + ', '.join(
			'set_config(%s, %s, false)' % (literal(k), literal(v))
			for k, v in sets.items()))

	def execute(self, sess, q, work_mem, compspill, knobs=None, via='direct'):
		"""Returns ('ok', result) or ('error', message, sqlstate).  via:
		'direct', or 'prepared' (EXECUTE of a generic plan made with
		compspill on), or 'fallback' (the same plan run with compspill off:
		its CompSpill nodes then use PostgreSQL's tuplesort and
		tuplestore)."""
		knobs = dict(knobs or {})
		if via != 'direct':
			knobs['plan_cache_mode'] = 'force_generic_plan'
		try:
			self.configure(sess, q, work_mem, compspill, knobs)
		except RuntimeError as e:
			return ('error', 'settings: %s' % e, None)
		if q.cursor is None:
			sql = q.checked_sql()
			if via != 'direct':
				name = 'load_' + q.qid
				try:
					if name not in sess.prepared:
						# the generic plan is made here, with compspill on,
						# and kept for every later EXECUTE of the session
						sess.value('PREPARE %s AS %s' % (name, sql))
						plan = sess.value('EXPLAIN (COSTS OFF) EXECUTE ' + name)
						sess.prepared.add(name)
						if not any('CompSpill' in x for x in plan):
							return ('error', 'the plan of %s has no CompSpill '
									'node' % name, None)
					if via == 'fallback':
						sess.value('SET compspill.enabled = off')
				except RuntimeError as e:
					return ('error', str(e), None)
				sql = 'EXECUTE ' + name
			ok, state, msg, lines = sess.run(sql)
			if not ok:
				return ('error', '%s %s' % (state, msg), state)
			return ('ok', ' '.join(lines))
		h = hashlib.md5()
		stmts = ['BEGIN', 'DECLARE c SCROLL CURSOR FOR ' + q.sql] + \
			q.cursor + ['CLOSE c', 'COMMIT']
		for st in stmts:
			h.update(b'\n-- ' + st.encode() + b'\n')
			ok, state, msg, _ = sess.run(st, hasher=h)
			if not ok:
				sess.run('ROLLBACK')
				return ('error', '%s: %s %s' % (st, state, msg), state)
		return ('ok', h.hexdigest())

	def pick_knobs(self, rng):
		knobs = {'compspill.codec': rng.choice(CODECS),
				 'compspill.enable_dio': rng.choice(['on', 'off'])}
		bs = rng.choice(BLOCK_SIZES)
		if bs is not None:
			knobs['compspill.block_size'] = bs
		ws = rng.choice(WRITE_SIZES)
		if ws is not None:
			knobs['compspill.write_size'] = ws
		for name, value in self.extras:
			if rng.random() < 0.5:
				knobs[name] = value
		return knobs

	def session_main(self, i):
		try:
			self.session_loop(i)
		except Exception as e:			# a bug here must not pass silently
			import traceback
			self.error('session %d: %s\n%s' % (i, e, traceback.format_exc()),
					   'session')

	def session_loop(self, i):
		rng = random.Random(self.args.seed * 1000003 + i)
		name = 'compspill-load-%d' % i
		sess = None
		qids = sorted(self.queries)
		while time.time() < self.deadline:
			if sess is None:
				sess = Psql(name)
				self.live.add(sess)
				try:
					sess.value('SELECT 1')
				except (RuntimeError, SessionLost) as e:
					self.error('session %d: cannot start: %s' % (i, e), 'session')
					sess.kill()
					self.live.discard(sess)
					sess = None
					time.sleep(1)
					continue
			q = self.queries[rng.choice(qids)]
			work_mem = rng.choice(WORK_MEMS)
			knobs = self.pick_knobs(rng)
			via = 'direct'
			if q.cursor is None:
				via = rng.choice(['direct', 'direct', 'prepared', 'fallback'])
			cancel = rng.random() < self.args.cancel_fraction
			if cancel:
				# cut short by statement_timeout: cleanup at abort under load
				knobs['statement_timeout'] = '%dms' % rng.randint(20, 500)
			desc = '%s via=%s work_mem=%s %s' % (q.qid, via, work_mem, ' '.join(
				'%s=%s' % (k.replace('compspill.', ''), v)
				for k, v in sorted(knobs.items())))
			try:
				nat = self.native_result(sess, q, work_mem)
				if nat is None or nat[0] != 'ok':
					self.error('session %d: native %s: %s' % (
						i, desc, nat[1] if nat else 'no result'), q.shape)
					continue
				t = time.time()
				res = self.execute(sess, q, work_mem, True, knobs, via)
				t = time.time() - t
			except SessionLost as e:
				self.error('session %d: %s: %s' % (i, desc, e), q.shape)
				sess.kill()
				self.live.discard(sess)
				sess = None
				time.sleep(1)
				continue
			with self.stats.lock:
				if t > self.stats.slowest[0]:
					self.stats.slowest = (t, desc)
				for k, v in knobs.items():
					if k != 'statement_timeout':
						self.stats.knobs[(k, v)] += 1
				self.stats.cancel_tried += cancel
				self.stats.knobs[('work_mem', work_mem)] += 1
				self.stats.knobs[('via', via)] += 1
			if res[0] != 'ok' and cancel and res[2] == '57014':
				with self.stats.lock:
					self.stats.cancelled[q.shape] += 1
			elif res[0] != 'ok':
				self.error('session %d: %s: %s' % (i, desc, res[1]), q.shape)
			elif res[1] != nat[1]:
				with self.stats.lock:
					self.stats.wrong[q.shape] += 1
					self.stats.checked[q.shape] += 1
				self.stats.note('WRONG RESULT session %d: %s\n  native:    %s\n'
								'  compspill: %s\n  query: %s' % (
									i, desc, nat[1], res[1], q.sql))
			else:
				with self.stats.lock:
					self.stats.checked[q.shape] += 1
		# wait, connected and idle, until the main thread has checked that
		# nothing is left while the backends still live
		with self.stats.lock:
			self.parked += 1
		self.release.wait()
		if sess is not None:
			sess.close()
			self.live.discard(sess)

	def error(self, msg, shape):
		with self.stats.lock:
			self.stats.errors[shape] += 1
		self.stats.note('ERROR ' + msg)


def literal(s):
	return "'" + str(s).replace("'", "''") + "'"


def find_plan_nodes(plan, out):
	out.append(plan)
	for sub in plan.get('Plans', []):
		find_plan_nodes(sub, out)
	return out


def db_temp(sess):
	line = sess.value('SELECT temp_files, temp_bytes FROM pg_stat_database '
					  'WHERE datname = current_database()')[0]
	a, b = line.split('|')
	return int(a), int(b)


def pgsql_tmp_dirs(sess, pgdata):
	dirs = [os.path.join(pgdata, 'base', 'pgsql_tmp')]
	for loc in sess.value("SELECT pg_tablespace_location(oid) FROM pg_tablespace "
						  "WHERE spcname NOT IN ('pg_default', 'pg_global')"):
		if loc:
			if not os.path.isabs(loc):
				loc = os.path.join(pgdata, loc)
			dirs.append(loc)				# checked below: PG_*/pgsql_tmp
	return dirs


def count_tmp(dirs):
	"""Files and directories under each pgsql_tmp.  Raises PermissionError
	when a directory cannot be read."""
	found = []
	for d in dirs:
		if os.path.basename(d) == 'pgsql_tmp':
			cands = [d]
		else:
			if not os.access(d, os.R_OK | os.X_OK):
				raise PermissionError('cannot read %s' % d)
			cands = glob.glob(os.path.join(d, 'PG_*', 'pgsql_tmp'))
		for c in cands:
			parent = os.path.dirname(c)
			if not os.access(parent, os.R_OK | os.X_OK):
				raise PermissionError('cannot read %s' % parent)
			if not os.path.exists(c):
				continue
			if not os.access(c, os.R_OK | os.X_OK):
				raise PermissionError('cannot read %s' % c)
			for root, subdirs, files in os.walk(c, onerror=_raise):
				found += [os.path.join(root, f) for f in files + subdirs]
	return found


def _raise(e):
	raise e


def main():
	ap = argparse.ArgumentParser(
		description='compspill load test: concurrent spilling queries, each '
		'result checked against native PostgreSQL.')
	ap.add_argument('--duration', type=float, default=120,
					help='seconds of load (default 120)')
	ap.add_argument('--sessions', type=int, default=16,
					help='concurrent sessions (default 16)')
	ap.add_argument('--seed', type=int, default=1,
					help='seed of the data and of the choices (default 1)')
	ap.add_argument('--scale', type=float, default=1.0,
					help='multiply the tables\' row counts (default 1)')
	ap.add_argument('--pgdata', help='data directory (default: SHOW data_directory)')
	ap.add_argument('--extra', action='append', default=None,
					metavar='NAME=VALUE',
					help='a setting each query turns on or off at random '
					'(repeatable; default %s)' % ', '.join(DEFAULT_EXTRAS))
	ap.add_argument('--statement-timeout', type=int, default=300,
					help='statement_timeout of each query, seconds (default 300)')
	ap.add_argument('--cancel-fraction', type=float, default=0.05,
					help='fraction of the compspill queries given a '
					'statement_timeout of 20 to 500 ms, to be cut short '
					'(default 0.05)')
	ap.add_argument('--keep-tables', action='store_true',
					help='do not drop the tables at the end')
	ap.add_argument('--reuse-tables', action='store_true',
					help='keep tables of the same seed and scale from a '
					'--keep-tables run')
	ap.add_argument('--no-probe', action='store_true',
					help='skip the EXPLAIN ANALYZE probe of each query')
	args = ap.parse_args()
	extras = args.extra if args.extra is not None else DEFAULT_EXTRAS
	t0 = time.time()
	failures = []

	ctl = Psql('compspill-load-control')
	try:
		ctl.value('SET client_min_messages = warning')
		ver = ctl.value('SHOW server_version_num')[0]
		log('load: server %s, database %s, %d sessions, %g s, seed %d' % (
			ver, ctl.value('SELECT current_database()')[0], args.sessions,
			args.duration, args.seed))

		# compspill loaded?  Preloaded?
		def has_setting(name):
			return ctl.value("SELECT count(*) FROM pg_settings WHERE name = '%s'"
							 % name)[0] != '0'
		preload = ctl.value('SHOW shared_preload_libraries')[0]
		preloaded = 'compspill' in preload
		if not has_setting('compspill.enabled'):
			log('load: compspill is not loaded in new sessions (shared_preload_'
				'libraries or session_preload_libraries); cannot run')
			log('load: 0 queries checked, 0 errors, 0 wrong, pgsql_tmp empty: FAIL')
			return 1
		ok, state, msg, _ = ctl.run('CREATE EXTENSION IF NOT EXISTS compspill')
		if not ok:
			log('load: note: CREATE EXTENSION compspill failed (%s); '
				'compspill_temp_space() and compspill_stats not checked' % msg)
		has_fn = lambda f: ctl.value("SELECT to_regproc('%s') IS NOT NULL" % f)[0] == 't'
		have_space = preloaded and has_fn('compspill_temp_space')
		have_stats = preloaded and has_fn('compspill_stats')
		if ctl.value("SELECT to_regprocedure('pg_stat_force_next_flush()') "
					 "IS NOT NULL")[0] != 't':
			failures.append('pg_stat_force_next_flush() missing')

		load = Load(args)
		for e in extras:
			name, sep, value = e.partition('=')
			if not sep:
				ap.error('--extra wants NAME=VALUE, not %r' % e)
			if has_setting(name):
				load.extras.append((name, value))
				log('load: extra setting %s=%s on for about half the queries'
					% (name, value))
			else:
				log('load: extra setting %s skipped: no such setting' % name)

		# data directory and pgsql_tmp
		pgdata = args.pgdata
		if not pgdata:
			ok, state, msg, lines = ctl.run('SHOW data_directory')
			if not ok:
				log('load: cannot SHOW data_directory (%s); pass --pgdata' % msg)
				return 1
			pgdata = lines[0]
		tmpdirs = pgsql_tmp_dirs(ctl, pgdata)
		try:
			before_files = count_tmp(tmpdirs)
		except PermissionError as e:
			log('load: %s: run as a user who can read the data directory '
				'(its owner or root)' % e)
			log('load: 0 queries checked, 0 errors, 0 wrong, pgsql_tmp empty: FAIL')
			return 1
		if before_files:
			log('load: note: pgsql_tmp holds %d files before the run'
				% len(before_files))

		# tables
		icu = None
		for c in ['en-x-icu', 'und-x-icu', 'en_US.utf8', 'en_US']:
			if ctl.value("SELECT count(*) FROM pg_collation WHERE collname = '%s' "
						 "AND collencoding IN (-1, pg_char_to_encoding("
						 "current_setting('server_encoding')))" % c)[0] != '0':
				icu = c
				break
		load.queries = make_queries(icu)
		t = time.time()
		reuse = False
		if args.reuse_tables:
			ok, _, _, lines = ctl.run('SELECT seed, scale, version FROM load_meta')
			reuse = ok and len(lines) == 1 and \
				[float(x) for x in lines[0].split('|')] == \
				[args.seed, args.scale, DATA_VERSION]
		if not reuse:
			for st in generation_sql(args.seed, args.scale):
				ctl.value(st)
		sizes = ctl.value("SELECT string_agg(relname || ' ' || "
						  "pg_size_pretty(pg_total_relation_size(oid)), ', ' "
						  "ORDER BY relname) FROM pg_class WHERE relname IN (%s)"
						  % ','.join("'%s'" % x for x in TABLES))[0]
		log('load: tables %s in %.1f s (%s); linguistic collation: %s' % (
			'reused' if reuse else 'made', time.time() - t, sizes, icu))

		stats0 = db_temp(ctl)
		cs0 = None
		if have_stats:
			cs0 = [int(x) for x in ctl.value(
				'SELECT coalesce(sum(spills), 0), coalesce(sum(written_bytes), 0) '
				'FROM compspill_stats WHERE datname = current_database()')[0]
				.split('|')]

		# probe: does each query spill through compspill, and does
		# pg_stat_database count its files?
		if not args.no_probe:
			t = time.time()
			nonspill = []
			cursor_only = []		# CompSpill nodes in the cursor's plan only
			probe = [0, 0, 0, 0]		# spills, kB they report, files, bytes
			for q in load.queries.values():
				before = db_temp(ctl)
				load.configure(ctl, q, '4MB', True, {})
				ok, state, msg, lines = ctl.run(
					'EXPLAIN (ANALYZE, FORMAT JSON, COSTS OFF, TIMING OFF) ' + q.sql)
				ctl.value('SELECT pg_stat_force_next_flush()')
				if not ok:
					failures.append('probe %s: %s %s' % (q.qid, state, msg))
					continue
				plan = json.loads('\n'.join(lines))[0]['Plan']
				nodes = [n for n in find_plan_nodes(plan, [])
						 if n.get('Custom Plan Provider', '').startswith('CompSpill')]
				spilled = [n for n in nodes if n.get('Temp File Peak', 0) > 0]
				peak_kb = sum(n['Temp File Peak'] for n in spilled)
				after = db_temp(ctl)
				for _ in range(50):		# the flush is at the end of the statement
					if after[0] - before[0] >= len(spilled):
						break
					time.sleep(0.1)
					after = db_temp(ctl)
				df, db = after[0] - before[0], after[1] - before[1]
				probe[0] += len(spilled)
				probe[1] += peak_kb
				probe[2] += df
				probe[3] += db
				if not spilled and q.cursor is not None:
					# EXPLAIN ANALYZE cannot run a cursor; its plan can differ
					# from the query's (a Material on top for going back)
					plan = ctl.value('EXPLAIN (COSTS OFF) DECLARE c SCROLL '
									 'CURSOR FOR ' + q.sql)
					if any('CompSpill' in x for x in plan):
						cursor_only.append(q.qid)
						continue
				if not spilled:
					nonspill.append(q.qid)
				elif q.node and not any(n['Custom Plan Provider'] == q.node
										for n in spilled):
					failures.append('probe %s: no %s spilled (spilled: %s)' % (
						q.qid, q.node, ', '.join(n['Custom Plan Provider']
												 for n in spilled)))
				if df < len(spilled) or db < (peak_kb - len(spilled)) * 1024:
					failures.append(
						'probe %s: pg_stat_database grew by %d files, %d bytes; '
						'its compspill nodes report %d files, %d kB' % (
							q.qid, df, db, len(spilled), peak_kb))
			log('load: probe of %d queries at work_mem=4MB in %.1f s: %s; '
				'%d compspill spills reporting %d kB of temp files, '
				'pg_stat_database +%d files, +%d kB' % (
				len(load.queries), time.time() - t,
				'each spilled through compspill' if not nonspill else
				'no compspill spill in ' + ', '.join(nonspill),
				probe[0], probe[1], probe[2], probe[3] >> 10))
			if cursor_only:
				log('load: (%s: CompSpill nodes in the cursor\'s plan, not '
					'measured)' % ', '.join(cursor_only))
			for q in nonspill:
				failures.append('probe %s: no CompSpill node spilled' % q)
			ctl.value('RESET ALL')
			ctl.value('SET client_min_messages = warning')

		# load
		stats1 = db_temp(ctl)
		samples = [stats1]
		max_space = 0
		max_tmp = 0
		long_seen = set()
		load.deadline = time.time() + args.duration
		threads = [threading.Thread(target=load.session_main, args=(i,),
									daemon=True) for i in range(args.sessions)]
		t_load = time.time()
		for th in threads:
			th.start()
		while True:
			alive = sum(th.is_alive() for th in threads)
			with load.stats.lock:
				if load.parked >= alive:
					break
			time.sleep(1)
			samples.append(db_temp(ctl))
			if have_space:
				max_space = max(max_space,
								int(ctl.value('SELECT compspill_temp_space()')[0]))
			try:
				max_tmp = max(max_tmp, len(count_tmp(tmpdirs)))
			except (PermissionError, FileNotFoundError):
				pass
			# say so once when a query runs for long: a hang shows here
			# before statement_timeout ends it
			for line in ctl.value(
					"SELECT pid, application_name, round(extract(epoch FROM "
					"now() - query_start)), coalesce(wait_event, '-'), query "
					"FROM pg_stat_activity WHERE application_name LIKE "
					"'compspill-load-%' AND state = 'active' AND now() - "
					"query_start > interval '60 s'"):
				pid, app, secs, wait, query = line.split('|', 4)
				if pid + query not in long_seen:
					long_seen.add(pid + query)
					log('load: %s (pid %s) has been running a query for %s s '
						'(wait event %s): %s' % (app, pid, secs, wait, query))
			if time.time() > load.deadline + args.statement_timeout + 60:
				failures.append('sessions still running %d s after the end'
								% (time.time() - load.deadline))
				for p in list(load.live):
					p.kill()
				break
		load_time = time.time() - t_load

		# the sessions are idle and still connected: nothing of theirs may
		# be left, neither files nor compspill's count of temp space
		idle_files, idle_space, idle_act = [], None, None
		for _ in range(10):
			idle_files = [f for f in count_tmp(tmpdirs) if f not in before_files]
			if have_space:
				idle_space = int(ctl.value('SELECT compspill_temp_space()')[0])
			if have_stats:
				idle_act = int(ctl.value('SELECT count(*) FROM compspill_activity')[0])
			if not idle_files and not idle_space and not idle_act:
				break
			time.sleep(0.2)
		idle_backends = ctl.value(
			"SELECT count(*) FROM pg_stat_activity WHERE application_name "
			"~ '^compspill-load-[0-9]+$'")[0]
		if idle_files:
			failures.append('%d files in pgsql_tmp with every session idle: %s'
							% (len(idle_files), ', '.join(idle_files[:5])))
		if idle_space:
			failures.append('compspill_temp_space() is %d with every session idle'
							% idle_space)
		if idle_act:
			failures.append('compspill_activity shows %d spills with every '
							'session idle' % idle_act)
		load.release.set()
		for th in threads:
			th.join(timeout=60)

		# every session has closed: its backend is gone or going
		left = None
		space = None
		for _ in range(100):
			left = count_tmp(tmpdirs)
			if have_space:
				space = int(ctl.value('SELECT compspill_temp_space()')[0])
			n_backends = int(ctl.value(
				"SELECT count(*) FROM pg_stat_activity WHERE application_name "
				"LIKE 'compspill-load-%' AND pid <> pg_backend_pid()")[0])
			if not left and not space and n_backends == 0:
				break
			time.sleep(0.2)
		left = [f for f in left if f not in before_files]
		ctl.value('SELECT pg_stat_force_next_flush()')
		stats2 = db_temp(ctl)
		samples.append(stats2)
		cs1 = None
		if have_stats:
			cs1 = [int(x) for x in ctl.value(
				'SELECT coalesce(sum(spills), 0), coalesce(sum(written_bytes), 0) '
				'FROM compspill_stats WHERE datname = current_database()')[0]
				.split('|')]

		if not args.keep_tables:
			ctl.value('DROP TABLE IF EXISTS %s, load_meta' % ', '.join(TABLES))
	except (RuntimeError, SessionLost) as e:
		log('load: control session failed: %s' % e)
		log('load: 0 queries checked, 1 errors, 0 wrong, pgsql_tmp empty: FAIL')
		return 1
	finally:
		ctl.close()

	# summary
	st = load.stats
	nchecked = sum(st.checked.values())
	nerr = sum(st.errors.values())
	nwrong = sum(st.wrong.values())
	log('')
	log('load: summary')
	log('  sessions %d, load %.1f s (asked %g s), total %.1f s, seed %d' % (
		args.sessions, load_time, args.duration, time.time() - t0, args.seed))
	log('  %-14s %8s %7s %6s' % ('shape', 'checked', 'errors', 'wrong'))
	for shape in sorted(set(q.shape for q in load.queries.values())):
		log('  %-14s %8d %7d %6d' % (shape, st.checked[shape], st.errors[shape],
									 st.wrong[shape]))
	if st.errors['session']:
		log('  %-14s %8s %7d %6s' % ('(sessions)', '', st.errors['session'], ''))
	log('  cut short on purpose by statement_timeout: %d of %d tried (%s)' % (
		sum(st.cancelled.values()), st.cancel_tried, ', '.join(
			'%s %d' % kv for kv in sorted(st.cancelled.items())) or '-'))
	log('  with the %s sessions idle but connected: %d files in pgsql_tmp, '
		'compspill_temp_space() %s, compspill_activity %s rows' % (
			idle_backends, len(idle_files), idle_space, idle_act))
	log('  native results computed: %d' % len(load.native))
	log('  slowest query: %.1f s with compspill (%s), %.1f s native (%s)' % (
		st.slowest + st.slowest_native))
	byknob = collections.defaultdict(list)
	for (k, v), n in sorted(st.knobs.items()):
		byknob[k].append('%s %d' % (v, n))
	for k in sorted(byknob):
		log('  %s: %s' % (k, ', '.join(byknob[k])))
	mono = all(b[0] >= a[0] and b[1] >= a[1] for a, b in zip(samples, samples[1:]))
	log('  pg_stat_database temp_files %d -> %d (+%d), temp_bytes %d -> %d '
		'(+%d MB); %d samples, %s' % (
			stats0[0], stats2[0], stats2[0] - stats0[0], stats0[1], stats2[1],
			(stats2[1] - stats0[1]) >> 20, len(samples),
			'never went down' if mono else 'WENT DOWN'))
	if not mono:
		failures.append('pg_stat_database temp counters went down')
	if stats2[0] <= stats1[0] or stats2[1] <= stats1[1]:
		failures.append('pg_stat_database temp counters did not grow during the load')
	if cs0 is not None and cs1 is not None:
		dsp = cs1[0] - cs0[0]
		log('  compspill_stats: +%d spills, +%d MB written' % (
			dsp, (cs1[1] - cs0[1]) >> 20))
		if stats2[0] - stats0[0] < dsp:
			failures.append('temp_files grew by %d, less than the %d spills '
							'compspill_stats counted' % (stats2[0] - stats0[0], dsp))
		if dsp <= 0:
			failures.append('compspill_stats counted no spill')
	if have_space:
		log('  compspill_temp_space(): peak %d MB during the load, %s at the end'
			% (max_space >> 20, space))
		if space:
			failures.append('compspill_temp_space() is %s, not 0, at the end' % space)
	else:
		log('  compspill_temp_space(): not checked (%s)' % (
			'compspill not in shared_preload_libraries' if not preloaded
			else 'no such function'))
	log('  pgsql_tmp (%s): peak %d files during the load, %d at the end' % (
		', '.join(tmpdirs), max_tmp, len(left)))
	for f in left[:20]:
		log('    left behind: %s' % f)
	for f in failures:
		log('  FAILED: %s' % f)
	if st.messages:
		log('  first problems:')
		for m in st.messages[:10]:
			log('    ' + m.replace('\n', '\n    '))
	passed = (nerr == 0 and nwrong == 0 and not left and not failures
			  and nchecked > 0)
	log('load: %d queries checked, %d errors, %d wrong, pgsql_tmp %s: %s' % (
		nchecked, nerr, nwrong, 'empty' if not left else
		'has %d files' % len(left), 'PASS' if passed else 'FAIL'))
	return 0 if passed else 1


if __name__ == '__main__':
	sys.exit(main())
