/*-------------------------------------------------------------------------
 *
 * blockcodec_fuzz.c
 *	  Standalone round-trip and mutation fuzzer for the block codec and
 *	  its encodings, for row frames, and for encrypted frames carrying
 *	  either.
 *
 * The block decoder must be a pure, crash-free function of its input
 * bytes: CompSpillDecodeBlock either rejects a block with a sentence in
 * errdetail, or accepts it, after which every CompSpillDecodeNextRow call
 * stays within the block, its fixed-width scratch and its one-row arena,
 * and exactly nrows rows come out.  So must the row frame check
 * (CompSpillRowFrameCheck): it rejects a frame with a sentence, or every
 * row its cursor gives out lies inside the frame with a header that fits
 * the descriptor.  This program links src/codec/blockcodec.c, the
 * encodings of src/codec/enc, src/codec/rowframe.c, src/codec/compress.c
 * and src/codec/cipher.c outside the server, with the few
 * backend functions they call stubbed (test/common/pgstubs.c), and is
 * meant to be built with AddressSanitizer and UBSan so that any
 * out-of-bounds access is caught where it happens.
 *
 * Each iteration makes a random tuple descriptor and encodes one to three
 * blocks of random rows.  Then, in block mode, it checks that decoding
 * gives back every value exactly, and decodes many mutated copies of each
 * block (bit flips, byte overwrites, header fields, truncation, extension,
 * a wrong row count, corrupted length varints).  Every buffer handed to
 * the decoder is an exact-size allocation, so that ASan sees even a
 * one-byte overread.
 *
 * In row mode the same rows, formed as minimal tuples, are written as a
 * row frame (CompSpillRowWriterAdd), which must read back tuple for tuple;
 * then mutated copies (truncated, extended, bytes, a row's length word or
 * header fields, a wrong row count) must be rejected or read in bounds.
 *
 * In encrypted mode the blocks of an iteration (in half the iterations
 * their row frames) are the frames of one encrypted run, written as
 * spill/runwriter.c writes them (compressed, then
 * CompSpillEncrypt with the frame header as additional data and the
 * (run serial, frame index) nonce); each must decrypt, decompress and
 * decode to its rows, and every copy with its ciphertext, tag or
 * authenticated header altered, read as another frame or replayed under
 * another run's serial must be refused by CompSpillDecrypt, so that it
 * never reaches the decoder.
 *
 * Usage: blockcodec_fuzz [iterations [mutations-per-block [seed [mode]]]]
 * where mode is block, rows, encrypted or all (the default; both is its
 * old name).
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

#include "base/spillstats.h"
#include "codec/blockcodec.h"
#include "codec/cipher.h"
#include "codec/compress.h"
#include "codec/rowframe.h"
#include "pgstubs.h"
#include "spill/frame.h"

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
	TupleDesc	desc = calloc(1, CompSpillTupleDescSize(natts + 1));

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
			g->range = 0;
			if (rndn(4) != 0)
			{
				/* one draw after the other: reproducible whatever the build */
				uint64		span = rndn(3) == 0 ? 1000 : 3;

				g->range = 1 + rnd() % span;
			}
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
			b[pos] = rndn(2) ? (char) rndn(9) : (char) (b[pos] + rndn(3) - 1);
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
 * Tallies and the checks shared by the modes.
 * ----------------------------------------------------------------
 */
static long npassed = 0;
static long nfailed = 0;

/* block mode */
static long nblock_trips = 0;
static long naccepted = 0;
static long nrejected = 0;

/* encrypted mode */
static long nframe_trips = 0;
static long nframes_stored[COMPSPILL_NUM_STORED_CODECS];
static long nframes_dict;		/* zstd frames against the dictionary */
static long nframe_mutated = 0;
static long nframe_false = 0;	/* CompSpillDecrypt returned false */
static long nframe_error = 0;	/* CompSpillDecrypt raised an ERROR */
static long nframe_control = 0; /* unauthenticated bytes only: accepted */
static long nframe_forged = 0;	/* accepted though altered: failures */
static long nframe_rows = 0;	/* frames written that are row frames */

/* Count one check as passed or failed: did it add to nchecks_failed? */
static void
tally(long failed_before)
{
	if (nchecks_failed == failed_before)
		npassed++;
	else
		nfailed++;
}

/*
 * Decode raw (an exact-size buffer) as nrows rows and check that each row r
 * is row r of the originals ov / on (stride values a row); what names the
 * check in messages.
 */
static void
check_rows(TupleDesc desc, CompSpillDecodedBlock *blk, const char *raw,
		   Size rawlen, int nrows, const Datum *ov, const bool *on,
		   int stride, const char *what)
{
	const char *err = NULL;
	int			r;

	cur_raw = raw;
	cur_rawlen = rawlen;
	if (!CompSpillDecodeBlock(blk, desc, raw, rawlen, nrows, &err))
	{
		CHECK(false, "%s rejected: %s (natts %d, nrows %d)", what, err,
			  desc->natts, nrows);
		free((void *) err);
		return;
	}
	for (r = 0; r < nrows; r++)
	{
		if (!CompSpillDecodeNextRow(blk))
		{
			CHECK(false, "%s: only %d rows of %d", what, r, nrows);
			return;
		}
		compare_row(desc, ov + r * stride, on + r * stride, blk, r);
	}
	CHECK(!CompSpillDecodeNextRow(blk), "%s: a row after the end", what);
}

/* ----------------------------------------------------------------
 * Block mode: the decoder on mutated blocks.
 * ----------------------------------------------------------------
 */

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
	tally(before);
	return ok;
}

/*
 * Decode mutated copies of block raw (nrows rows), each in an exact-size
 * buffer.
 */
static void
fuzz_block(TupleDesc desc, CompSpillDecodedBlock *blk, const char *raw,
		   Size rawlen, int nrows, int mutations)
{
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
			case 9:				/* wrong row count passed in */
				fr = rndn(4) == 0 ? -1 - rndn(3) : Max(0, nrows + rndn(5) - 2);
				break;
			case 10:			/* wrong row count, header agreeing */
				{
					uint32		hr = (uint32) Max(0, nrows + rndn(17) - 8);

					if (flen >= 8)
						memcpy(fb + 4, &hr, 4);
					fr = (int) hr;
					break;
				}
			default:			/* several of the above */
				mutate_varints(fb, flen);
				mutate_bytes(fb, flen);
				if (rndn(2))
					mutate_header(fb, flen);
				break;
		}
		decode_checked(desc, blk, fb, flen, fr);
		free(fb);
	}
}

/* ----------------------------------------------------------------
 * Row mode: row frames (codec/rowframe.c) on mutated payloads.
 *
 * The rows of each block are also formed as minimal tuples and written
 * with CompSpillRowWriterAdd into a row frame.  CompSpillRowFrameCheck
 * must accept it and the cursor give back every tuple byte for byte;
 * then every mutated copy (truncated, extended, bytes changed, a row's
 * length word or header fields changed, a wrong row count) must either
 * be rejected with an errdetail sentence, after which the cursor gives
 * no row, or be accepted, after which the cursor must give exactly
 * nrows tuples, each copied from inside the payload (an exact-size
 * buffer, so that ASan sees any overread) and each with a header whose
 * attribute count, null bitmap and data offset fit the descriptor and
 * the tuple, which is what heap_deform_tuple relies on.  The attribute
 * bytes themselves are not checked by rowframe.c (the frame's CRC or tag
 * guards them; see its banner), so they are not checked here either.
 * ----------------------------------------------------------------
 */

/* row mode */
static long nrow_trips = 0;
static long nrow_accepted = 0;
static long nrow_rejected = 0;

/*
 * Place the value v of attribute attr at offset off of a tuple being
 * formed, aligned as its type says (a varlena with a 1-byte header or an
 * external pointer unaligned); write it when base is not NULL.  Return
 * the offset just past it.  An indirect pointer is replaced by the value
 * it points to: its bytes are an address, which would make the frame
 * differ from one build of the fuzzer to the next.
 */
static Size
row_place(Form_pg_attribute attr, Datum v, Size off, char *base)
{
	Size		len;

	if (attr->attlen == -1 && VARATT_IS_EXTERNAL_INDIRECT(DatumGetPointer(v)))
	{
		varatt_indirect ind;

		VARATT_EXTERNAL_GET_POINTER(ind, DatumGetPointer(v));
		v = PointerGetDatum(ind.pointer);
	}
	if (attr->attlen == -1 && VARATT_IS_1B(DatumGetPointer(v)))
		len = VARSIZE_ANY(DatumGetPointer(v));
	else
	{
		off = TYPEALIGN(align_of(attr->attalign), off);
		if (attr->attlen > 0)
			len = attr->attlen;
		else if (attr->attlen == -2)
			len = strlen(DatumGetCString(v)) + 1;
		else
			len = VARSIZE_ANY(DatumGetPointer(v));
	}
	if (base != NULL)
	{
		if (attr->attbyval)
			store_att_byval(base + off, v, attr->attlen);
		else
			memcpy(base + off, DatumGetPointer(v), len);
	}
	return off + len;
}

/*
 * Form one row (natts values ov, nulls on) as a minimal tuple in a new
 * zeroed buffer: the null bitmap when a value is null, the data from the
 * MAXALIGNed t_hoff on.
 */
static MinimalTuple
form_row(TupleDesc desc, const Datum *ov, const bool *on)
{
	bool		hasnull = false;
	Size		hdr = SizeofMinimalTupleHeader;
	Size		len;
	MinimalTuple tup;

	for (int a = 0; a < desc->natts; a++)
		hasnull |= on[a];
	if (hasnull)
		hdr += BITMAPLEN(desc->natts);
	hdr = MAXALIGN(hdr);
	len = hdr;
	for (int a = 0; a < desc->natts; a++)
		if (!on[a])
			len = row_place(TupleDescAttr(desc, a), ov[a], len, NULL);

	tup = calloc(1, len);
	tup->t_len = (uint32) len;
	tup->t_infomask2 = (uint16) desc->natts;
	tup->t_infomask = hasnull ? HEAP_HASNULL : 0;
	tup->t_hoff = (uint8) (hdr + MINIMAL_TUPLE_OFFSET);
	len = hdr;
	for (int a = 0; a < desc->natts; a++)
	{
		if (on[a])
			continue;
		if (hasnull)
			tup->t_bits[a >> 3] |= (bits8) (1 << (a & 7));
		len = row_place(TupleDescAttr(desc, a), ov[a], len, (char *) tup);
	}
	return tup;
}

/*
 * Check the header of a tuple the cursor gave out: what any reader of a
 * minimal tuple of desc relies on.
 */
static void
check_row_header(TupleDesc desc, MinimalTuple tup, int r)
{
	int			natts = tup->t_infomask2 & HEAP_NATTS_MASK;
	Size		data = (Size) tup->t_hoff - MINIMAL_TUPLE_OFFSET;

	CHECK(((uintptr_t) tup) % MAXIMUM_ALIGNOF == 0,
		  "row %d: tuple not MAXALIGNed", r);
	CHECK(natts <= desc->natts, "row %d: %d attributes, descriptor has %d",
		  r, natts, desc->natts);
	CHECK(tup->t_hoff >= MINIMAL_TUPLE_OFFSET &&
		  data >= SizeofMinimalTupleHeader && data <= tup->t_len &&
		  data == MAXALIGN(data),
		  "row %d: t_hoff %u in a tuple of %u bytes", r, tup->t_hoff,
		  tup->t_len);
	CHECK(!(tup->t_infomask & HEAP_HASNULL) ||
		  SizeofMinimalTupleHeader + BITMAPLEN(natts) <= data,
		  "row %d: null bitmap of %d attributes past t_hoff %u", r, natts,
		  tup->t_hoff);
}

/*
 * Check that row frame raw (rawlen bytes, an exact-size buffer) reads back
 * as the nrows tuples tups; what names the check.
 */
static void
check_row_frame(TupleDesc desc, CompSpillRowCursor *rc, const char *raw,
				Size rawlen, int nrows, MinimalTuple *tups, const char *what)
{
	const char *err = NULL;

	if (!CompSpillRowFrameCheck(rc, desc, raw, rawlen, nrows, &err))
	{
		CHECK(false, "%s rejected: %s (natts %d, nrows %d)", what, err,
			  desc->natts, nrows);
		free((void *) err);
		return;
	}
	for (int r = 0; r < nrows; r++)
	{
		MinimalTuple tup = CompSpillRowCursorNext(rc);

		if (tup == NULL)
		{
			CHECK(false, "%s: only %d rows of %d", what, r, nrows);
			return;
		}
		check_row_header(desc, tup, r);
		CHECK(tup->t_len == tups[r]->t_len &&
			  memcmp((char *) tup + MINIMAL_TUPLE_DATA_OFFSET,
					 (char *) tups[r] + MINIMAL_TUPLE_DATA_OFFSET,
					 tups[r]->t_len - MINIMAL_TUPLE_DATA_OFFSET) == 0,
			  "%s: row %d differs (%u bytes, written %u)", what, r,
			  tup->t_len, tups[r]->t_len);
	}
	CHECK(CompSpillRowCursorNext(rc) == NULL, "%s: a row after the end",
		  what);
}

/*
 * Check a possibly corrupt row frame (exact-size buffer) said to hold
 * nrows rows: rejected with a sentence, or every row it gives inside it
 * and well formed.  Return whether it was accepted.
 */
static bool
row_frame_checked(TupleDesc desc, CompSpillRowCursor *rc, const char *buf,
				  Size len, int nrows)
{
	const char *err = NULL;
	long		before = nchecks_failed;
	bool		ok = CompSpillRowFrameCheck(rc, desc, buf, len, nrows, &err);

	if (ok)
	{
		const char *p = buf;
		const char *end = buf + len;
		MinimalTuple tup;
		int			rows = 0;

		nrow_accepted++;
		CHECK(err == NULL, "errdetail set on success");
		while ((tup = CompSpillRowCursorNext(rc)) != NULL && rows <= nrows)
		{
			uint32		body = 0;

			if ((Size) (end - p) >= COMPSPILL_ROW_LENGTH_SIZE)
				memcpy(&body, p, COMPSPILL_ROW_LENGTH_SIZE);
			CHECK((Size) (end - p) >= COMPSPILL_ROW_LENGTH_SIZE &&
				  body <= (Size) (end - p) - COMPSPILL_ROW_LENGTH_SIZE,
				  "row %d runs past the frame", rows);
			if (nchecks_failed != before)
				break;
			CHECK(tup->t_len == body + MINIMAL_TUPLE_DATA_OFFSET &&
				  memcmp((char *) tup + MINIMAL_TUPLE_DATA_OFFSET,
						 p + COMPSPILL_ROW_LENGTH_SIZE, body) == 0,
				  "row %d is not the bytes of the frame", rows);
			check_row_header(desc, tup, rows);
			p += COMPSPILL_ROW_LENGTH_SIZE + body;
			rows++;
		}
		CHECK(rows == nrows, "read %d rows of %d", rows, nrows);
		CHECK(p == end || nchecks_failed != before,
			  "%zu bytes of the frame after its rows", (Size) (end - p));
	}
	else
	{
		nrow_rejected++;
		CHECK(err != NULL && strlen(err) > 5 && err[strlen(err) - 1] == '.',
			  "bad errdetail \"%s\"", err ? err : "(null)");
		CHECK(CompSpillRowCursorNext(rc) == NULL,
			  "a row from a rejected row frame");
		free((void *) err);
	}
	tally(before);
	return ok;
}

/* Change one header field of the row starting at offset off of b */
static void
mutate_row_header(char *b, Size off, int natts)
{
	char	   *body = b + off + COMPSPILL_ROW_LENGTH_SIZE;
	char	   *f2 = body + offsetof(MinimalTupleData, t_infomask2) -
		MINIMAL_TUPLE_DATA_OFFSET;
	char	   *f1 = body + offsetof(MinimalTupleData, t_infomask) -
		MINIMAL_TUPLE_DATA_OFFSET;
	char	   *fh = body + offsetof(MinimalTupleData, t_hoff) -
		MINIMAL_TUPLE_DATA_OFFSET;
	uint16		v;
	uint8		h;

	switch (rndn(3))
	{
		case 0:				/* attribute count */
			memcpy(&v, f2, sizeof(v));
			switch (rndn(3))
			{
				case 0:
					v = (v & ~HEAP_NATTS_MASK) | (uint16) (natts + 1 + rndn(4));
					break;
				case 1:
					v = (v & ~HEAP_NATTS_MASK) | (uint16) rndn(natts + 1);
					break;
				default:
					v = (uint16) rnd();
					break;
			}
			memcpy(f2, &v, sizeof(v));
			break;
		case 1:				/* the has-nulls flag, or anything */
			memcpy(&v, f1, sizeof(v));
			v = rndn(2) ? v ^ HEAP_HASNULL : (uint16) rnd();
			memcpy(f1, &v, sizeof(v));
			break;
		default:				/* t_hoff */
			memcpy(&h, fh, 1);
			switch (rndn(4))
			{
				case 0:
					h += (uint8) (rndn(2) ? 1 + rndn(7) : -1 - rndn(7));
					break;
				case 1:
					h += (uint8) (rndn(2) ? MAXIMUM_ALIGNOF : -MAXIMUM_ALIGNOF);
					break;
				case 2:
					h = (uint8) (MINIMAL_TUPLE_OFFSET + MAXIMUM_ALIGNOF * rndn(4));
					break;
				default:
					h = (uint8) rnd();
					break;
			}
			memcpy(fh, &h, 1);
			break;
	}
}

/* Change the length word of the row starting at offset off of b */
static void
mutate_row_length(char *b, Size off, Size len)
{
	uint32		body;

	memcpy(&body, b + off, sizeof(body));
	switch (rndn(6))
	{
		case 0:
			body = (uint32) rndn(SizeofMinimalTupleHeader -
								 MINIMAL_TUPLE_DATA_OFFSET + 1);
			break;
		case 1:
			body += (uint32) (rndn(2) ? 1 + rndn(8) : -1 - rndn(8));
			break;
		case 2:
			body = (uint32) (len - off - COMPSPILL_ROW_LENGTH_SIZE + rndn(3));
			break;
		case 3:				/* wraps when the tuple header is added */
			body = PG_UINT32_MAX - rndn(MINIMAL_TUPLE_DATA_OFFSET + 2);
			break;
		case 4:
			body ^= (uint32) 1 << rndn(32);
			break;
		default:
			body = (uint32) rnd();
			break;
	}
	memcpy(b + off, &body, sizeof(body));
}

/*
 * Check mutated copies of row frame raw (nrows rows, starting at offs[]),
 * each in an exact-size buffer.
 */
static void
fuzz_row_frame(TupleDesc desc, CompSpillRowCursor *rc, const char *raw,
			   Size rawlen, int nrows, const Size *offs, int mutations)
{
	for (int m = 0; m < mutations; m++)
	{
		Size		flen = rawlen;
		int			fr = nrows;
		char	   *fb;
		int			mode = rndn(10);
		int			n = mode == 9 ? 2 + rndn(2) : 1;

		if (mode == 0 && rawlen > 0)
			flen = rnd() % rawlen;	/* truncation */
		else if (mode == 1)
			flen = rawlen + 1 + rndn(64);	/* extension */
		fb = malloc(Max(flen, 1));
		memcpy(fb, raw, Min(flen, rawlen));
		for (Size i = rawlen; i < flen; i++)
			fb[i] = rndn(2) ? 0 : (char) rnd();
		if (mode == 1 && rndn(2) && flen - rawlen >= COMPSPILL_ROW_LENGTH_SIZE)
		{
			/* what follows looks like a row's length */
			uint32		body = (uint32) (flen - rawlen -
										 COMPSPILL_ROW_LENGTH_SIZE);

			memcpy(fb + rawlen, &body, sizeof(body));
			if (rndn(2))
				fr++;
		}

		for (int i = 0; i < n; i++)
		{
			int			k = mode == 9 ? 2 + rndn(6) : mode;
			int			r = nrows > 0 ? rndn(nrows) : 0;

			switch (k)
			{
				case 0:
				case 1:
					break;
				case 2:
				case 3:
					mutate_bytes(fb, flen);
					break;
				case 4:
				case 5:
					if (nrows > 0)
						mutate_row_length(fb, offs[r], flen);
					break;
				case 6:
				case 7:
					if (nrows > 0)
						mutate_row_header(fb, offs[r], desc->natts);
					break;
				default:		/* wrong row count */
					switch (rndn(4))
					{
						case 0:
							fr = -1 - rndn(3);
							break;
						case 1:
							fr = PG_INT32_MAX - rndn(2);
							break;
						default:
							fr = Max(0, nrows + rndn(5) - 2);
							break;
					}
					break;
			}
		}
		row_frame_checked(desc, rc, fb, flen, fr);
		free(fb);
	}
}

/* ----------------------------------------------------------------
 * Encrypted mode: frames written and read as spill/runwriter.c and
 * spill/frame.c do.
 *
 * Each block is compressed (none, lz4 or zstd, stored raw when that does
 * not pay) and encrypted with CompSpillEncrypt as frame b of a run whose
 * serial comes from CompSpillCipherRunSerial, with the frame header (crc
 * zeroed) as additional authenticated data: runwriter.c's
 * compspill_emit_frame.
 * Reading it back mirrors compspill_load_frame: CompSpillDecrypt with the
 * header, crc zeroed, and the (serial, frame) the reader expects, then
 * CompSpillDecompress, then the decoder, whose rows must be the ones
 * encoded.  Then every mutated copy (ciphertext, tag, authenticated
 * header, the bytes read, the frame index, the run serial) must be
 * refused by CompSpillDecrypt, so that none reaches the decoder.
 *
 * The CRC is left zero.  frame.c checks it before decrypting, which stops
 * a torn write but not someone who writes the file: the mutations model
 * the latter, who fixes the CRC up, so every one of them gets as far as
 * CompSpillDecrypt.  Changing the crc field alone is the control: it is
 * not authenticated (frame.c zeroes it in the AAD), so such a frame must
 * still decrypt and decode.
 * ----------------------------------------------------------------
 */

#define FRAME_HDR		((Size) COMPSPILL_FRAME_HEADER_SIZE)
#define FRAME_TAG		((Size) COMPSPILL_CIPHER_TAG_SIZE)

/*
 * What a frame carries: a column block or a row frame (raw, rawlen bytes)
 * of nrows rows, which are ov / on (stride values a row) and, formed as
 * minimal tuples, tups.
 */
typedef struct FuzzPayload
{
	bool		rows;
	const char *raw;
	Size		rawlen;
	int			nrows;
	const Datum *ov;
	const bool *on;
	int			stride;
	MinimalTuple *tups;
} FuzzPayload;

/*
 * A frame as a reader meets it: the bytes it reads, in an exact-size
 * buffer (the header, then stored_len payload bytes as written, fewer or
 * more where a mutation says so), and the run serial and frame index it
 * expects there.
 */
typedef struct FuzzFrame
{
	char	   *bytes;
	Size		len;			/* FRAME_HDR + the payload given to decrypt */
	uint64		serial;
	int64		index;
} FuzzFrame;

/* The encrypted run of one iteration */
typedef struct FuzzRun
{
	CompSpillCompressor *comp;
	CompSpillCipher *cipher;
	uint64		serial;
	uint64		prev_serial;	/* the previous iteration's run, or 0 */
	int			nframes;		/* frames the iteration writes */
} FuzzRun;

/* What a mutation alters, FM_CRC being the control */
typedef enum FrameMutation
{
	FM_CIPHERTEXT,				/* bytes of the encrypted payload */
	FM_TAG,						/* bytes of the tag */
	FM_HEADER,					/* an authenticated header field */
	FM_STORED_LEN,				/* stored_len, the bytes read following it */
	FM_LENGTH,					/* the bytes read, the header unchanged */
	FM_INDEX,					/* read as another frame of the run */
	FM_SERIAL,					/* replayed under another run's serial */
	FM_RANGE,					/* a frame index no nonce is made from */
	FM_SEVERAL,					/* two or three of the above */
	FM_CRC,						/* control: the crc field alone */
	NFRAMEMUTATIONS
} FrameMutation;

static const char *const fm_names[NFRAMEMUTATIONS] = {
	"ciphertext", "tag", "header", "stored_len", "length", "index",
	"serial", "range", "several", "crc (control)"
};
static long fm_count[NFRAMEMUTATIONS];

/* Outcome of CompSpillDecrypt on a frame */
typedef enum FuzzDecrypt
{
	DECRYPT_OK,
	DECRYPT_REJECTED,			/* returned false */
	DECRYPT_ERROR				/* raised an ERROR */
} FuzzDecrypt;

/* Return a copy of frame f in a new exact-size buffer */
static FuzzFrame
copy_frame(const FuzzFrame *f)
{
	FuzzFrame	c = *f;

	c.bytes = malloc(f->len);
	memcpy(c.bytes, f->bytes, f->len);
	return c;
}

/*
 * Make frame f len bytes long, in a new exact-size buffer; bytes past its
 * old end are what could follow it in the run.
 */
static void
resize_frame(FuzzFrame *f, Size len)
{
	char	   *b = malloc(Max(len, 1));

	memcpy(b, f->bytes, Min(len, f->len));
	for (Size i = f->len; i < len; i++)
		b[i] = rndn(2) ? 0 : (char) rnd();
	free(f->bytes);
	f->bytes = b;
	f->len = len;
}

/*
 * Write payload pl as frame index of the run, asking codec for it, as
 * runwriter.c's compspill_emit_frame does.
 */
static FuzzFrame
write_frame(FuzzRun *run, CompSpillCodec codec, const FuzzPayload *pl,
			int64 index)
{
	const char *raw = pl->raw;
	Size		rawlen = pl->rawlen;
	int			nrows = pl->nrows;
	CompSpillFrameHeader hdr;
	FuzzFrame	f;
	Size		bound = CompSpillCompressBound(run->comp, codec, rawlen);
	char	   *payload = malloc(Max(bound, rawlen) + FRAME_TAG);
	Size		stored = 0;
	bool		dict = false;

	if (codec != COMPSPILL_CODEC_NONE)
		stored = CompSpillCompress(run->comp, codec, raw, rawlen, payload,
								   bound, &dict);
	if (stored == 0 || stored >= rawlen)
	{
		/* compression did not pay: stored as it is */
		memcpy(payload, raw, rawlen);
		stored = rawlen;
		codec = COMPSPILL_CODEC_NONE;
		dict = false;
	}
	nframes_stored[codec]++;
	if (dict)
		nframes_dict++;
	if (pl->rows)
		nframe_rows++;

	memset(&hdr, 0, sizeof(hdr));
	hdr.magic = COMPSPILL_FRAME_MAGIC;
	hdr.codec = (uint8) codec;
	hdr.flags = COMPSPILL_FRAME_ENCRYPTED |
		(pl->rows ? COMPSPILL_FRAME_ROWS : 0) |
		(dict ? COMPSPILL_FRAME_DICT : 0);
	hdr.nrows = (uint32) nrows;
	hdr.raw_len = (uint32) rawlen;
	hdr.stored_len = (uint32) (stored + FRAME_TAG);
	CompSpillEncrypt(run->cipher, run->serial, index, &hdr, sizeof(hdr),
					 payload, stored);

	f.len = FRAME_HDR + stored + FRAME_TAG;
	f.bytes = malloc(f.len);
	memcpy(f.bytes, &hdr, FRAME_HDR);
	memcpy(f.bytes + FRAME_HDR, payload, stored + FRAME_TAG);
	f.serial = run->serial;
	f.index = index;
	free(payload);
	return f;
}

/*
 * Authenticate and decrypt frame f in place as frame.c's reader does: the
 * header with crc zeroed as the additional data, the nonce from the
 * serial and index the reader expects.  An ERROR is caught and reported
 * as such.
 */
static FuzzDecrypt
decrypt_frame(FuzzRun *run, FuzzFrame *f)
{
	CompSpillFrameHeader aad;
	sigjmp_buf	jb;
	sigjmp_buf *save = pgstubs_error_jmp;
	volatile FuzzDecrypt result = DECRYPT_ERROR;

	memcpy(&aad, f->bytes, sizeof(aad));
	aad.crc = 0;
	if (sigsetjmp(jb, 0) == 0)
	{
		pgstubs_error_jmp = &jb;
		result = CompSpillDecrypt(run->cipher, f->serial, f->index,
								  &aad, sizeof(aad), f->bytes + FRAME_HDR,
								  f->len - FRAME_HDR) ?
			DECRYPT_OK : DECRYPT_REJECTED;
	}
	pgstubs_error_jmp = save;
	return result;
}

/*
 * Decrypt a copy of frame f, decompress it and decode it: the payload must
 * be pl's and its rows the originals.  what names the check.
 */
static void
check_frame(FuzzRun *run, const FuzzFrame *f, TupleDesc desc,
			CompSpillDecodedBlock *blk, CompSpillRowCursor *rc,
			const FuzzPayload *pl, const char *what)
{
	const char *raw = pl->raw;
	Size		rawlen = pl->rawlen;
	int			nrows = pl->nrows;
	FuzzFrame	c = copy_frame(f);
	CompSpillFrameHeader hdr;
	FuzzDecrypt res = decrypt_frame(run, &c);
	const char *detail = NULL;
	const char *text = c.bytes + FRAME_HDR;
	Size		textlen;
	char	   *plain;

	memcpy(&hdr, c.bytes, sizeof(hdr));
	CHECK(res == DECRYPT_OK, "%s: frame %lld of run %llu not authenticated (%s)",
		  what, (long long) f->index, (unsigned long long) f->serial,
		  res == DECRYPT_ERROR ? "an ERROR" : "false");
	if (res != DECRYPT_OK)
	{
		free(c.bytes);
		return;
	}
	textlen = c.len - FRAME_HDR - FRAME_TAG;
	CHECK(hdr.raw_len == rawlen && hdr.nrows == (uint32) nrows,
		  "%s: header says %u bytes of %u rows, written %zu of %d",
		  what, hdr.raw_len, hdr.nrows, rawlen, nrows);

	/* into an exact-size buffer, as the decoder is always given */
	plain = malloc(Max(rawlen, 1));
	if (hdr.codec == COMPSPILL_CODEC_NONE)
	{
		CHECK(textlen == rawlen, "%s: raw frame of %zu bytes, block %zu",
			  what, textlen, rawlen);
		memcpy(plain, text, Min(textlen, rawlen));
	}
	else if (!CompSpillDecompress(run->comp, (CompSpillCodec) hdr.codec,
								  (hdr.flags & COMPSPILL_FRAME_DICT) != 0,
								  text, textlen, plain, rawlen, &detail))
	{
		CHECK(false, "%s: %s frame does not decompress: %s", what,
			  CompSpillCodecName((CompSpillCodec) hdr.codec), detail);
		free((void *) detail);
		memset(plain, 0, rawlen);
	}
	CHECK((hdr.flags & ~COMPSPILL_FRAME_DICT) ==
		  (COMPSPILL_FRAME_ENCRYPTED | (pl->rows ? COMPSPILL_FRAME_ROWS : 0)) &&
		  ((hdr.flags & COMPSPILL_FRAME_DICT) == 0 ||
		   hdr.codec == COMPSPILL_CODEC_ZSTD),
		  "%s: frame flags %02X", what, hdr.flags);
	CHECK(memcmp(plain, raw, rawlen) == 0, "%s: decrypted block differs",
		  what);
	if (pl->rows)
		check_row_frame(desc, rc, plain, rawlen, nrows, pl->tups, what);
	else
		check_rows(desc, blk, plain, rawlen, nrows, pl->ov, pl->on,
				   pl->stride, what);
	free(plain);
	free(c.bytes);
}

/* Flip 1 to n bytes of b[off, off + len) to other values */
static void
alter_bytes(char *b, Size off, Size len, int n)
{
	if (len == 0)
		return;
	for (int i = 1 + rndn(n); i > 0; i--)
	{
		Size		pos = off + rnd() % len;

		b[pos] ^= (char) (rndn(2) ? 1 << rndn(8) : 1 + rndn(255));
	}
}

/*
 * Alter m, a copy of a frame of run (frame index b of it), the way kind
 * says.
 */
static void
mutate_frame(FuzzFrame *m, FrameMutation kind, FuzzRun *run, int64 b)
{
	CompSpillFrameHeader hdr;
	Size		textlen;

	memcpy(&hdr, m->bytes, sizeof(hdr));
	textlen = m->len > FRAME_HDR + FRAME_TAG ?
		m->len - FRAME_HDR - FRAME_TAG : 0;
	switch (kind)
	{
		case FM_CIPHERTEXT:
			alter_bytes(m->bytes, FRAME_HDR, textlen, 4);
			break;
		case FM_TAG:
			{
				/* the last 16 bytes read, or all of a shorter payload */
				Size		taglen = Min(FRAME_TAG, m->len - FRAME_HDR);

				alter_bytes(m->bytes, m->len - taglen, taglen, 2);
				break;
			}
		case FM_HEADER:
			switch (rndn(6))
			{
				case 0:			/* another codec */
					hdr.codec = (uint8) ((hdr.codec + 1 + rndn(2)) % 3);
					break;
				case 1:			/* not encrypted, or another flag */
					hdr.flags = rndn(2) ? 0 : (uint8) (2 << rndn(7));
					break;
				case 2:
					hdr.nrows += (uint32) (rndn(2) ? 1 + rndn(8) : -1 - rndn(8));
					break;
				case 3:
					hdr.raw_len += (uint32) (rndn(2) ? 1 + rndn(8) : -1 - rndn(8));
					break;
				default:		/* any bits of magic .. raw_len */
					memcpy(m->bytes, &hdr, sizeof(hdr));
					alter_bytes(m->bytes, 0, offsetof(CompSpillFrameHeader, stored_len), 2);
					memcpy(&hdr, m->bytes, sizeof(hdr));
					break;
			}
			memcpy(m->bytes, &hdr, sizeof(hdr));
			break;
		case FM_STORED_LEN:
			{
				uint32		len = hdr.stored_len;

				/* the reader takes as many bytes as the header says */
				len = len > 0 && rndn(2) ? (uint32) (rnd() % len) :
					len + 1 + rndn(64);
				hdr.stored_len = len;
				memcpy(m->bytes, &hdr, sizeof(hdr));
				resize_frame(m, FRAME_HDR + len);
				break;
			}
		case FM_LENGTH:
			{
				Size		len = m->len - FRAME_HDR;

				resize_frame(m, FRAME_HDR + (len > 0 && rndn(2) ? rnd() % len :
											 len + 1 + rndn(64)));
				break;
			}
		case FM_INDEX:
			if (run->nframes > 1 && rndn(2))
				m->index = (b + 1 + rndn(run->nframes - 1)) % run->nframes;
			else
			{
				switch (rndn(3))
				{
					case 0:
						m->index = b > 0 && rndn(2) ? b - 1 : b + 1;
						break;
					case 1:
						m->index = b ^ ((int64) 1 << rndn(32));
						break;
					default:
						m->index = (int64) (rnd() % ((uint64) PG_UINT32_MAX + 1));
						break;
				}
			}
			break;
		case FM_SERIAL:
			switch (rndn(4))
			{
				case 0:			/* the previous run, as if its extent held */
					m->serial = run->prev_serial != 0 ? run->prev_serial :
						run->serial + 1;
					break;
				case 1:			/* the next run */
					m->serial = run->serial + 1;
					break;
				case 2:
					m->serial ^= (uint64) 1 << rndn(64);
					break;
				default:
					m->serial = rnd();
					break;
			}
			break;
		case FM_RANGE:
			switch (rndn(3))
			{
				case 0:
					m->index = -1 - rndn(3);
					break;
				case 1:			/* would wrap to frame b in 32 bits */
					m->index = ((int64) 1 << 32) + b;
					break;
				default:
					m->index = PG_INT64_MAX - rndn(3);
					break;
			}
			break;
		case FM_SEVERAL:
			for (int i = 2 + rndn(2); i > 0; i--)
				mutate_frame(m, (FrameMutation) rndn(FM_SERIAL + 1), run, b);
			break;
		case FM_CRC:
			alter_bytes(m->bytes, offsetof(CompSpillFrameHeader, crc),
						sizeof(hdr.crc), 4);
			break;
		case NFRAMEMUTATIONS:
			break;
	}
}

/*
 * Whether m is the frame f as the reader sees it: the same bytes but for
 * the unauthenticated crc, the same length, serial and index.
 */
static bool
same_frame(const FuzzFrame *m, const FuzzFrame *f)
{
	Size		crc = offsetof(CompSpillFrameHeader, crc);

	return m->len == f->len && m->serial == f->serial &&
		m->index == f->index &&
		memcmp(m->bytes, f->bytes, crc) == 0 &&
		memcmp(m->bytes + FRAME_HDR, f->bytes + FRAME_HDR,
			   f->len - FRAME_HDR) == 0;
}

/*
 * Write block raw as frame b of the run and check it reads back; then
 * check that every mutated copy is refused before the decoder, and that
 * the frame still reads back after all that.
 */
static void
fuzz_frame(FuzzRun *run, int64 b, TupleDesc desc, CompSpillDecodedBlock *blk,
		   CompSpillRowCursor *rc, const FuzzPayload *pl, int mutations)
{
	FuzzFrame	f = write_frame(run, (CompSpillCodec) rndn(3), pl, b);
	long		before = nchecks_failed;

	nframe_trips++;
	check_frame(run, &f, desc, blk, rc, pl, "encrypted round trip");
	tally(before);

	for (int i = 0; i < mutations; i++)
	{
		FrameMutation kind = (FrameMutation) rndn(NFRAMEMUTATIONS);
		FuzzFrame	m = copy_frame(&f);
		FuzzDecrypt res;

		before = nchecks_failed;
		mutate_frame(&m, kind, run, b);
		fm_count[kind]++;
		if (same_frame(&m, &f))
		{
			/* nothing authenticated changed: it must read back */
			nframe_control++;
			check_frame(run, &m, desc, blk, rc, pl,
						"unauthenticated change");
		}
		else
		{
			nframe_mutated++;
			res = decrypt_frame(run, &m);
			if (res == DECRYPT_REJECTED)
				nframe_false++;
			else if (res == DECRYPT_ERROR)
				nframe_error++;
			else
			{
				/* never handed to the decoder */
				nframe_forged++;
				CHECK(false, "%s mutation of frame %lld accepted (read as frame %lld of run %llu, %zu bytes, written %zu)",
					  fm_names[kind], (long long) b, (long long) m.index,
					  (unsigned long long) m.serial, m.len, f.len);
			}
		}
		tally(before);
		free(m.bytes);
	}

	/* errors and rejections must leave the cipher usable */
	if (mutations > 0)
	{
		before = nchecks_failed;
		check_frame(run, &f, desc, blk, rc, pl, "encrypted re-read");
		tally(before);
	}
	free(f.bytes);
}

/* ----------------------------------------------------------------
 * Driver.
 * ----------------------------------------------------------------
 */
static bool do_blocks = true;	/* block mode */
static bool do_rows = true;		/* row mode */
static bool do_frames = true;	/* encrypted mode */
static uint64 last_serial = 0;

static void
run_iteration(int mutations)
{
	int			natts = rndn(8) == 0 ? 0 : 1 + rndn(MAX_ATTS);
	int			kinds[MAX_ATTS];
	TupleDesc	desc;
	CompSpillEncoder *enc;
	CompSpillDecodedBlock blk;
	CompSpillRowCursor rc;
	uint64		span = rndn(4) == 0 ? 100000 : 4000;
	Size		target = 64 + rnd() % span;
	int			nullpct = rndn(4) == 0 ? 0 : rndn(5) == 0 ? 100 : rndn(60);
	bool		big = rndn(6) == 0;
	int			nblocks = 1 + rndn(3);
	FuzzRun		run;
	bool		run_rows = rndn(2);	/* the encrypted run's frame kind */

	for (int a = 0; a < natts; a++)
		kinds[a] = rndn(NSPECS);
	desc = make_desc(natts, kinds);
	enc = CompSpillEncoderCreate(desc, target);
	/* keep encodings for one to four blocks, so later blocks reuse them */
	CompSpillEncoderSetRecheck(enc, 1 + rndn(4));
	CompSpillDecodedBlockInit(&blk, desc);
	CompSpillRowCursorInit(&rc, CurrentMemoryContext);

	/* one run per iteration: its contexts go with pgstubs_free_all */
	memset(&run, 0, sizeof(run));
	if (do_frames)
	{
		run.comp = CompSpillCompressorCreate(1 + rndn(3));
		/* a small zstd dictionary, which the first frames fill */
		if (rndn(2))
			CompSpillCompressorSetDictionary(run.comp, 4096, 1024);
		run.cipher = CompSpillCipherCreate();
		run.serial = CompSpillCipherRunSerial();
		run.prev_serial = last_serial;
		run.nframes = nblocks;
		last_serial = run.serial;
	}

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
		long		before;
		ColGen	   *gens = malloc(sizeof(ColGen) * Max(natts, 1));
		MinimalTuple *tups;
		Size	   *offs;
		CompSpillRowWriter w;
		char	   *rowraw;
		Size		rowlen;
		FuzzPayload pl;

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
		/* blocks stored uncompressed (ARRAY), cheap I/O, a new run */
		CompSpillEncoderSetCompressed(enc, rndn(3) != 0);
		CompSpillEncoderSetLight(enc, rndn(8) == 0);
		if (rndn(6) == 0)
			CompSpillEncoderNewRun(enc);
		rawlen = CompSpillEncoderSize(enc);
		raw = malloc(rawlen);
		CompSpillEncoderFinish(enc, raw);
		if (CompSpillEncoderRows(enc) != 0 ||
			CompSpillEncoderSize(enc) != 8 + COLHDR * (Size) natts)
		{
			fprintf(stderr, "encoder not reset by Finish\n");
			exit(1);
		}
		count_encodings(raw, rawlen);

		/* the same rows as a row frame, written as runwriter.c writes them */
		tups = malloc(sizeof(MinimalTuple) * nrows);
		offs = malloc(sizeof(Size) * nrows);
		CompSpillRowWriterInit(&w, CurrentMemoryContext, target);
		for (int r = 0; r < nrows; r++)
		{
			tups[r] = form_row(desc, ov + r * stride, on + r * stride);
			offs[r] = w.len;
			(void) CompSpillRowWriterAdd(&w, tups[r]);
		}
		rowlen = w.len;
		if (w.nrows != nrows)
		{
			fprintf(stderr, "row writer counts %d rows, added %d\n",
					w.nrows, nrows);
			exit(1);
		}
		rowraw = malloc(Max(rowlen, 1));
		CompSpillRowWriterFinish(&w, rowraw);
		if (w.len != 0 || w.nrows != 0)
		{
			fprintf(stderr, "row writer not reset by Finish\n");
			exit(1);
		}

		if (do_blocks)
		{
			/* exact round trip, mutated copies, and the block again */
			nblock_trips++;
			before = nchecks_failed;
			check_rows(desc, &blk, raw, rawlen, nrows, ov, on, stride,
					   "round trip");
			tally(before);
			fuzz_block(desc, &blk, raw, rawlen, nrows, mutations);
			if (mutations > 0)
			{
				before = nchecks_failed;
				check_rows(desc, &blk, raw, rawlen, nrows, ov, on, stride,
						   "re-decode");
				tally(before);
			}
		}
		if (do_rows)
		{
			/* exact round trip, mutated copies, and the frame again */
			nrow_trips++;
			before = nchecks_failed;
			check_row_frame(desc, &rc, rowraw, rowlen, nrows, tups,
							"row frame round trip");
			tally(before);
			fuzz_row_frame(desc, &rc, rowraw, rowlen, nrows, offs, mutations);
			if (mutations > 0)
			{
				before = nchecks_failed;
				check_row_frame(desc, &rc, rowraw, rowlen, nrows, tups,
								"row frame re-read");
				tally(before);
			}
		}
		if (do_frames)
		{
			pl.rows = run_rows;
			pl.raw = run_rows ? rowraw : raw;
			pl.rawlen = run_rows ? rowlen : rawlen;
			pl.nrows = nrows;
			pl.ov = ov;
			pl.on = on;
			pl.stride = stride;
			pl.tups = tups;
			fuzz_frame(&run, b, desc, &blk, &rc, &pl, mutations);
		}

		for (int r = 0; r < nrows; r++)
			free(tups[r]);
		free(tups);
		free(offs);
		free(rowraw);

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
	const char *mode = argc > 4 ? argv[4] : "all";
	time_t		start = time(NULL);
	long		it;

	if (strcmp(mode, "all") == 0 || strcmp(mode, "both") == 0)
		mode = "all";
	else if (strcmp(mode, "block") == 0 || strcmp(mode, "rows") == 0 ||
			 strcmp(mode, "encrypted") == 0)
	{
		do_blocks = strcmp(mode, "block") == 0;
		do_rows = strcmp(mode, "rows") == 0;
		do_frames = strcmp(mode, "encrypted") == 0;
	}
	else
	{
		fprintf(stderr, "usage: %s [iterations [mutations [seed [block|rows|encrypted|all]]]]\n",
				argv[0]);
		return 2;
	}

	rng_state ^= seed * UINT64CONST(0x9E3779B97F4A7C15);
	if (rng_state == 0)
		rng_state = 1;

	for (it = 0; it < iterations; it++)
	{
		run_iteration(mutations);
		if (nchecks_failed > 20)
			break;
	}

	printf("blockcodec fuzz: seed %llu, mode %s, %ld iterations, %lds\n",
		   (unsigned long long) seed, mode, it, (long) (time(NULL) - start));
	printf("blockcodec fuzz: columns plain %ld, packed %ld, front %ld, dict %ld, for %ld, delta %ld, numeric %ld, array %ld\n",
		   enc_count[0], enc_count[1], enc_count[2], enc_count[3],
		   enc_count[4], enc_count[5], enc_count[6], enc_count[7]);
	/* a long enough run must reach every encoding */
	for (int e = 0; e < 8 && it >= 1000; e++)
	{
		if (enc_count[e] == 0)
		{
			printf("blockcodec fuzz: encoding %d never came up\n", e);
			nfailed++;
		}
	}
	if (do_blocks)
		printf("blockcodec fuzz: blocks: %ld round trips, %ld mutated blocks accepted, %ld rejected\n",
			   nblock_trips, naccepted, nrejected);
	if (do_rows)
	{
		printf("blockcodec fuzz: row frames: %ld round trips, %ld mutated row frames accepted, %ld rejected\n",
			   nrow_trips, nrow_accepted, nrow_rejected);
		/* a long enough run must see row frames both ways */
		if (it >= 1000 && (nrow_accepted == 0 || nrow_rejected == 0))
		{
			printf("blockcodec fuzz: mutated row frames never accepted or never rejected\n");
			nfailed++;
		}
	}
	if (do_frames)
	{
		printf("blockcodec fuzz: frames: %ld round trips (%ld row frames; stored none %ld, lz4 %ld, zstd %ld, %ld of them with the dictionary), %ld mutated frames refused (%ld false, %ld ERROR), %ld accepted, %ld controls read back\n",
			   nframe_trips, nframe_rows, nframes_stored[COMPSPILL_CODEC_NONE],
			   nframes_stored[COMPSPILL_CODEC_LZ4],
			   nframes_stored[COMPSPILL_CODEC_ZSTD], nframes_dict,
			   nframe_false + nframe_error, nframe_false, nframe_error,
			   nframe_forged, nframe_control);
		printf("blockcodec fuzz: frame mutations:");
		for (int k = 0; k < NFRAMEMUTATIONS; k++)
			printf("%s %s %ld", k == 0 ? "" : ",", fm_names[k], fm_count[k]);
		printf("\n");
	}
	printf("blockcodec fuzz: %ld passed, %ld failed\n", npassed, nfailed);
	return nfailed == 0 ? 0 : 1;
}
