/*-------------------------------------------------------------------------
 *
 * blockcodec_fuzz.c
 *	  Standalone round-trip and mutation fuzzer for the block codec.
 *
 * The block decoder must be a pure, crash-free function of its input
 * bytes: CompSpillDecodeBlock either rejects a block with a sentence in
 * errdetail, or accepts it, after which every CompSpillDecodeNextRow call
 * stays within the block, its fixed-width scratch and its one-row arena,
 * and exactly nrows rows come out.  This program links src/blockcodec.c
 * outside the server, with the few backend functions it calls stubbed
 * below, and is meant to be built with AddressSanitizer and UBSan so that
 * any out-of-bounds access is caught where it happens.
 *
 * Each iteration makes a random tuple descriptor, encodes one to three
 * blocks of random rows, checks that decoding gives back every value
 * exactly, and then decodes many mutated copies of each block (bit flips,
 * byte overwrites, header fields, truncation, extension, a wrong row
 * count, corrupted length varints).  Every buffer handed to the decoder is
 * an exact-size allocation, so that ASan sees even a one-byte overread.
 *
 * Usage: blockcodec_fuzz [iterations [mutations-per-block [seed]]]
 *
 * IDENTIFICATION
 *	  test/fuzz/blockcodec_fuzz.c
 *
 *-------------------------------------------------------------------------
 */
#define _GNU_SOURCE
#include "postgres.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "access/detoast.h"
#include "access/tupdesc.h"
#include "catalog/pg_type.h"
#include "utils/expandeddatum.h"

#include "compspill.h"
#include "pgstubs.h"

/* use libc's printf family, not libpgport's, which is not linked in */
#undef printf
#undef fprintf
#undef snprintf
#undef vfprintf

/* leaks are handled by the tracked allocator below; keep ASan quiet */
const char *__asan_default_options(void);
const char *
__asan_default_options(void)
{
	return "detect_leaks=0";
}

/* ----------------------------------------------------------------
 * Random numbers: xorshift64, reproducible from the seed.
 * ----------------------------------------------------------------
 */
static uint64 rng_state = 88172645463325252ULL;

static uint64
rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static int
rndn(int n)
{
	return (int) (rnd() % (uint64) n);
}

/* ----------------------------------------------------------------
 * Tuple descriptors and values.
 * ----------------------------------------------------------------
 */
typedef struct ColSpec
{
	int16		attlen;
	bool		byval;
	char		align;
	char		storage;
	Oid			typid;			/* only where the codec looks at it */
} ColSpec;

static const ColSpec specs[] = {
	{1, true, 'c', 'p', InvalidOid},	/* bool, char */
	{2, true, 's', 'p', InvalidOid},	/* int2 */
	{4, true, 'i', 'p', InvalidOid},	/* int4 */
	{8, true, 'd', 'p', InvalidOid},	/* int8 */
	{16, false, 'c', 'p', InvalidOid},	/* uuid */
	{16, false, 'd', 'p', InvalidOid},	/* interval */
	{64, false, 'c', 'p', InvalidOid},	/* name */
	{12, false, 'i', 'p', InvalidOid},	/* odd fixed width */
	{-1, false, 'i', 'x', InvalidOid},	/* text */
	{-1, false, 'i', 'p', InvalidOid},	/* plain-storage varlena */
	{-1, false, 'd', 'x', InvalidOid},	/* double-aligned varlena */
	{-2, false, 'c', 'p', InvalidOid},	/* cstring */
	{-1, false, 'i', 'm', NUMERICOID},	/* numeric */
	{-1, false, 'i', 'p', NUMERICOID},	/* numeric, were it plain storage */
};
#define NSPECS ((int) lengthof(specs))
#define COLHDR 40				/* bytes of a column header */
#define MAX_ATTS 10

static TupleDesc
make_desc(int natts, const int *kinds)
{
	TupleDesc	desc = calloc(1, offsetof(struct TupleDescData, attrs) +
							  (natts + 1) * sizeof(FormData_pg_attribute));

	desc->natts = natts;
	for (int a = 0; a < natts; a++)
	{
		Form_pg_attribute attr = TupleDescAttr(desc, a);
		const ColSpec *s = &specs[kinds[a]];

		snprintf(NameStr(attr->attname), NAMEDATALEN, "c%d", a);
		attr->attnum = a + 1;
		attr->attlen = s->attlen;
		attr->attbyval = s->byval;
		attr->attalign = s->align;
		attr->attstorage = s->storage;
		attr->atttypid = s->typid;
	}
	return desc;
}

/* a length: mostly short, sometimes empty, sometimes long */
static int
rnd_len(bool big)
{
	switch (rndn(8))
	{
		case 0:
			return 0;
		case 1:
			return rndn(big ? 20000 : 600);
		case 2:
			return 120 + rndn(16);	/* around the 1-byte header limit */
		default:
			return rndn(64);
	}
}

static void
fill_bytes(char *p, int len)
{
	for (int i = 0; i < len; i++)
		p[i] = (char) rnd();
}

/*
 * Make a random value for a column of spec s; *mem gets what to free.
 */
static Datum
make_value(const ColSpec *s, void **mem, bool big)
{
	char	   *p;
	int			len;

	*mem = NULL;
	if (s->byval)
	{
		uint64		v = rndn(3) == 0 ? rnd() % 256 : rnd();

		switch (s->attlen)
		{
			case 1:
				return CharGetDatum((char) v);
			case 2:
				return Int16GetDatum((int16) v);
			case 4:
				return Int32GetDatum((int32) v);
			default:
				return Int64GetDatum((int64) v);
		}
	}
	if (s->attlen > 0)
	{
		p = malloc(s->attlen);
		fill_bytes(p, s->attlen);
		*mem = p;
		return PointerGetDatum(p);
	}
	if (s->attlen == -2)
	{
		len = rnd_len(big);
		p = malloc(len + 1);
		for (int i = 0; i < len; i++)
			p[i] = (char) (1 + rndn(255));	/* anything but NUL */
		p[len] = '\0';
		*mem = p;
		return CStringGetDatum(p);
	}

	/* varlena; plain-storage types never hold packed or toasted values */
	len = rnd_len(big);
	switch (s->storage == 'p' ? 0 : rndn(6))
	{
		case 0:
		case 1:					/* 4-byte header */
			p = malloc(len + VARHDRSZ);
			SET_VARSIZE(p, len + VARHDRSZ);
			fill_bytes(p + VARHDRSZ, len);
			break;
		case 2:					/* 1-byte header */
			len = Min(len, VARATT_SHORT_MAX - VARHDRSZ_SHORT);
			p = malloc(len + VARHDRSZ_SHORT);
			SET_VARSIZE_SHORT(p, len + VARHDRSZ_SHORT);
			fill_bytes(p + VARHDRSZ_SHORT, len);
			break;
		case 3:					/* inline-compressed shape */
			len = Max(len, (int) (VARHDRSZ_COMPRESSED - VARHDRSZ));
			p = malloc(len + VARHDRSZ);
			SET_VARSIZE_COMPRESSED(p, len + VARHDRSZ);
			fill_bytes(p + VARHDRSZ, len);
			break;
		case 4:					/* on-disk TOAST pointer shape */
			p = malloc(VARHDRSZ_EXTERNAL + sizeof(varatt_external));
			SET_VARTAG_EXTERNAL(p, VARTAG_ONDISK);
			fill_bytes(VARDATA_EXTERNAL(p), sizeof(varatt_external));
			break;
		default:				/* indirect pointer to a 4-byte value */
			{
				varatt_indirect ind;
				Size		ptrsize = VARHDRSZ_EXTERNAL + sizeof(varatt_indirect);
				char	   *target;

				/* the target lives right after the pointer: one free */
				p = malloc(MAXALIGN(ptrsize) + len + VARHDRSZ);
				target = p + MAXALIGN(ptrsize);
				SET_VARSIZE(target, len + VARHDRSZ);
				fill_bytes(target + VARHDRSZ, len);
				SET_VARTAG_EXTERNAL(p, VARTAG_INDIRECT);
				ind.pointer = (struct varlena *) target;
				memcpy(VARDATA_EXTERNAL(p), &ind, sizeof(ind));
				break;
			}
	}
	*mem = p;
	return PointerGetDatum(p);
}

/* ----------------------------------------------------------------
 * Column generators: what a column of a sorted run looks like.  Each
 * column of each block gets a mode, so that every encoding is chosen
 * (and rejected) often.
 * ----------------------------------------------------------------
 */
typedef enum GenMode
{
	GEN_RANDOM,					/* make_value as it comes */
	GEN_SORTED,					/* integers ascending / prefix-sharing text */
	GEN_FEW,					/* a handful of distinct values */
	GEN_NARROW,					/* integers of a narrow range */
	GEN_EXTREME,				/* integers at the ends of their range */
	NGENMODES
} GenMode;

#define POOL_MAX 300

typedef struct ColGen
{
	GenMode		mode;
	int64		base;			/* NARROW: lowest; SORTED: current */
	uint64		range;			/* NARROW: width; SORTED: largest step */
	int			npool;			/* FEW: distinct values */
	Datum		pool[POOL_MAX];
	void	   *poolmem[POOL_MAX];
	char	   *prev;			/* SORTED text: the previous value's data */
	int			prevlen;
	bool		clean;			/* varlena: short, inline, uncompressed only */
	int			dscale;			/* numeric: the column's display scale */
} ColGen;

static Datum gen_value(ColGen *g, const ColSpec *s, void **mem, bool big);

/* a short, plain varlena (data of at most 126 bytes, sometimes empty) */
static Datum
make_clean(const ColSpec *s, void **mem)
{
	int			len = rndn(8) == 0 ? 0 : rndn(rndn(4) == 0 ? 127 : 12);
	char	   *p;

	if (s->storage != 'p' && rndn(2))
	{
		p = malloc(len + VARHDRSZ_SHORT);
		SET_VARSIZE_SHORT(p, len + VARHDRSZ_SHORT);
		for (int i = 0; i < len; i++)
			p[VARHDRSZ_SHORT + i] = (char) ('A' + rndn(4));
	}
	else
	{
		p = malloc(len + VARHDRSZ);
		SET_VARSIZE(p, len + VARHDRSZ);
		for (int i = 0; i < len; i++)
			p[VARHDRSZ + i] = (char) ('A' + rndn(4));
	}
	*mem = p;
	return PointerGetDatum(p);
}

static void
gen_init(ColGen *g, const ColSpec *s, bool big)
{
	memset(g, 0, sizeof(*g));
	g->mode = (GenMode) rndn(NGENMODES);
	g->clean = s->attlen == -1 && rndn(2);
	g->dscale = rndn(4) == 0 ? rndn(20) : rndn(5);
	if (!s->byval && s->typid != NUMERICOID &&
		(g->mode == GEN_NARROW || g->mode == GEN_EXTREME))
		g->mode = GEN_SORTED;
	switch (g->mode)
	{
		case GEN_SORTED:
			g->base = (int64) rnd();
			if ((s->byval && s->attlen < 8) || rndn(2))
				g->base %= 1000;
			g->range = rndn(4) == 0 ? 0 : 1 + rnd() % (rndn(3) == 0 ? 1000 : 3);
			g->prev = malloc(20000 + 1);
			break;
		case GEN_FEW:
			/* straddle the dictionary limit now and then */
			g->npool = rndn(5) == 0 ? 200 + rndn(POOL_MAX - 200) : 1 + rndn(12);
			for (int i = 0; i < g->npool; i++)
			{
				if (s->typid == NUMERICOID)
				{
					g->mode = GEN_RANDOM;
					g->pool[i] = gen_value(g, s, &g->poolmem[i], big);
					g->mode = GEN_FEW;
				}
				else
					g->pool[i] = g->clean ? make_clean(s, &g->poolmem[i]) :
						make_value(s, &g->poolmem[i], big);
			}
			break;
		case GEN_NARROW:
			g->base = (int64) rnd();
			g->range = (uint64) 1 << rndn(s->attlen > 0 ? s->attlen * 8 : 64);
			break;
		default:
			break;
	}
}

static void
gen_free(ColGen *g)
{
	for (int i = 0; i < g->npool; i++)
		free(g->poolmem[i]);
	free(g->prev);
}

/* a sorted, prefix-sharing varlena or cstring: part of the last one + more */
static Datum
gen_text(ColGen *g, const ColSpec *s, void **mem, bool big)
{
	int			keep = g->prevlen == 0 ? 0 : rndn(g->prevlen + 1);
	int			len = keep + (rndn(10) == 0 ? 0 : rnd_len(big) / 4);
	char	   *p;
	char	   *data;

	len = Min(len, 20000);
	for (int i = keep; i < len; i++)
		g->prev[i] = (char) ('a' + rndn(rndn(4) == 0 ? 26 : 3));
	g->prevlen = len;

	if (s->attlen == -2)
	{
		p = malloc(len + 1);
		memcpy(p, g->prev, len);
		p[len] = '\0';
		*mem = p;
		return CStringGetDatum(p);
	}
	if (s->storage != 'p' && len <= (int) (VARATT_SHORT_MAX - VARHDRSZ_SHORT) &&
		rndn(2))
	{
		p = malloc(len + VARHDRSZ_SHORT);
		SET_VARSIZE_SHORT(p, len + VARHDRSZ_SHORT);
		data = p + VARHDRSZ_SHORT;
	}
	else if (s->storage != 'p' && rndn(40) == 0)
	{
		/* a compressed-shaped value in the middle forces plain */
		int			clen = Max(len, (int) (VARHDRSZ_COMPRESSED - VARHDRSZ));

		p = malloc(clen + VARHDRSZ);
		SET_VARSIZE_COMPRESSED(p, clen + VARHDRSZ);
		fill_bytes(p + VARHDRSZ, clen);
		*mem = p;
		return PointerGetDatum(p);
	}
	else
	{
		p = malloc(len + VARHDRSZ);
		SET_VARSIZE(p, len + VARHDRSZ);
		data = p + VARHDRSZ;
	}
	memcpy(data, g->prev, len);
	*mem = p;
	return PointerGetDatum(p);
}

/*
 * A numeric Datum of value u / 10^dscale in the short on-disk format,
 * made from its decimal text (independently of the codec's arithmetic).
 */
static Datum
make_numeric(int64 u, int dscale, bool pack, void **mem)
{
	uint64		a = u < 0 ? (uint64) 0 - (uint64) u : (uint64) u;
	char		txt[48];
	int			len,
				ilen,
				igroups,
				fgroups = (dscale + 3) / 4;
	int16		d[16];
	int			nd = 0,
				first = 0,
				last,
				weight;
	uint16		header;
	char	   *p;
	Size		dlen;

	snprintf(txt, sizeof(txt), "%0*llu", dscale + 1, (unsigned long long) a);
	len = (int) strlen(txt);
	ilen = len - dscale;
	igroups = (ilen + 3) / 4;
	for (int g = 0; g < igroups; g++)
	{
		int			end = ilen - 4 * (igroups - 1 - g);
		int			v = 0;

		for (int i = Max(end - 4, 0); i < end; i++)
			v = v * 10 + (txt[i] - '0');
		d[nd++] = (int16) v;
	}
	for (int g = 0; g < fgroups; g++)
	{
		int			v = 0;

		for (int k = 0; k < 4; k++)
		{
			int			i = ilen + 4 * g + k;

			v = v * 10 + (i < len ? txt[i] - '0' : 0);
		}
		d[nd++] = (int16) v;
	}
	weight = igroups - 1;
	while (first < nd && d[first] == 0)
	{
		first++;
		weight--;
	}
	last = nd;
	while (last > first && d[last - 1] == 0)
		last--;
	if (first == last)
	{
		weight = 0;
		u = 0;
	}
	header = 0x8000 | (u < 0 ? 0x2000 : 0) | (uint16) ((dscale & 0x3F) << 7) |
		(weight < 0 ? 0x40 : 0) | (uint16) (weight & 0x3F);
	dlen = 2 + 2 * (last - first);
	if (pack)
	{
		p = malloc(dlen + VARHDRSZ_SHORT);
		SET_VARSIZE_SHORT(p, dlen + VARHDRSZ_SHORT);
		memcpy(p + VARHDRSZ_SHORT, &header, 2);
		memcpy(p + VARHDRSZ_SHORT + 2, d + first, dlen - 2);
	}
	else
	{
		p = malloc(dlen + VARHDRSZ);
		SET_VARSIZE(p, dlen + VARHDRSZ);
		memcpy(p + VARHDRSZ, &header, 2);
		memcpy(p + VARHDRSZ + 2, d + first, dlen - 2);
	}
	*mem = p;
	return PointerGetDatum(p);
}

/*
 * A short numeric that is not in canonical form (a leading or trailing
 * zero digit, a signed or weighted zero, a digit out of range): the codec
 * must not take it for a number it can rebuild.
 */
static Datum
make_odd_numeric(int64 u, int dscale, bool pack, void **mem)
{
	void	   *m;
	Datum		d = make_numeric(u, dscale, false, &m);
	char	   *src = (char *) m;
	Size		dlen = VARSIZE(src) - VARHDRSZ;
	char		buf[64];
	uint16		header;
	int16		digit = 0;
	char	   *p;

	memcpy(buf, src + VARHDRSZ, dlen);
	free(m);
	(void) d;
	memcpy(&header, buf, 2);
	switch (rndn(4))
	{
		case 0:					/* trailing zero digit */
			memcpy(buf + dlen, &digit, 2);
			dlen += 2;
			break;
		case 1:					/* leading zero digit, weight one up */
			memmove(buf + 4, buf + 2, dlen - 2);
			memcpy(buf + 2, &digit, 2);
			dlen += 2;
			header = (header & ~0x7F) | (((header & 0x7F) + 1) & 0x7F);
			memcpy(buf, &header, 2);
			break;
		case 2:					/* sign or weight on whatever it is */
			header ^= rndn(2) ? 0x2000 : 0x0001;
			memcpy(buf, &header, 2);
			break;
		default:				/* a digit out of range */
			digit = (int16) (rndn(2) ? 10000 + rndn(20000) : -1 - rndn(100));
			memcpy(buf + dlen, &digit, 2);
			dlen += 2;
			break;
	}
	if (pack && dlen <= VARATT_SHORT_MAX - VARHDRSZ_SHORT)
	{
		p = malloc(dlen + VARHDRSZ_SHORT);
		SET_VARSIZE_SHORT(p, dlen + VARHDRSZ_SHORT);
		memcpy(p + VARHDRSZ_SHORT, buf, dlen);
	}
	else
	{
		p = malloc(dlen + VARHDRSZ);
		SET_VARSIZE(p, dlen + VARHDRSZ);
		memcpy(p + VARHDRSZ, buf, dlen);
	}
	*mem = p;
	return PointerGetDatum(p);
}

/* an integer Datum of attlen bytes from a 64-bit value */
static Datum
int_datum(int attlen, uint64 v)
{
	switch (attlen)
	{
		case 1:
			return CharGetDatum((char) v);
		case 2:
			return Int16GetDatum((int16) v);
		case 4:
			return Int32GetDatum((int32) v);
		default:
			return Int64GetDatum((int64) v);
	}
}

/*
 * Make the next value of a column; *mem gets what to free (pool values
 * are freed by gen_free).
 */
static Datum
gen_value(ColGen *g, const ColSpec *s, void **mem, bool big)
{
	*mem = NULL;
	if (s->typid == NUMERICOID && g->mode != GEN_FEW)
	{
		ColSpec		i8 = {8, true, 'd', 'p', InvalidOid};
		void	   *unused;
		int64		u;
		int			ds = g->dscale;

		/* now and then something that is not a short numeric */
		if (g->mode == GEN_RANDOM && rndn(20) == 0)
			return make_value(s, mem, big);
		if (g->mode == GEN_RANDOM)
			u = (int64) (rndn(3) == 0 ? rnd() : rnd() % 100000);
		else
			u = DatumGetInt64(gen_value(g, &i8, &unused, big));
		if (rndn(50) == 0)
			ds = rndn(20);		/* another display scale in the column */
		if (rndn(30) == 0)
			return make_odd_numeric(u, ds, s->storage != 'p', mem);
		return make_numeric(u, ds, s->storage != 'p' && rndn(4) != 0, mem);
	}
	switch (g->mode)
	{
		case GEN_SORTED:
			if (!s->byval && s->attlen > 0)
				return make_value(s, mem, big);
			if (!s->byval)
				return gen_text(g, s, mem, big);
			/* ascending, wrapping at the type's end now and then */
			g->base = (int64) ((uint64) g->base +
							   (g->range == 0 ? 0 : rnd() % (g->range + 1)));
			if (rndn(500) == 0)
				g->base = (int64) ((uint64) g->base - rnd() % 100);
			return int_datum(s->attlen, (uint64) g->base);
		case GEN_FEW:
			return g->pool[rndn(g->npool)];
		case GEN_NARROW:
			return int_datum(s->attlen, (uint64) g->base + rnd() % g->range);
		case GEN_EXTREME:
			{
				static const uint64 ends[] = {
					UINT64CONST(0x8000000000000000), UINT64CONST(0x7FFFFFFFFFFFFFFF),
					0, ~UINT64CONST(0), 0x7FFF, 0x8000, 0x7FFFFFFF, 0x80000000};
				uint64		v = ends[rndn(lengthof(ends))];

				/* as the type's own extremes for int2 / int4 */
				if (s->attlen == 2 && v > 0xFFFF && v < ~UINT64CONST(0))
					v = rndn(2) ? 0x7FFF : 0x8000;
				else if (s->attlen == 4 && v > 0xFFFFFFFF && v < ~UINT64CONST(0))
					v = rndn(2) ? 0x7FFFFFFF : 0x80000000;
				return int_datum(s->attlen, v);
			}
		default:
			return g->clean ? make_clean(s, mem) : make_value(s, mem, big);
	}
}

/* ----------------------------------------------------------------
 * Checks.
 * ----------------------------------------------------------------
 */
static long nchecks_failed = 0;

#define CHECK(cond, ...) \
	do { \
		if (!(cond)) \
		{ \
			fprintf(stderr, "CHECK failed at line %d: %s: ", __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__); \
			fputc('\n', stderr); \
			if (++nchecks_failed > 20) \
				exit(1); \
		} \
	} while (0)

static int
align_of(char align)
{
	switch (align)
	{
		case 'd':
			return ALIGNOF_DOUBLE;
		case 'i':
			return ALIGNOF_INT;
		case 's':
			return ALIGNOF_SHORT;
		default:
			return 1;
	}
}

/* the raw block being decoded: packed values may point into it */
static const char *cur_raw = NULL;
static Size cur_rawlen = 0;

/* is [p, p + len) inside the arena, or inside the raw block? */
static bool
in_arena(const CompSpillDecodedBlock *blk, const char *p, Size len)
{
	if (p >= blk->arena && len <= blk->arena_cap &&
		(Size) (p - blk->arena) <= blk->arena_cap - len)
		return true;
	return cur_raw != NULL && p >= cur_raw && len <= cur_rawlen &&
		(Size) (p - cur_raw) <= cur_rawlen - len;
}

/*
 * Compare the decoded current row of blk with row r of the originals.
 */
static void
compare_row(TupleDesc desc, const Datum *ov, const bool *on,
			const CompSpillDecodedBlock *blk, int r)
{
	for (int a = 0; a < desc->natts; a++)
	{
		Form_pg_attribute attr = TupleDescAttr(desc, a);
		Datum		o = ov[a];
		Datum		n = blk->values[a];
		const char *np = DatumGetPointer(n);

		CHECK(on[a] == blk->isnull[a], "row %d att %d", r, a);
		if (on[a] || blk->isnull[a])
			continue;

		if (attr->attbyval)
		{
			bool		same;

			switch (attr->attlen)
			{
				case 1:
					same = DatumGetChar(o) == DatumGetChar(n);
					break;
				case 2:
					same = DatumGetInt16(o) == DatumGetInt16(n);
					break;
				case 4:
					same = DatumGetInt32(o) == DatumGetInt32(n);
					break;
				default:
					same = DatumGetInt64(o) == DatumGetInt64(n);
					break;
			}
			CHECK(same, "row %d att %d: by-value datum differs", r, a);
			continue;
		}

		if (attr->attlen > 0)
		{
			CHECK(in_arena(blk, np, attr->attlen), "row %d att %d", r, a);
			CHECK(memcmp(DatumGetPointer(o), np, attr->attlen) == 0,
				  "row %d att %d: fixed-width bytes differ", r, a);
			CHECK((uintptr_t) np % align_of(attr->attalign) == 0,
				  "row %d att %d: misaligned", r, a);
		}
		else if (attr->attlen == -2)
		{
			Size		len = strlen(DatumGetCString(o));

			CHECK(in_arena(blk, np, len + 1), "row %d att %d", r, a);
			CHECK(memcmp(DatumGetCString(o), np, len + 1) == 0,
				  "row %d att %d: cstring differs", r, a);
		}
		else
		{
			struct varlena *ovl = (struct varlena *) DatumGetPointer(o);
			struct varlena *nvl = (struct varlena *) np;
			int			valign = attr->attalign == 'd' ? ALIGNOF_DOUBLE : ALIGNOF_INT;

			if (VARATT_IS_EXTERNAL_INDIRECT(ovl))
			{
				varatt_indirect ind;

				VARATT_EXTERNAL_GET_POINTER(ind, ovl);
				ovl = ind.pointer;
			}
			CHECK(in_arena(blk, np, VARSIZE_ANY(nvl)), "row %d att %d", r, a);
			if (VARATT_IS_EXTERNAL_ONDISK(ovl) || VARATT_IS_COMPRESSED(ovl))
			{
				/* stored whole, header included */
				CHECK(VARSIZE_ANY(ovl) == VARSIZE_ANY(nvl) &&
					  memcmp(ovl, nvl, VARSIZE_ANY(ovl)) == 0,
					  "row %d att %d: raw varlena differs", r, a);
				if (VARATT_IS_4B(nvl))
					CHECK((uintptr_t) nvl % valign == 0,
						  "row %d att %d: misaligned", r, a);
			}
			else
			{
				Size		len = VARSIZE_ANY_EXHDR(ovl);

				CHECK(!VARATT_IS_EXTENDED(nvl) || VARATT_IS_SHORT(nvl),
					  "row %d att %d: unexpected header", r, a);
				CHECK(VARSIZE_ANY_EXHDR(nvl) == len &&
					  memcmp(VARDATA_ANY(ovl), VARDATA_ANY(nvl), len) == 0,
					  "row %d att %d: varlena payload differs", r, a);
				if (attr->attstorage == 'p' ||
					len > VARATT_SHORT_MAX - VARHDRSZ_SHORT)
				{
					CHECK(VARATT_IS_4B_U(nvl),
						  "row %d att %d: expected 4-byte header", r, a);
					CHECK((uintptr_t) nvl % valign == 0,
						  "row %d att %d: misaligned", r, a);
				}
				else
					CHECK(VARATT_IS_SHORT(nvl),
						  "row %d att %d: expected 1-byte header", r, a);
			}
		}
	}
}

/*
 * Read every row of an accepted block, touching every byte of every
 * by-reference value so that ASan checks it; return the rows read.
 */
static int
drain_block(TupleDesc desc, CompSpillDecodedBlock *blk)
{
	int			rows = 0;
	volatile char sink = 0;

	while (CompSpillDecodeNextRow(blk))
	{
		rows++;
		for (int a = 0; a < desc->natts; a++)
		{
			Form_pg_attribute attr = TupleDescAttr(desc, a);
			const char *p = DatumGetPointer(blk->values[a]);
			Size		len;

			if (blk->isnull[a] || attr->attbyval)
				continue;
			if (attr->attlen > 0)
				len = attr->attlen;
			else if (attr->attlen == -2)
				len = strlen(p) + 1;
			else
				len = VARSIZE_ANY(p);
			CHECK(in_arena(blk, p, len), "row %d att %d outside the arena",
				  rows - 1, a);
			for (Size i = 0; i < len; i++)
				sink ^= p[i];
		}
	}
	(void) sink;
	CHECK(!CompSpillDecodeNextRow(blk), "a row after the end");
	return rows;
}

/* ----------------------------------------------------------------
 * Mutations.
 * ----------------------------------------------------------------
 */

/* Length streams of varlena / cstring columns, found by walking headers */
typedef struct StreamRef
{
	Size		off;
	Size		len;
} StreamRef;

static int
find_length_streams(const char *b, Size len, StreamRef *out)
{
	Size		pos = 8;
	uint16		natts;
	int			n = 0;

	if (len < 8)
		return 0;
	memcpy(&natts, b + 2, sizeof(natts));
	for (int a = 0; a < natts && pos + COLHDR <= len; a++)
	{
		uint8		kind = (uint8) b[pos];
		uint64		bl,
					ll,
					vl;

		memcpy(&bl, b + pos + 16, 8);
		memcpy(&ll, b + pos + 24, 8);
		memcpy(&vl, b + pos + 32, 8);
		pos += COLHDR;
		if (bl > len - pos || ll > len - pos - bl)
			break;
		if ((kind == 3 || kind == 4) && ll > 0 && n < MAX_ATTS)
		{
			out[n].off = pos + bl;
			out[n].len = ll;
			n++;
		}
		if (vl > len - pos - bl - ll)
			break;
		pos += bl + ll + vl;
	}
	return n;
}

/* how many round-trip columns came out in each encoding */
static long enc_count[8];

static void
count_encodings(const char *b, Size len)
{
	Size		pos = 8;
	uint16		natts;

	memcpy(&natts, b + 2, sizeof(natts));
	for (int a = 0; a < natts && pos + COLHDR <= len; a++)
	{
		uint64		bl,
					ll,
					vl;

		enc_count[(uint8) b[pos + 8] & 7]++;
		memcpy(&bl, b + pos + 16, 8);
		memcpy(&ll, b + pos + 24, 8);
		memcpy(&vl, b + pos + 32, 8);
		pos += COLHDR + bl + ll + vl;
	}
}

/* corrupt the varints of one length stream */
static void
mutate_varints(char *b, Size len)
{
	StreamRef	streams[MAX_ATTS];
	int			n = find_length_streams(b, len, streams);
	StreamRef  *s;
	Size		i;

	if (n == 0)
	{
		if (len > 0)
			b[rnd() % len] |= (char) 0x80;
		return;
	}
	s = &streams[rndn(n)];
	i = s->off + rnd() % s->len;
	switch (rndn(7))
	{
		case 0:					/* set a continuation bit */
			b[i] |= (char) 0x80;
			break;
		case 1:					/* clear one */
			b[i] &= 0x7F;
			break;
		case 2:					/* all continuation to the end */
			for (Size j = i; j < s->off + s->len; j++)
				b[j] |= (char) 0x80;
			break;
		case 3:					/* flip the raw flag */
			b[i] ^= 0x01;
			break;
		case 4:					/* overlong 5-byte varint, if room */
			if (s->off + s->len - i >= 5)
			{
				for (int j = 0; j < 4; j++)
					b[i + j] = (char) (0x80 | rndn(128));
				b[i + 4] = (char) rndn(256);
			}
			break;
		case 5:					/* move length from one entry to another */
			if (s->len >= 2)
			{
				Size		j = s->off + rnd() % s->len;
				int			d = 1 + rndn(8);

				if ((b[i] & 0x7F) >= (d << 1) && !(b[i] & 0x80) &&
					!(b[j] & 0x80) && (b[j] & 0x7F) + (d << 1) < 0x80)
				{
					b[i] -= (char) (d << 1);
					b[j] += (char) (d << 1);
				}
			}
			break;
		default:				/* random byte */
			b[i] = (char) rnd();
			break;
	}
}

/* overwrite a field of the block header or of a column header */
static void
mutate_header(char *b, Size len)
{
	Size		pos;
	static const int fields[] = {0, 1, 2, 4, 8, 9, 10, 12, 16, 24, 32};
	int			f;

	if (len < 8)
		return;
	if (rndn(4) == 0 || len < 8 + COLHDR)
		pos = rndn(8) & ~1;
	else
	{
		/* the first column header, or one found by walking */
		pos = 8;
		for (int skip = rndn(4); skip > 0 && pos + COLHDR <= len; skip--)
		{
			uint64		bl,
						ll,
						vl;

			memcpy(&bl, b + pos + 16, 8);
			memcpy(&ll, b + pos + 24, 8);
			memcpy(&vl, b + pos + 32, 8);
			if (bl + ll + vl > len)
				break;
			if (pos + COLHDR + bl + ll + vl + COLHDR > len)
				break;
			pos += COLHDR + bl + ll + vl;
		}
		f = fields[rndn(lengthof(fields))];
		pos += f;
		/* one-byte fields: encoding, bit width, kind, flags */
		if ((f == 8 || f == 9 || f == 0 || f == 1) && pos < len && rndn(2))
		{
			b[pos] = rndn(2) ? (char) rndn(8) : (char) (b[pos] + rndn(3) - 1);
			return;
		}
	}
	if (pos + 8 <= len && rndn(2) == 0)
	{
		uint64		v;
		uint64		old;

		memcpy(&old, b + pos, 8);
		switch (rndn(4))
		{
			case 0:
				v = old + rndn(17) - 8;
				break;
			case 1:
				v = rnd() % 4096;
				break;
			case 2:
				v = ~(uint64) 0 - rnd() % 16;
				break;
			default:
				v = rnd();
				break;
		}
		memcpy(b + pos, &v, 8);
	}
	else if (pos + 4 <= len)
	{
		uint32		v = rndn(2) ? (uint32) rnd() : (uint32) rndn(300);

		memcpy(b + pos, &v, 4);
	}
	else if (pos < len)
		b[pos] = (char) rnd();
}

static void
mutate_bytes(char *b, Size len)
{
	int			n = 1 + rndn(4);

	for (int i = 0; i < n && len > 0; i++)
	{
		Size		pos = rnd() % len;

		switch (rndn(4))
		{
			case 0:
				b[pos] ^= (char) (1 << rndn(8));
				break;
			case 1:
				b[pos] = (char) rnd();
				break;
			case 2:
				b[pos] = (char) (rndn(3) == 0 ? 0xFF : 0);
				break;
			default:
				{
					uint32		v = (uint32) rnd();

					if (rndn(2))
						v %= 300;
					if (pos + 4 <= len)
						memcpy(b + pos, &v, 4);
					break;
				}
		}
	}
}

/* ----------------------------------------------------------------
 * Driver.
 * ----------------------------------------------------------------
 */
static long npassed = 0;
static long nfailed = 0;
static long naccepted = 0;
static long nrejected = 0;

/*
 * Decode one block (exact-size buffer) announced as nrows rows; check the
 * contract whichever way it goes.  Return whether it was accepted.
 */
static bool
decode_checked(TupleDesc desc, CompSpillDecodedBlock *blk,
			   const char *buf, Size len, int nrows)
{
	const char *err = NULL;
	long		before = nchecks_failed;
	bool		ok;

	cur_raw = buf;
	cur_rawlen = len;
	ok = CompSpillDecodeBlock(blk, desc, buf, len, nrows, &err);
	if (ok)
	{
		int			rows;

		naccepted++;
		CHECK(err == NULL, "errdetail set on success");
		CHECK(blk->nrows == nrows, "nrows %d, expected %d", blk->nrows, nrows);
		rows = drain_block(desc, blk);
		CHECK(rows == nrows, "read %d rows of %d", rows, nrows);
	}
	else
	{
		nrejected++;
		CHECK(err != NULL && strlen(err) > 5 && err[strlen(err) - 1] == '.',
			  "bad errdetail \"%s\"", err ? err : "(null)");
		CHECK(!CompSpillDecodeNextRow(blk), "a row from a rejected block");
		free((void *) err);
	}
	if (nchecks_failed == before)
		npassed++;
	else
		nfailed++;
	return ok;
}

static void
run_iteration(int mutations)
{
	int			natts = rndn(8) == 0 ? 0 : 1 + rndn(MAX_ATTS);
	int			kinds[MAX_ATTS];
	TupleDesc	desc;
	CompSpillEncoder *enc;
	CompSpillDecodedBlock blk;
	Size		target = 64 + rnd() % (rndn(4) == 0 ? 100000 : 4000);
	int			nullpct = rndn(4) == 0 ? 0 : rndn(5) == 0 ? 100 : rndn(60);
	bool		big = rndn(6) == 0;
	int			nblocks = 1 + rndn(3);

	for (int a = 0; a < natts; a++)
		kinds[a] = rndn(NSPECS);
	desc = make_desc(natts, kinds);
	enc = CompSpillEncoderCreate(desc, target);
	CompSpillDecodedBlockInit(&blk, desc);

	for (int b = 0; b < nblocks; b++)
	{
		int			cap = rndn(4) == 0 ? 8192 : 2048;
		int			nrows = 0;
		int			stride = Max(natts, 1);
		Datum	   *ov = malloc(sizeof(Datum) * cap * stride);
		bool	   *on = malloc(sizeof(bool) * cap * stride);
		void	  **mem = calloc((size_t) cap * stride, sizeof(void *));
		char	   *raw;
		Size		rawlen;
		const char *err = NULL;
		long		before;
		ColGen	   *gens = malloc(sizeof(ColGen) * Max(natts, 1));

		for (int a = 0; a < natts; a++)
			gen_init(&gens[a], &specs[kinds[a]], big);

		/* fill a block, sometimes stopping short of full */
		do
		{
			for (int a = 0; a < natts; a++)
			{
				int			i = nrows * stride + a;

				on[i] = rndn(100) < nullpct;
				ov[i] = on[i] ? (Datum) 0 :
					gen_value(&gens[a], &specs[kinds[a]], &mem[i], big);
			}
			CompSpillEncoderAdd(enc, ov + nrows * stride, on + nrows * stride);
			nrows++;
		} while (!CompSpillEncoderIsFull(enc) && nrows < cap &&
				 !(rndn(200) == 0));

		if (CompSpillEncoderRows(enc) != nrows)
		{
			fprintf(stderr, "encoder counts %d rows, added %d\n",
					CompSpillEncoderRows(enc), nrows);
			exit(1);
		}
		rawlen = CompSpillEncoderSize(enc);
		raw = malloc(rawlen);
		CompSpillEncoderFinish(enc, raw);
		if (CompSpillEncoderRows(enc) != 0 ||
			CompSpillEncoderSize(enc) != 8 + COLHDR * (Size) natts)
		{
			fprintf(stderr, "encoder not reset by Finish\n");
			exit(1);
		}

		/* exact round trip */
		count_encodings(raw, rawlen);
		before = nchecks_failed;
		cur_raw = raw;
		cur_rawlen = rawlen;
		if (!CompSpillDecodeBlock(&blk, desc, raw, rawlen, nrows, &err))
		{
			fprintf(stderr, "round trip rejected: %s (natts %d, nrows %d)\n",
					err, natts, nrows);
			nchecks_failed++;
		}
		else
		{
			int			r;

			for (r = 0; r < nrows; r++)
			{
				if (!CompSpillDecodeNextRow(&blk))
				{
					CHECK(false, "only %d rows of %d", r, nrows);
					break;
				}
				compare_row(desc, ov + r * stride, on + r * stride, &blk, r);
			}
			CHECK(!CompSpillDecodeNextRow(&blk), "a row after the end");
		}
		if (nchecks_failed == before)
			npassed++;
		else
			nfailed++;

		/* mutated copies, each in an exact-size buffer */
		for (int m = 0; m < mutations; m++)
		{
			Size		flen = rawlen;
			int			fr = nrows;
			char	   *fb;
			int			mode = rndn(12);

			if (mode == 0 && rawlen > 0)
				flen = rnd() % rawlen;	/* truncation */
			else if (mode == 1)
				flen = rawlen + 1 + rndn(64);	/* extension */
			fb = malloc(Max(flen, 1));
			memcpy(fb, raw, Min(flen, rawlen));
			for (Size i = rawlen; i < flen; i++)
				fb[i] = rndn(2) ? 0 : (char) rnd();

			switch (mode)
			{
				case 0:
				case 1:
					break;
				case 2:
				case 3:
				case 4:
					mutate_bytes(fb, flen);
					break;
				case 5:
				case 6:
					mutate_varints(fb, flen);
					break;
				case 7:
				case 8:
					mutate_header(fb, flen);
					break;
				case 9:			/* wrong row count passed in */
					fr = rndn(4) == 0 ? -1 - rndn(3) : Max(0, nrows + rndn(5) - 2);
					break;
				case 10:		/* wrong row count, header agreeing */
					{
						uint32		hr = (uint32) Max(0, nrows + rndn(17) - 8);

						if (flen >= 8)
							memcpy(fb + 4, &hr, 4);
						fr = (int) hr;
						break;
					}
				default:		/* several of the above */
					mutate_varints(fb, flen);
					mutate_bytes(fb, flen);
					if (rndn(2))
						mutate_header(fb, flen);
					break;
			}
			decode_checked(desc, &blk, fb, flen, fr);
			free(fb);
		}

		/* the block must still decode after all that */
		if (mutations > 0)
		{
			before = nchecks_failed;
			cur_raw = raw;
			cur_rawlen = rawlen;
			if (!CompSpillDecodeBlock(&blk, desc, raw, rawlen, nrows, &err))
			{
				fprintf(stderr, "re-decode rejected: %s\n", err);
				nchecks_failed++;
			}
			else
			{
				for (int r = 0; r < nrows && CompSpillDecodeNextRow(&blk); r++)
					compare_row(desc, ov + r * stride, on + r * stride, &blk, r);
			}
			if (nchecks_failed == before)
				npassed++;
			else
				nfailed++;
		}

		for (int i = 0; i < nrows * stride; i++)
			free(mem[i]);
		for (int a = 0; a < natts; a++)
			gen_free(&gens[a]);
		free(gens);
		free(mem);
		free(ov);
		free(on);
		free(raw);
	}

	pgstubs_free_all();
	free(desc);
}

int
main(int argc, char **argv)
{
	long		iterations = argc > 1 ? atol(argv[1]) : 3000;
	int			mutations = argc > 2 ? atoi(argv[2]) : 200;
	uint64		seed = argc > 3 ? strtoull(argv[3], NULL, 0) : 1;
	time_t		start = time(NULL);

	rng_state ^= seed * UINT64CONST(0x9E3779B97F4A7C15);
	if (rng_state == 0)
		rng_state = 1;

	for (long it = 0; it < iterations; it++)
	{
		run_iteration(mutations);
		if (nchecks_failed > 20)
			break;
	}

	printf("blockcodec fuzz: seed %llu, %ld iterations, %ld mutated blocks accepted, %ld rejected, %lds\n",
		   (unsigned long long) seed, iterations, naccepted, nrejected,
		   (long) (time(NULL) - start));
	printf("blockcodec fuzz: columns plain %ld, packed %ld, front %ld, dict %ld, for %ld, delta %ld, numeric %ld\n",
		   enc_count[0], enc_count[1], enc_count[2], enc_count[3],
		   enc_count[4], enc_count[5], enc_count[6]);
	printf("blockcodec fuzz: %ld passed, %ld failed\n", npassed, nfailed);
	return nfailed == 0 ? 0 : 1;
}
