/*-------------------------------------------------------------------------
 *
 * codecbench.c
 *	  Measure the block codec on the rows of a real table.
 *
 * Reads a CSV copy of TPC-H's lineitem (COPY ... TO ... CSV, in the order
 * a sort would spill it), builds the Datums a sort would hand the codec
 * (int8 / int4 / date by value; numeric, char(n) and varchar as varlenas
 * with 1-byte headers, as a heap tuple holds them), and encodes them in
 * blocks of about 64 kB the way spill/runwriter.c does.  It reports:
 *
 *	- bytes before encoding: the rows' minimal tuple sizes, the figure the
 *	  sort node's EXPLAIN divides by;
 *	- per column, the encoded size and the lz4 and zstd(1) compressed size
 *	  of that column's share of the blocks (each column encoded alone, with
 *	  the same rows per block as the full-row blocks);
 *	- in total, the encoded size and the lz4 / zstd(1) compressed size of
 *	  the full-row blocks, and the ratios to the bytes before encoding;
 *	- encode time per row (CompSpillEncoderAdd, Size and Finish) and decode
 *	  time per row (CompSpillDecodeBlock and CompSpillDecodeNextRow), best
 *	  of a few repetitions, without compression.
 *
 * Every block is decoded and compared with the input rows first.  The
 * Makefile builds it twice, against the current codec and an old one, so
 * that the two can be compared on the same rows.
 *
 * Usage: codecbench file.csv [repetitions]
 *
 * CODECBENCH_BLOCK_KB sets the block target (64 kB); CODECBENCH_DICT_KB, a
 * comma-separated list of sizes, also compresses the blocks with a
 * dictionary made of the first blocks; CODECBENCH_PREFIX=1 with the block
 * before each as its prefix (what a shared dictionary or a run's history
 * would gain over blocks compressed alone).
 *
 * IDENTIFICATION
 *	  test/codec/codecbench.c
 *
 *-------------------------------------------------------------------------
 */
#define _GNU_SOURCE
#include "postgres.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define LZ4_STATIC_LINKING_ONLY
#include <lz4.h>
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include "access/htup_details.h"
#include "access/tupdesc.h"
#include "access/tupmacs.h"
#include "catalog/pg_type.h"
#include "utils/expandeddatum.h"

#include "codec/blockcodec.h"
#include "pgstubs.h"

#undef printf
#undef fprintf
#undef snprintf
#undef vfprintf

#ifndef CODEC_LABEL
#define CODEC_LABEL "?"
#endif

#ifndef BLOCK_TARGET_DEFAULT
#define BLOCK_TARGET_DEFAULT	65536
#endif
#define NCSV			16		/* the columns of the CSV file */
#define NCOLS			17		/* and a random bytea column */

/* the encoder's block target: CODECBENCH_BLOCK_KB, or 64 kB */
static int	BLOCK_TARGET = BLOCK_TARGET_DEFAULT;

/* ----------------------------------------------------------------
 * Backend stubs, enough for blockcodec.c outside the server.
 * ----------------------------------------------------------------
 */
static void *
xmalloc(Size size)
{
	void	   *p = malloc(size > 0 ? size : 1);

	if (p == NULL)
		abort();
	return p;
}

/* ----------------------------------------------------------------
 * lineitem: its columns and how text becomes Datums.
 * ----------------------------------------------------------------
 */
typedef enum ColType
{
	T_INT8,
	T_INT4,
	T_NUMERIC,
	T_BPCHAR,
	T_DATE,
	T_VARCHAR,
	T_BYTEA
} ColType;

static const struct
{
	const char *name;
	ColType		type;
} columns[NCOLS] = {
	{"l_orderkey", T_INT8},
	{"l_partkey", T_INT4},
	{"l_suppkey", T_INT4},
	{"l_linenumber", T_INT4},
	{"l_quantity", T_NUMERIC},
	{"l_extendedprice", T_NUMERIC},
	{"l_discount", T_NUMERIC},
	{"l_tax", T_NUMERIC},
	{"l_returnflag", T_BPCHAR},
	{"l_linestatus", T_BPCHAR},
	{"l_shipdate", T_DATE},
	{"l_commitdate", T_DATE},
	{"l_receiptdate", T_DATE},
	{"l_shipinstruct", T_BPCHAR},
	{"l_shipmode", T_BPCHAR},
	{"l_comment", T_VARCHAR},
	{"random_bytea", T_BYTEA},
};

/* a tuple descriptor of the given columns of lineitem */
static TupleDesc
make_desc(const int *cols, int n)
{
	TupleDesc	desc = calloc(1, offsetof(struct TupleDescData, attrs) +
							  (n + 1) * sizeof(FormData_pg_attribute));

	desc->natts = n;
	for (int a = 0; a < n; a++)
	{
		Form_pg_attribute attr = TupleDescAttr(desc, a);

		snprintf(NameStr(attr->attname), NAMEDATALEN, "%s",
				 columns[cols[a]].name);
		attr->attnum = a + 1;
		switch (columns[cols[a]].type)
		{
			case T_INT8:
				attr->attlen = 8;
				attr->attbyval = true;
				attr->attalign = TYPALIGN_DOUBLE;
				attr->attstorage = TYPSTORAGE_PLAIN;
				break;
			case T_INT4:
			case T_DATE:
				attr->attlen = 4;
				attr->attbyval = true;
				attr->attalign = TYPALIGN_INT;
				attr->attstorage = TYPSTORAGE_PLAIN;
				break;
			case T_NUMERIC:
				attr->atttypid = NUMERICOID;
				attr->attlen = -1;
				attr->attalign = TYPALIGN_INT;
				attr->attstorage = TYPSTORAGE_MAIN;
				break;
			default:
				attr->attlen = -1;
				attr->attalign = TYPALIGN_INT;
				attr->attstorage = TYPSTORAGE_EXTENDED;
				break;
		}
	}
	return desc;
}

/* a bump allocator for the values of all rows */
static char *heap_cur = NULL;
static Size heap_left = 0;

static char *
heap_alloc(Size n)
{
	char	   *p;

	n = MAXALIGN(n);
	if (n > heap_left)
	{
		heap_left = Max(n, (Size) 64 << 20);
		heap_cur = xmalloc(heap_left);
	}
	p = heap_cur;
	heap_cur += n;
	heap_left -= n;
	return p;
}

/* a varlena holding len bytes, with a 1-byte header as a tuple has it */
static Datum
make_text(const char *s, Size len)
{
	char	   *p;

	if (len <= VARATT_SHORT_MAX - VARHDRSZ_SHORT)
	{
		p = heap_alloc(len + VARHDRSZ_SHORT);
		SET_VARSIZE_SHORT(p, len + VARHDRSZ_SHORT);
		memcpy(p + VARHDRSZ_SHORT, s, len);
	}
	else
	{
		p = heap_alloc(len + VARHDRSZ);
		SET_VARSIZE(p, len + VARHDRSZ);
		memcpy(p + VARHDRSZ, s, len);
	}
	return PointerGetDatum(p);
}

/*
 * A non-negative numeric from its text, in the short on-disk format
 * (base-10000 digits, no leading or trailing zero digits), 1-byte header.
 */
static Datum
make_numeric(const char *s)
{
	const char *dot = strchr(s, '.');
	Size		ilen = dot ? (Size) (dot - s) : strlen(s);
	const char *frac = dot ? dot + 1 : "";
	int			dscale = (int) strlen(frac);
	int16		digits[16];
	int			nd = 0;
	int			weight;
	int			first;
	int			last;
	int			igroups = (int) ((ilen + 3) / 4);
	uint16		header;
	char		buf[2 + sizeof(digits)];

	/* integer part, in groups of four from the point */
	for (int g = 0; g < igroups; g++)
	{
		int			end = (int) ilen - 4 * (igroups - 1 - g);
		int			start = Max(end - 4, 0);
		int			v = 0;

		for (int i = start; i < end; i++)
			v = v * 10 + (s[i] - '0');
		digits[nd++] = (int16) v;
	}
	weight = igroups - 1;
	for (int i = 0; frac[i] != '\0'; i += 4)
	{
		int			v = 0;

		for (int k = 0; k < 4; k++)
			v = v * 10 + (frac[i] != '\0' && i + k < dscale ? frac[i + k] - '0' : 0);
		digits[nd++] = (int16) v;
	}
	first = 0;
	while (first < nd && digits[first] == 0)
	{
		first++;
		weight--;
	}
	last = nd;
	while (last > first && digits[last - 1] == 0)
		last--;
	if (first == last)
		weight = 0;

	header = 0x8000 | (uint16) (dscale << 7) |
		(weight < 0 ? 0x0040 : 0) | (uint16) (weight & 0x003F);
	memcpy(buf, &header, 2);
	memcpy(buf + 2, digits + first, sizeof(int16) * (last - first));
	return make_text(buf, 2 + sizeof(int16) * (last - first));
}

/* days from 2000-01-01 of a YYYY-MM-DD date */
static int32
make_date(const char *s)
{
	int			y = atoi(s);
	int			m = atoi(s + 5);
	int			d = atoi(s + 8);
	int			era;
	int			yoe,
				doy,
				doe;

	/* days from civil, proleptic Gregorian */
	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return (int32) (era * 146097 + doe - 719468 - 10957);
}

/* split one CSV line into fields, in place; return the number of fields */
static int
split_csv(char *line, char **fields, int max)
{
	int			n = 0;
	char	   *p = line;

	while (n < max)
	{
		char	   *out = p;

		fields[n++] = p;
		if (*p == '"')
		{
			p++;
			for (;;)
			{
				if (*p == '"' && p[1] == '"')
				{
					*out++ = '"';
					p += 2;
				}
				else if (*p == '"')
				{
					p++;
					break;
				}
				else if (*p == '\0')
					break;
				else
					*out++ = *p++;
			}
		}
		else
		{
			while (*p != ',' && *p != '\0' && *p != '\n')
				*out++ = *p++;
		}
		if (*p != ',')
		{
			*out = '\0';
			break;
		}
		*out = '\0';
		p++;
	}
	return n;
}

/* the minimal tuple size of a row, as heap_form_minimal_tuple makes it */
static Size
minimal_tuple_size(TupleDesc desc, const Datum *values)
{
	Size		len = 0;

	for (int a = 0; a < desc->natts; a++)
	{
		Form_pg_attribute attr = TupleDescAttr(desc, a);

		if (attr->attlen == -1 &&
			VARATT_IS_SHORT(DatumGetPointer(values[a])))
			len += VARSIZE_SHORT(DatumGetPointer(values[a]));
		else
		{
			len = att_align_datum(len, attr->attalign, attr->attlen,
								  values[a]);
			len = att_addlength_datum(len, attr->attlen, values[a]);
		}
	}
	return MAXALIGN(SizeofMinimalTupleHeader) + len;
}

/* ----------------------------------------------------------------
 * Measuring.
 * ----------------------------------------------------------------
 */
typedef struct Sizes
{
	Size		raw;
	Size		lz4;
	Size		zstd;
} Sizes;

static double
now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* add the compressed sizes of one block */
static void
compress_block(const char *raw, Size len, Sizes *sz, char *scratch,
			   Size scratch_cap, ZSTD_CCtx *zc)
{
	int			l = LZ4_compress_default(raw, scratch, (int) len,
										 (int) scratch_cap);
	size_t		z = ZSTD_compressCCtx(zc, scratch, scratch_cap, raw, len, 1);

	if (l <= 0 || ZSTD_isError(z))
	{
		fprintf(stderr, "compression failed\n");
		exit(1);
	}
	/* a block that does not shrink is stored raw */
	sz->raw += len;
	sz->lz4 += Min((Size) l, len);
	sz->zstd += Min((Size) z, len);
}

/*
 * Encode rows [0, nrows) of the given columns into blocks.  With cuts ==
 * NULL, cut blocks where the encoder says it is full and record the cuts
 * (block row counts) in *cuts_out; otherwise cut them as cuts says.
 */
static int
encode_all(TupleDesc desc, const int *cols, Datum *rows, int nrows,
		   const int *cuts, int **cuts_out, char ***blocks_out,
		   Size **lens_out, double *seconds)
{
	CompSpillEncoder *enc = CompSpillEncoderCreate(desc, BLOCK_TARGET);
	int			natts = desc->natts;
#ifdef CODEC_NEWAPI
	const char *recheck = getenv("CODECBENCH_RECHECK");
	const char *uncompressed = getenv("CODECBENCH_UNCOMPRESSED");

	/* blocks stored uncompressed; blocks a column keeps its encoding */
	if (uncompressed != NULL && atoi(uncompressed) != 0)
		CompSpillEncoderSetCompressed(enc, false);
	if (recheck != NULL)
		CompSpillEncoderSetRecheck(enc, atoi(recheck));
	/* only the encodings that cost no time to choose, as auto's cheap I/O */
	if (getenv("CODECBENCH_LIGHT") != NULL && atoi(getenv("CODECBENCH_LIGHT")) != 0)
		CompSpillEncoderSetLight(enc, true);
#endif
	Datum	   *vals = xmalloc(sizeof(Datum) * natts);
	bool	   *nulls = calloc(natts, sizeof(bool));
	int			cap = 1024;
	int			nblocks = 0;
	int		   *mycuts = xmalloc(sizeof(int) * cap);
	char	  **blocks = xmalloc(sizeof(char *) * cap);
	Size	   *lens = xmalloc(sizeof(Size) * cap);
	double		start = now_sec();
	int			inblock = 0;

	for (int r = 0; r < nrows; r++)
	{
		bool		cut;

		for (int a = 0; a < natts; a++)
			vals[a] = rows[(Size) r * NCOLS + cols[a]];
		CompSpillEncoderAdd(enc, vals, nulls);
		inblock++;
		if (cuts)
			cut = inblock == cuts[nblocks];
		else
			cut = CompSpillEncoderIsFull(enc);
		if (cut || r == nrows - 1)
		{
			Size		len = CompSpillEncoderSize(enc);

			if (nblocks == cap)
			{
				cap *= 2;
				mycuts = realloc(mycuts, sizeof(int) * cap);
				blocks = realloc(blocks, sizeof(char *) * cap);
				lens = realloc(lens, sizeof(Size) * cap);
			}
			blocks[nblocks] = xmalloc(len);
			lens[nblocks] = len;
			mycuts[nblocks] = inblock;
			CompSpillEncoderFinish(enc, blocks[nblocks]);
			nblocks++;
			inblock = 0;
		}
	}
	*seconds = now_sec() - start;
	if (cuts_out)
		*cuts_out = mycuts;
	else
		free(mycuts);
	*blocks_out = blocks;
	*lens_out = lens;
	free(vals);
	free(nulls);
	return nblocks;
}

/*
 * Compress the full-row blocks with a dictionary made of the first blocks'
 * raw bytes (the blocks it was made of compressed without one), at the
 * dictionary sizes of CODECBENCH_DICT_KB (a comma-separated list), and
 * print the ratios and the compression time.
 */
static void
dict_sizes(char **blocks, Size *lens, int nblocks, Size bytes_in)
{
	const char *list = getenv("CODECBENCH_DICT_KB");
	Size		cap = LZ4_compressBound(16 << 20);
	char	   *out = xmalloc(cap);
	char	   *back = xmalloc(16 << 20);

	while (list != NULL && *list)
	{
		Size		dsize = (Size) strtol(list, (char **) &list, 10) * 1024;
		char	   *dict = xmalloc(dsize + 1);
		Size		dlen = 0;
		int			first = 0;
		Size		lz = 0,
					zs = 0;
		LZ4_stream_t *dstream = LZ4_createStream();
		LZ4_stream_t *work = LZ4_createStream();
		ZSTD_CCtx  *zc = ZSTD_createCCtx();
		ZSTD_DCtx  *zd = ZSTD_createDCtx();
		ZSTD_CDict *cd = NULL;
		ZSTD_DDict *dd = NULL;
		double		t0,
					tl = 0,
					tz = 0,
					tdl = 0;

		if (*list == ',')
			list++;
		/* the first blocks, whole, up to dsize */
		while (first < nblocks && dlen + lens[first] <= dsize)
		{
			memcpy(dict + dlen, blocks[first], lens[first]);
			dlen += lens[first];
			first++;
		}
		LZ4_loadDict(dstream, dict, (int) dlen);
		if (dlen > 0)
		{
			cd = ZSTD_createCDict(dict, dlen, 1);
			dd = ZSTD_createDDict(dict, dlen);
		}
		for (int b = 0; b < nblocks; b++)
		{
			int			l;
			size_t		z;

			t0 = now_sec();
			if (b < first || dlen == 0)
				l = LZ4_compress_default(blocks[b], out, (int) lens[b], (int) cap);
			else
			{
				/* a copy of the hashed dictionary: 16 kB, no rehash */
				memcpy(work, dstream, sizeof(LZ4_stream_t));
				l = LZ4_compress_fast_continue(work, blocks[b], out,
											   (int) lens[b], (int) cap, 1);
			}
			tl += now_sec() - t0;
			t0 = now_sec();
			if (b < first || dlen == 0)
				LZ4_decompress_safe(out, back, l, 16 << 20);
			else
				LZ4_decompress_safe_usingDict(out, back, l, 16 << 20, dict,
											  (int) dlen);
			tdl += now_sec() - t0;
			if (memcmp(back, blocks[b], lens[b]) != 0)
			{
				fprintf(stderr, "lz4 dictionary round trip failed\n");
				exit(1);
			}
			lz += Min((Size) l, lens[b]);
			t0 = now_sec();
			if (b < first || dlen == 0)
				z = ZSTD_compressCCtx(zc, out, cap, blocks[b], lens[b], 1);
			else
				z = ZSTD_compress_usingCDict(zc, out, cap, blocks[b], lens[b], cd);
			tz += now_sec() - t0;
			if (dd != NULL && b >= first &&
				ZSTD_decompress_usingDDict(zd, back, 16 << 20, out, z, dd) != lens[b])
			{
				fprintf(stderr, "zstd dictionary round trip failed\n");
				exit(1);
			}
			zs += Min((Size) z, lens[b]);
		}
		printf("dictionary %zu kB (%d blocks): lz4 %.2f (%.0f ms, dec %.0f ms), zstd(1) %.2f (%.0f ms); cdict %zu B, ddict %zu B\n",
			   dsize / 1024, first, (double) bytes_in / lz, tl * 1e3, tdl * 1e3,
			   (double) bytes_in / zs, tz * 1e3,
			   cd ? ZSTD_sizeof_CDict(cd) : 0, dd ? ZSTD_sizeof_DDict(dd) : 0);
		ZSTD_freeCDict(cd);
		ZSTD_freeDDict(dd);
		ZSTD_freeCCtx(zc);
		ZSTD_freeDCtx(zd);
		LZ4_freeStream(dstream);
		LZ4_freeStream(work);
		free(dict);
	}
	/* each block with the one before it as its prefix (a run's last frame) */
	if (getenv("CODECBENCH_PREFIX") != NULL)
	{
		LZ4_stream_t *ls = LZ4_createStream();
		ZSTD_CCtx  *zc = ZSTD_createCCtx();
		Size		lz = 0,
					zs = 0;
		double		t0,
					tl = 0,
					tz = 0;

		for (int b = 0; b < nblocks; b++)
		{
			int			l;
			size_t		z;

			t0 = now_sec();
			if (b == 0)
				l = LZ4_compress_fast_continue(ls, blocks[b], out, (int) lens[b], (int) cap, 1);
			else
			{
				/* the previous block stays where it is: blocks[] keeps it */
				l = LZ4_compress_fast_continue(ls, blocks[b], out, (int) lens[b], (int) cap, 1);
			}
			tl += now_sec() - t0;
			if (b > 0)
			{
				LZ4_decompress_safe_usingDict(out, back, l, 16 << 20,
											  blocks[b - 1], (int) lens[b - 1]);
				if (memcmp(back, blocks[b], lens[b]) != 0)
				{
					fprintf(stderr, "lz4 prefix round trip failed\n");
					exit(1);
				}
			}
			/* keep only the previous block as the history */
			LZ4_loadDict(ls, blocks[b], (int) lens[b]);
			lz += Min((Size) l, lens[b]);
			t0 = now_sec();
			ZSTD_CCtx_reset(zc, ZSTD_reset_session_only);
			ZSTD_CCtx_setParameter(zc, ZSTD_c_compressionLevel, 1);
			if (b > 0)
				ZSTD_CCtx_refPrefix(zc, blocks[b - 1], lens[b - 1]);
			z = ZSTD_compress2(zc, out, cap, blocks[b], lens[b]);
			tz += now_sec() - t0;
			zs += Min((Size) z, lens[b]);
		}
		printf("previous block as prefix: lz4 %.2f (%.0f ms), zstd(1) %.2f (%.0f ms)\n",
			   (double) bytes_in / lz, tl * 1e3, (double) bytes_in / zs, tz * 1e3);
		LZ4_freeStream(ls);
		ZSTD_freeCCtx(zc);
	}
	free(out);
	free(back);
}

/* decode every block, reading every row; return the seconds it took */
static double
decode_all(TupleDesc desc, char **blocks, Size *lens, const int *cuts,
		   int nblocks)
{
	CompSpillDecodedBlock blk;
	double		start = now_sec();
	volatile Datum sink = 0;

	CompSpillDecodedBlockInit(&blk, desc);
	for (int b = 0; b < nblocks; b++)
	{
		const char *err;

		if (!CompSpillDecodeBlock(&blk, desc, blocks[b], lens[b], cuts[b],
								  &err))
		{
			fprintf(stderr, "block %d rejected: %s\n", b, err);
			exit(1);
		}
		while (CompSpillDecodeNextRow(&blk))
			sink += blk.values[0];
	}
	(void) sink;
	return now_sec() - start;
}

/* decode every block and compare each value with the input */
static void
verify_all(TupleDesc desc, const int *cols, Datum *rows, char **blocks,
		   Size *lens, const int *cuts, int nblocks)
{
	CompSpillDecodedBlock blk;
	int			r = 0;

	CompSpillDecodedBlockInit(&blk, desc);
	for (int b = 0; b < nblocks; b++)
	{
		const char *err;

		if (!CompSpillDecodeBlock(&blk, desc, blocks[b], lens[b], cuts[b],
								  &err))
		{
			fprintf(stderr, "block %d rejected: %s\n", b, err);
			exit(1);
		}
		while (CompSpillDecodeNextRow(&blk))
		{
			for (int a = 0; a < desc->natts; a++)
			{
				Datum		o = rows[(Size) r * NCOLS + cols[a]];
				Datum		n = blk.values[a];
				bool		same;

				if (TupleDescAttr(desc, a)->attbyval)
					same = o == n;
				else
					same = VARSIZE_ANY_EXHDR(DatumGetPointer(o)) ==
						VARSIZE_ANY_EXHDR(DatumGetPointer(n)) &&
						memcmp(VARDATA_ANY(DatumGetPointer(o)),
							   VARDATA_ANY(DatumGetPointer(n)),
							   VARSIZE_ANY_EXHDR(DatumGetPointer(o))) == 0;
				if (!same)
				{
					fprintf(stderr, "row %d column %s differs after decoding\n",
							r, NameStr(TupleDescAttr(desc, a)->attname));
					exit(1);
				}
			}
			r++;
		}
	}
}

static void
free_blocks(char **blocks, Size *lens, int nblocks)
{
	for (int b = 0; b < nblocks; b++)
		free(blocks[b]);
	free(blocks);
	free(lens);
}

int
main(int argc, char **argv)
{
	FILE	   *f;
	char	   *line = NULL;
	size_t		linecap = 0;
	int			rowcap = 1 << 16;
	int			nrows = 0;
	Datum	   *rows;
	Size		bytes_in = 0;
	int			all[NCOLS];
	TupleDesc	desc;
	int			repeat = argc > 2 ? atoi(argv[2]) : 3;
	int		   *cuts;
	char	  **blocks;
	Size	   *lens;
	int			nblocks;
	double		enc_best = 1e30,
				dec_best = 1e30;
	Size		scratch_cap = LZ4_compressBound(16 << 20);
	char	   *scratch = xmalloc(scratch_cap);
	ZSTD_CCtx  *zc = ZSTD_createCCtx();
	Sizes		total = {0};
	Sizes		colsum = {0};

	if (getenv("CODECBENCH_BLOCK_KB") != NULL)
		BLOCK_TARGET = atoi(getenv("CODECBENCH_BLOCK_KB")) * 1024;
	if (argc < 2)
	{
		fprintf(stderr, "usage: %s file.csv [repetitions]\n", argv[0]);
		return 2;
	}
	f = fopen(argv[1], "r");
	if (f == NULL)
	{
		perror(argv[1]);
		return 1;
	}
	for (int a = 0; a < NCSV; a++)
		all[a] = a;
	desc = make_desc(all, NCSV);

	/* read the rows */
	rows = xmalloc(sizeof(Datum) * NCOLS * rowcap);
	while (getline(&line, &linecap, f) > 0)
	{
		char	   *fields[NCOLS + 1];
		Datum	   *v;

		if (split_csv(line, fields, NCSV + 1) != NCSV)
		{
			fprintf(stderr, "line %d does not have %d fields\n", nrows + 1,
					NCSV);
			return 1;
		}
		if (nrows == rowcap)
		{
			rowcap *= 2;
			rows = realloc(rows, sizeof(Datum) * NCOLS * rowcap);
		}
		v = rows + (Size) nrows * NCOLS;
		for (int a = 0; a < NCSV; a++)
		{
			switch (columns[a].type)
			{
				case T_INT8:
					v[a] = Int64GetDatum(strtoll(fields[a], NULL, 10));
					break;
				case T_INT4:
					v[a] = Int32GetDatum((int32) strtol(fields[a], NULL, 10));
					break;
				case T_DATE:
					v[a] = Int32GetDatum(make_date(fields[a]));
					break;
				case T_NUMERIC:
					v[a] = make_numeric(fields[a]);
					break;
				default:
					v[a] = make_text(fields[a], strlen(fields[a]));
					break;
			}
		}
		bytes_in += minimal_tuple_size(desc, v);
		{
			/* random bytes, 16 to 200 of them, from a fixed-seed xorshift */
			static uint64 x = UINT64CONST(88172645463325252);
			char		buf[200];
			Size		blen;

			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			blen = 16 + x % 185;
			for (Size i = 0; i < blen; i++)
			{
				x ^= x << 13;
				x ^= x >> 7;
				x ^= x << 17;
				buf[i] = (char) (x >> 24);
			}
			v[NCSV] = make_text(buf, blen);
		}
		nrows++;
	}
	fclose(f);

	/* full rows: cut the blocks, check them, time them */
	nblocks = encode_all(desc, all, rows, nrows, NULL, &cuts, &blocks, &lens,
						 &enc_best);
	enc_best = 1e30;
	verify_all(desc, all, rows, blocks, lens, cuts, nblocks);
	for (int b = 0; b < nblocks; b++)
		compress_block(blocks[b], lens[b], &total, scratch, scratch_cap, zc);
	for (int i = 0; i < repeat; i++)
	{
		char	  **bl2;
		Size	   *le2;
		double		t;

		dec_best = Min(dec_best, decode_all(desc, blocks, lens, cuts, nblocks));
		(void) encode_all(desc, all, rows, nrows, cuts, NULL, &bl2, &le2, &t);
		enc_best = Min(enc_best, t);
		free_blocks(bl2, le2, nblocks);
	}

	printf("codec %s: %s, %d rows, %d blocks of %d kB target, %zu bytes before encoding (%.1f a row)\n",
		   CODEC_LABEL, argv[1], nrows, nblocks, BLOCK_TARGET / 1024, bytes_in,
		   (double) bytes_in / nrows);
	printf("%-16s %12s %12s %12s %8s %8s %8s %8s\n", "column", "encoded", "lz4",
		   "zstd(1)", "lz4 B/row", "zstd B/row", "enc ns", "dec ns");

	/* each column alone, with the same rows per block */
	for (int a = 0; a < NCOLS; a++)
	{
		TupleDesc	d1 = make_desc(&a, 1);
		char	  **bl1;
		Size	   *le1;
		double		t;
		int			nb;
		Sizes		sz = {0};

		double		ebest = 1e30,
					dbest = 1e30;

		nb = encode_all(d1, &a, rows, nrows, cuts, NULL, &bl1, &le1, &t);
		verify_all(d1, &a, rows, bl1, le1, cuts, nb);
		for (int b = 0; b < nb; b++)
			compress_block(bl1[b], le1[b], &sz, scratch, scratch_cap, zc);
		/* this column's encode and decode time, best of repeat */
		for (int i = 0; i < repeat; i++)
		{
			char	  **bl2;
			Size	   *le2;

			dbest = Min(dbest, decode_all(d1, bl1, le1, cuts, nb));
			(void) encode_all(d1, &a, rows, nrows, cuts, NULL, &bl2, &le2, &t);
			ebest = Min(ebest, t);
			free_blocks(bl2, le2, nb);
		}
		printf("%-16s %12zu %12zu %12zu %8.2f %8.2f %8.1f %8.1f",
			   columns[a].name, sz.raw, sz.lz4, sz.zstd,
			   (double) sz.lz4 / nrows, (double) sz.zstd / nrows,
			   ebest * 1e9 / nrows, dbest * 1e9 / nrows);
#ifdef CODEC_ENCODINGS
		{
			/* version 2 and 3 blocks: the encoding byte of the one column */
			static const char *const names[] = {"plain", "packed", "front",
			"dict", "for", "delta", "numeric", "array"};
			int			count[8] = {0};

			for (int b = 0; b < nb; b++)
				if (le1[b] > 16 && (uint8) bl1[b][16] < 8)
					count[(uint8) bl1[b][16]]++;
			printf("  ");
			for (int e = 0; e < 8; e++)
				if (count[e] > 0)
					printf(" %s %d", names[e], count[e]);
		}
#endif
		printf("\n");
		if (a < NCSV)
		{
			colsum.raw += sz.raw;
			colsum.lz4 += sz.lz4;
			colsum.zstd += sz.zstd;
		}
		free_blocks(bl1, le1, nb);
		free(d1);
	}
	printf("%-16s %12zu %12zu %12zu %8.2f %8.2f\n", "(columns alone)",
		   colsum.raw, colsum.lz4, colsum.zstd, (double) colsum.lz4 / nrows,
		   (double) colsum.zstd / nrows);
	printf("%-16s %12zu %12zu %12zu %8.2f %8.2f\n", "full rows",
		   total.raw, total.lz4, total.zstd, (double) total.lz4 / nrows,
		   (double) total.zstd / nrows);
	printf("ratio bytes before encoding / written: encoded %.2f, lz4 %.2f, zstd(1) %.2f\n",
		   (double) bytes_in / total.raw, (double) bytes_in / total.lz4,
		   (double) bytes_in / total.zstd);
	dict_sizes(blocks, lens, nblocks, bytes_in);
	printf("time per row (best of %d): encode %.1f ns, decode %.1f ns\n",
		   repeat, enc_best * 1e9 / nrows, dec_best * 1e9 / nrows);

	free_blocks(blocks, lens, nblocks);
	ZSTD_freeCCtx(zc);
	return 0;
}
