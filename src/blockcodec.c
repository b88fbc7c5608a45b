/*-------------------------------------------------------------------------
 *
 * blockcodec.c
 *	  Turn N rows into one block of column streams, and back.
 *
 * A spilled row is not written as a tuple.  The encoder collects the rows
 * of a block column by column, the way Apache DataFusion rewrites string
 * columns as a stream of lengths and a stream of bytes before compressing
 * them: similar things end up next to each other, which is what lz4 and
 * zstd feed on.  For each column it keeps
 *
 *	- a null bitmap (bit r set when row r is null), stored only when the
 *	  column had a null in this block;
 *	- for fixed-width types, the non-null values as byte planes: the first
 *	  byte of every value, then the second, and so on, with no alignment
 *	  padding (integers of a narrow range then leave long runs of equal
 *	  high bytes, which is what the codecs feed on);
 *	- for varlena and cstring types, a length stream (one varint per
 *	  non-null value: seven bits a byte, so one byte for a value shorter
 *	  than 64 bytes) and a value stream holding the bytes of the values
 *	  back to back.
 *
 * A plain varlena loses its header: only its data bytes are stored, and
 * the decoder builds a new header, 1-byte when the value is short and the
 * type may be packed, 4-byte otherwise, as heap_fill_tuple would.  A TOAST
 * pointer or an inline-compressed value is stored whole, header included,
 * and flagged "raw" in the low bit of its length entry, (len << 1) | raw:
 * detoasting it here would inflate the spill, and it is detoasted when
 * someone looks at it, as with a native sort.  Expanded objects are
 * flattened and indirect pointers followed first, since neither may
 * outlive the memory it points to.
 *
 * The raw block, all integers in native byte order:
 *
 *	block header, 8 bytes
 *		uint16	format version (COMPSPILL_BLOCK_VERSION)
 *		uint16	natts
 *		uint32	nrows
 *	then for each attribute, in tuple descriptor order:
 *		column header, 32 bytes
 *			uint8	kind (byval / fixed by-ref / varlena / cstring)
 *			uint8	flags (COMPSPILL_COL_HAS_NULLS)
 *			int16	attlen
 *			uint32	nnulls
 *			uint64	bitmap_len		0, or (nrows + 7) / 8 with nulls
 *			uint64	lengths_len		bytes of length entries, variable width
 *			uint64	values_len		bytes of the value stream / array
 *		null bitmap		bitmap_len bytes
 *		length stream	lengths_len bytes of varints
 *		value stream	values_len bytes
 *
 * Nothing is aligned inside a block; every multi-byte integer is read with
 * memcpy.  Decoding is in two steps.  CompSpillDecodeBlock is a pure
 * check of the bytes: the column headers against the tuple descriptor, the
 * streams against the block (they must add up to it exactly), the null
 * counts against the bitmaps, every length against its value stream, every
 * raw varlena's own header against its length.  On the way it works out
 * the most bytes one rebuilt row can take, with headers and alignment, and
 * aims a cursor at each column's streams.  Bad data makes it return false
 * with a sentence saying what is wrong; the caller reports it with the file
 * name and offset.  CompSpillDecodeNextRow then rebuilds one row at a time
 * from data known to be sound, into an arena the size of one row.  A merge
 * input thus costs its compressed and raw block and one row, not a whole
 * block of decoded rows, which is what lets the merge read many runs at
 * once within work_mem.
 *
 * The encoder caps the rows of a block at one per byte of its target (see
 * compspill_max_rows), so that rows of all-null columns still make blocks
 * of sane size.
 *
 * IDENTIFICATION
 *	  src/blockcodec.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>

#include "access/detoast.h"
#include "access/tupmacs.h"
#include "catalog/pg_type.h"
#include "port/pg_bitutils.h"
#include "utils/expandeddatum.h"
#include "utils/memutils.h"

#include "compspill.h"

#define COMPSPILL_BLOCK_VERSION			1
#define COMPSPILL_BLOCK_HEADER_SIZE		8
#define COMPSPILL_COLUMN_HEADER_SIZE	32

/* column kinds, decided by the tuple descriptor */
#define COMPSPILL_KIND_BYVAL			1	/* by value, attlen 1/2/4/8 */
#define COMPSPILL_KIND_FIXED			2	/* by reference, attlen > 0 */
#define COMPSPILL_KIND_VARLENA			3	/* attlen -1 */
#define COMPSPILL_KIND_CSTRING			4	/* attlen -2 */

/* column header flags */
#define COMPSPILL_COL_HAS_NULLS			0x01

/* low bit of a length entry: the value is a whole varlena, header included */
#define COMPSPILL_LEN_RAW				0x01

/* longest varint length entry: 32 bits at 7 a byte */
#define COMPSPILL_VARINT_MAX			5

/* largest value length we store; no varlena can be larger */
#define COMPSPILL_MAX_VALUE_LEN			((Size) 0x3FFFFFFF)

/* a growable byte buffer, kept across blocks */
typedef struct CompSpillStream
{
	char	   *data;
	Size		len;
	Size		cap;
} CompSpillStream;

typedef struct CompSpillEncoderColumn
{
	uint8		kind;
	int16		attlen;
	uint32		nnulls;			/* nulls in the current block */
	CompSpillStream bitmap;		/* len = bytes zeroed so far */
	CompSpillStream lengths;
	CompSpillStream values;
} CompSpillEncoderColumn;

struct CompSpillEncoder
{
	MemoryContext cxt;
	int			natts;
	Size		target_size;
	uint32		max_rows;
	uint32		nrows;
	int			nnullcols;		/* columns with a null in this block */
	Size		stream_bytes;	/* length and value bytes of all columns */
	char	   *flat;			/* scratch for flattened expanded objects */
	Size		flat_cap;
	CompSpillEncoderColumn cols[FLEXIBLE_ARRAY_MEMBER];
};

/* a column of a raw block, as found by compspill_parse_column */
typedef struct CompSpillColumnView
{
	uint8		kind;
	uint8		flags;
	int16		attlen;
	uint32		nnulls;
	uint32		nvalues;
	const char *bitmap;
	const char *lengths;
	const char *values;
	Size		bitmap_len;
	Size		lengths_len;
	Size		values_len;
} CompSpillColumnView;

/* where the next row's value of a column is, while a block is read */
typedef struct CompSpillColumnCursor
{
	uint8		kind;
	int16		attlen;
	char		attalign;		/* alignment of fixed-width values */
	char		valign;			/* alignment of 4-byte varlena headers */
	bool		may_pack;		/* may a short varlena get a 1-byte header? */
	const unsigned char *bitmap;	/* null bitmap, or NULL */
	const char *lengths;		/* next length entry */
	const char *values;			/* next value bytes */
	Size		planes_len;		/* bytes of byte planes to undo, or 0 */
} CompSpillColumnCursor;

static uint8 compspill_column_kind(Form_pg_attribute attr);
static uint32 compspill_max_rows(Size target_size);
static void compspill_stream_grow(MemoryContext cxt, CompSpillStream *s,
								  Size need);
static void compspill_encode_varlena(CompSpillEncoder *enc,
									 CompSpillEncoderColumn *col,
									 Datum value);
static void compspill_encode_cstring(CompSpillEncoder *enc,
									 CompSpillEncoderColumn *col,
									 Datum value);
static bool compspill_parse_column(const char *raw, Size rawlen, Size *pos,
								   Form_pg_attribute attr, int attnum,
								   uint32 nrows, CompSpillColumnView *view,
								   const char **errdetail);
static bool compspill_check_bitmap(const CompSpillColumnView *view,
								   int attnum, uint32 nrows,
								   const char **errdetail);
static bool compspill_check_raw(const char *src, Size len);
static bool compspill_measure_column(const CompSpillColumnView *view,
									 Form_pg_attribute attr, int attnum,
									 Size *max_size, const char **errdetail);

/*
 * Return how a column is stored, from its attribute.
 */
static uint8
compspill_column_kind(Form_pg_attribute attr)
{
	if (attr->attbyval)
	{
		if (attr->attlen == 1 || attr->attlen == 2 || attr->attlen == 4 ||
			(attr->attlen == 8 && SIZEOF_DATUM == 8))
			return COMPSPILL_KIND_BYVAL;
	}
	else if (attr->attlen > 0)
		return COMPSPILL_KIND_FIXED;
	else if (attr->attlen == -1)
		return COMPSPILL_KIND_VARLENA;
	else if (attr->attlen == -2)
		return COMPSPILL_KIND_CSTRING;

	elog(ERROR, "unsupported attribute \"%s\": length %d, by value %d",
		 NameStr(attr->attname), (int) attr->attlen, (int) attr->attbyval);
	return 0;					/* keep compiler quiet */
}

/*
 * Return the most rows a block may hold: one per byte of the target, so
 * that rows of all-null or tiny columns still make blocks of sane size.
 */
static uint32
compspill_max_rows(Size target_size)
{
	Size		rows = target_size;

	return (uint32) Max(Min(rows, (Size) PG_INT32_MAX), 1);
}

/*
 * Grow a stream buffer to hold at least need bytes, doubling its size.
 */
static void
compspill_stream_grow(MemoryContext cxt, CompSpillStream *s, Size need)
{
	Size		newcap = Max(s->cap, 64);

	while (newcap < need)
		newcap *= 2;
	if (s->data == NULL)
		s->data = MemoryContextAllocHuge(cxt, newcap);
	else
		s->data = repalloc_huge(s->data, newcap);
	s->cap = newcap;
}

/*
 * Return room for n more bytes at the end of a stream and count them in.
 */
static inline char *
compspill_stream_append(MemoryContext cxt, CompSpillStream *s, Size n)
{
	char	   *p;

	if (n > s->cap - s->len)
		compspill_stream_grow(cxt, s, s->len + n);
	p = s->data + s->len;
	s->len += n;
	return p;
}

/*
 * Append a length entry as a varint, seven bits a byte, low bits first;
 * return the bytes it took.  Most values are short, so most entries take
 * one byte instead of four, which leaves less for the codec to squeeze.
 */
static inline Size
compspill_put_varint(MemoryContext cxt, CompSpillStream *s, uint32 v)
{
	char	   *p = compspill_stream_append(cxt, s, COMPSPILL_VARINT_MAX);
	Size		n = 0;

	while (v >= 0x80)
	{
		p[n++] = (char) ((v & 0x7F) | 0x80);
		v >>= 7;
	}
	p[n++] = (char) v;
	s->len -= COMPSPILL_VARINT_MAX - n;
	return n;
}

/*
 * Read the varint at *p, which must not run past end; advance *p.  Return
 * false if it does, or if it is longer than a uint32 allows.
 */
static inline bool
compspill_get_varint(const char **p, const char *end, uint32 *v)
{
	uint32		result = 0;

	for (int shift = 0; shift < 35; shift += 7)
	{
		uint8		b;

		if (*p >= end)
			return false;
		b = (uint8) *(*p)++;
		if (shift == 28 && (b & 0x70) != 0)
			return false;
		result |= (uint32) (b & 0x7F) << shift;
		if ((b & 0x80) == 0)
		{
			*v = result;
			return true;
		}
	}
	return false;
}

/*
 * Create an encoder for rows of tupdesc in CurrentMemoryContext.
 */
CompSpillEncoder *
CompSpillEncoderCreate(TupleDesc tupdesc, Size target_size)
{
	CompSpillEncoder *enc;
	int			natts = tupdesc->natts;

	if (natts > PG_UINT16_MAX)
		elog(ERROR, "too many attributes for a spill block: %d", natts);

	enc = (CompSpillEncoder *)
		palloc0(offsetof(CompSpillEncoder, cols) +
				sizeof(CompSpillEncoderColumn) * natts);
	enc->cxt = CurrentMemoryContext;
	enc->natts = natts;
	enc->target_size = target_size;
	enc->max_rows = compspill_max_rows(target_size);

	for (int a = 0; a < natts; a++)
	{
		Form_pg_attribute attr = TupleDescAttr(tupdesc, a);

		CompSpillEncoderColumn *col = &enc->cols[a];

		col->kind = compspill_column_kind(attr);
		col->attlen = attr->attlen;

		/* the bitmap waits for a null; the value streams are always used */
		compspill_stream_grow(enc->cxt, &col->values, 256);
		if (col->kind == COMPSPILL_KIND_VARLENA ||
			col->kind == COMPSPILL_KIND_CSTRING)
			compspill_stream_grow(enc->cxt, &col->lengths, 256);
	}

	return enc;
}

/*
 * Append the data of one varlena value, or the whole value when it is
 * toasted or compressed, to a column.
 */
static void
compspill_encode_varlena(CompSpillEncoder *enc, CompSpillEncoderColumn *col,
						 Datum value)
{
	struct varlena *v = (struct varlena *) DatumGetPointer(value);
	const char *data;
	Size		len;
	uint32		entry;

	if (VARATT_IS_EXTERNAL_INDIRECT(v))
	{
		varatt_indirect redirect;

		VARATT_EXTERNAL_GET_POINTER(redirect, v);
		v = (struct varlena *) redirect.pointer;
		if (VARATT_IS_EXTERNAL_INDIRECT(v))
			elog(ERROR, "nested indirect varlena pointers are not supported");
	}

	if (VARATT_IS_EXTERNAL_EXPANDED(v))
	{
		ExpandedObjectHeader *eoh = DatumGetEOHP(PointerGetDatum(v));
		Size		flatsize = EOH_get_flat_size(eoh);

		if (flatsize > enc->flat_cap)
		{
			Size		newcap = Max(flatsize, 2 * enc->flat_cap);

			if (enc->flat != NULL)
				pfree(enc->flat);
			enc->flat = NULL;
			enc->flat_cap = 0;
			enc->flat = MemoryContextAllocHuge(enc->cxt, newcap);
			enc->flat_cap = newcap;
		}
		EOH_flatten_into(eoh, enc->flat, flatsize);
		v = (struct varlena *) enc->flat;
	}

	if (VARATT_IS_EXTERNAL_ONDISK(v) || VARATT_IS_COMPRESSED(v))
	{
		data = (const char *) v;
		len = VARSIZE_ANY(v);
		entry = COMPSPILL_LEN_RAW;
	}
	else if (VARATT_IS_EXTERNAL(v))
	{
		elog(ERROR, "unexpected external varlena with tag %d",
			 (int) VARTAG_EXTERNAL(v));
		return;					/* keep compiler quiet */
	}
	else
	{
		data = VARDATA_ANY(v);
		len = VARSIZE_ANY_EXHDR(v);
		entry = 0;
	}

	if (len > COMPSPILL_MAX_VALUE_LEN)
		elog(ERROR, "varlena of %zu bytes is too large to spill", len);
	entry |= (uint32) len << 1;

	enc->stream_bytes += compspill_put_varint(enc->cxt, &col->lengths, entry);
	memcpy(compspill_stream_append(enc->cxt, &col->values, len), data, len);
	enc->stream_bytes += len;
}

/*
 * Append one cstring value, without its terminating NUL, to a column.
 */
static void
compspill_encode_cstring(CompSpillEncoder *enc, CompSpillEncoderColumn *col,
						 Datum value)
{
	const char *str = DatumGetCString(value);
	Size		len = strlen(str);
	uint32		entry;

	if (len > COMPSPILL_MAX_VALUE_LEN)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("string of %zu bytes is too large to spill", len),
				 errdetail("Spilled values are limited to %zu bytes.",
						   COMPSPILL_MAX_VALUE_LEN)));
	entry = (uint32) len << 1;

	enc->stream_bytes += compspill_put_varint(enc->cxt, &col->lengths, entry);
	memcpy(compspill_stream_append(enc->cxt, &col->values, len), str, len);
	enc->stream_bytes += len;
}

/*
 * Append one row to the encoder's block.
 */
void
CompSpillEncoderAdd(CompSpillEncoder *enc, Datum *values, bool *isnull)
{
	uint32		row = enc->nrows;

	if (row >= PG_INT32_MAX)
		elog(ERROR, "too many rows in a spill block");

	for (int a = 0; a < enc->natts; a++)
	{
		CompSpillEncoderColumn *col = &enc->cols[a];
		char	   *p;

		if (isnull[a])
		{
			Size		byte = row >> 3;

			/* zero the bitmap up to this row's byte; Finish zeroes the rest */
			if (byte >= col->bitmap.len)
			{
				Size		n = byte + 1 - col->bitmap.len;

				memset(compspill_stream_append(enc->cxt, &col->bitmap, n), 0, n);
			}
			((unsigned char *) col->bitmap.data)[byte] |=
				(unsigned char) (1 << (row & 7));
			if (col->nnulls++ == 0)
				enc->nnullcols++;
			continue;
		}

		switch (col->kind)
		{
			case COMPSPILL_KIND_BYVAL:
				p = compspill_stream_append(enc->cxt, &col->values,
											col->attlen);
				switch (col->attlen)
				{
					case 1:
						*p = DatumGetChar(values[a]);
						break;
					case 2:
						{
							int16		v = DatumGetInt16(values[a]);

							memcpy(p, &v, sizeof(v));
							break;
						}
					case 4:
						{
							int32		v = DatumGetInt32(values[a]);

							memcpy(p, &v, sizeof(v));
							break;
						}
					default:
						{
							int64		v = DatumGetInt64(values[a]);

							memcpy(p, &v, sizeof(v));
							break;
						}
				}
				enc->stream_bytes += col->attlen;
				break;

			case COMPSPILL_KIND_FIXED:
				p = compspill_stream_append(enc->cxt, &col->values,
											col->attlen);
				memcpy(p, DatumGetPointer(values[a]), col->attlen);
				enc->stream_bytes += col->attlen;
				break;

			case COMPSPILL_KIND_VARLENA:
				compspill_encode_varlena(enc, col, values[a]);
				break;

			case COMPSPILL_KIND_CSTRING:
				compspill_encode_cstring(enc, col, values[a]);
				break;
		}
	}

	enc->nrows++;
}

/*
 * Return whether the block has reached its target size or row limit.
 */
bool
CompSpillEncoderIsFull(CompSpillEncoder *enc)
{
	return enc->nrows >= enc->max_rows ||
		CompSpillEncoderSize(enc) >= enc->target_size;
}

/*
 * Return the number of rows in the block being built.
 */
int
CompSpillEncoderRows(CompSpillEncoder *enc)
{
	return (int) enc->nrows;
}

/*
 * Return the exact number of bytes CompSpillEncoderFinish will write.
 */
Size
CompSpillEncoderSize(CompSpillEncoder *enc)
{
	return COMPSPILL_BLOCK_HEADER_SIZE +
		(Size) enc->natts * COMPSPILL_COLUMN_HEADER_SIZE +
		enc->stream_bytes +
		(Size) enc->nnullcols * (((Size) enc->nrows + 7) / 8);
}

/*
 * Copy an array of len / width values of width bytes to dst as byte
 * planes: the first byte of every value, then the second, and so on.
 * Integers of a narrow range then leave long runs of equal bytes (the high
 * ones), which the codecs compress far better than interleaved values.
 */
static void
compspill_shuffle(char *dst, const char *src, Size len, int width)
{
	Size		n = len / width;

	for (int k = 0; k < width; k++)
	{
		const char *s = src + k;
		char	   *d = dst + (Size) k * n;

		for (Size i = 0; i < n; i++, s += width)
			d[i] = *s;
	}
}

/*
 * Undo compspill_shuffle: rebuild the array of len / width values of width
 * bytes in dst from the byte planes in src.
 */
static void
compspill_unshuffle(char *dst, const char *src, Size len, int width)
{
	Size		n = len / width;

	for (int k = 0; k < width; k++)
	{
		const char *s = src + (Size) k * n;
		char	   *d = dst + k;

		for (Size i = 0; i < n; i++, d += width)
			*d = s[i];
	}
}

/*
 * Copy n bytes to *p and advance it.
 */
static inline void
compspill_put(char **p, const void *src, Size n)
{
	memcpy(*p, src, n);
	*p += n;
}

/*
 * Write the block to dst and empty the encoder, keeping its buffers.
 */
void
CompSpillEncoderFinish(CompSpillEncoder *enc, char *dst)
{
	char	   *p = dst;
	uint16		version = COMPSPILL_BLOCK_VERSION;
	uint16		natts = (uint16) enc->natts;
	uint32		nrows = enc->nrows;
	Size		bitmap_bytes = ((Size) nrows + 7) / 8;

	compspill_put(&p, &version, sizeof(version));
	compspill_put(&p, &natts, sizeof(natts));
	compspill_put(&p, &nrows, sizeof(nrows));

	for (int a = 0; a < enc->natts; a++)
	{
		CompSpillEncoderColumn *col = &enc->cols[a];
		uint8		flags = col->nnulls > 0 ? COMPSPILL_COL_HAS_NULLS : 0;
		uint64		bitmap_len = col->nnulls > 0 ? bitmap_bytes : 0;
		uint64		lengths_len = col->lengths.len;
		uint64		values_len = col->values.len;

		compspill_put(&p, &col->kind, sizeof(uint8));
		compspill_put(&p, &flags, sizeof(uint8));
		compspill_put(&p, &col->attlen, sizeof(int16));
		compspill_put(&p, &col->nnulls, sizeof(uint32));
		compspill_put(&p, &bitmap_len, sizeof(uint64));
		compspill_put(&p, &lengths_len, sizeof(uint64));
		compspill_put(&p, &values_len, sizeof(uint64));

		if (col->nnulls > 0)
		{
			compspill_put(&p, col->bitmap.data, col->bitmap.len);
			memset(p, 0, bitmap_bytes - col->bitmap.len);
			p += bitmap_bytes - col->bitmap.len;
		}
		if (col->lengths.len > 0)
			compspill_put(&p, col->lengths.data, col->lengths.len);
		if (col->values.len > 0 && col->kind != COMPSPILL_KIND_VARLENA &&
			col->kind != COMPSPILL_KIND_CSTRING && col->attlen > 1)
		{
			compspill_shuffle(p, col->values.data, col->values.len,
							  col->attlen);
			p += col->values.len;
		}
		else if (col->values.len > 0)
			compspill_put(&p, col->values.data, col->values.len);

		col->nnulls = 0;
		col->bitmap.len = 0;
		col->lengths.len = 0;
		col->values.len = 0;
	}

	Assert((Size) (p - dst) == CompSpillEncoderSize(enc));

	enc->nrows = 0;
	enc->nnullcols = 0;
	enc->stream_bytes = 0;
}

/*
 * Prepare an empty decoded block for rows of tupdesc.
 */
void
CompSpillDecodedBlockInit(CompSpillDecodedBlock *blk, TupleDesc tupdesc)
{
	MemSet(blk, 0, sizeof(CompSpillDecodedBlock));
	blk->natts = tupdesc->natts;
	blk->cxt = CurrentMemoryContext;
}

/*
 * Read and check the header of column attnum at *pos, and locate its
 * streams; advance *pos past them.
 */
static bool
compspill_parse_column(const char *raw, Size rawlen, Size *pos,
					   Form_pg_attribute attr, int attnum, uint32 nrows,
					   CompSpillColumnView *view, const char **errdetail)
{
	const char *h;
	uint8		kind = compspill_column_kind(attr);
	uint64		bitmap_len;
	uint64		lengths_len;
	uint64		values_len;

	if (rawlen - *pos < COMPSPILL_COLUMN_HEADER_SIZE)
	{
		*errdetail = psprintf("Column %d header exceeds the block.", attnum);
		return false;
	}
	h = raw + *pos;
	memcpy(&view->kind, h, sizeof(uint8));
	memcpy(&view->flags, h + 1, sizeof(uint8));
	memcpy(&view->attlen, h + 2, sizeof(int16));
	memcpy(&view->nnulls, h + 4, sizeof(uint32));
	memcpy(&bitmap_len, h + 8, sizeof(uint64));
	memcpy(&lengths_len, h + 16, sizeof(uint64));
	memcpy(&values_len, h + 24, sizeof(uint64));
	*pos += COMPSPILL_COLUMN_HEADER_SIZE;

	if (view->kind != kind)
	{
		*errdetail = psprintf("Column %d is stored as kind %u, expected %u.",
							  attnum, (unsigned) view->kind, (unsigned) kind);
		return false;
	}
	if (view->attlen != attr->attlen)
	{
		*errdetail = psprintf("Column %d is stored with length %d, expected %d.",
							  attnum, (int) view->attlen, (int) attr->attlen);
		return false;
	}
	if ((view->flags & ~COMPSPILL_COL_HAS_NULLS) != 0)
	{
		*errdetail = psprintf("Column %d has unknown flags 0x%02x.",
							  attnum, (unsigned) view->flags);
		return false;
	}
	if (view->nnulls > nrows)
	{
		*errdetail = psprintf("Column %d has %u nulls in a block of %u rows.",
							  attnum, view->nnulls, nrows);
		return false;
	}
	if ((view->flags & COMPSPILL_COL_HAS_NULLS) != 0)
	{
		if (view->nnulls == 0 || bitmap_len != ((uint64) nrows + 7) / 8)
		{
			*errdetail = psprintf("Column %d null bitmap is %llu bytes for %u nulls in %u rows.",
								  attnum, (unsigned long long) bitmap_len,
								  view->nnulls, nrows);
			return false;
		}
	}
	else if (view->nnulls != 0 || bitmap_len != 0)
	{
		*errdetail = psprintf("Column %d has %u nulls and a %llu-byte bitmap but no null flag.",
							  attnum, view->nnulls,
							  (unsigned long long) bitmap_len);
		return false;
	}

	view->nvalues = nrows - view->nnulls;
	if (kind == COMPSPILL_KIND_BYVAL || kind == COMPSPILL_KIND_FIXED)
	{
		if (lengths_len != 0 ||
			values_len != (uint64) view->nvalues * (uint64) view->attlen)
		{
			*errdetail = psprintf("Column %d holds %llu value bytes and %llu length bytes for %u values of %d bytes.",
								  attnum, (unsigned long long) values_len,
								  (unsigned long long) lengths_len,
								  view->nvalues, (int) view->attlen);
			return false;
		}
	}
	else if (lengths_len < (uint64) view->nvalues ||
			 lengths_len > (uint64) view->nvalues * COMPSPILL_VARINT_MAX)
	{
		*errdetail = psprintf("Column %d length stream is %llu bytes for %u values.",
							  attnum, (unsigned long long) lengths_len,
							  view->nvalues);
		return false;
	}

	if (bitmap_len > rawlen - *pos)
	{
		*errdetail = psprintf("Column %d null bitmap exceeds the block.", attnum);
		return false;
	}
	view->bitmap = raw + *pos;
	view->bitmap_len = (Size) bitmap_len;
	*pos += view->bitmap_len;

	if (lengths_len > rawlen - *pos)
	{
		*errdetail = psprintf("Column %d length stream exceeds the block.",
							  attnum);
		return false;
	}
	view->lengths = raw + *pos;
	view->lengths_len = (Size) lengths_len;
	*pos += view->lengths_len;

	if (values_len > rawlen - *pos)
	{
		*errdetail = psprintf("Column %d value stream exceeds the block.",
							  attnum);
		return false;
	}
	view->values = raw + *pos;
	view->values_len = (Size) values_len;
	*pos += view->values_len;

	return true;
}

/*
 * Check that a column's null bitmap holds exactly its null count, with
 * the bits past the last row clear.
 */
static bool
compspill_check_bitmap(const CompSpillColumnView *view, int attnum,
					   uint32 nrows, const char **errdetail)
{
	uint64		count;

	if (view->bitmap_len == 0)
		return true;

	if ((nrows & 7) != 0)
	{
		unsigned char last = (unsigned char) view->bitmap[view->bitmap_len - 1];

		if ((last >> (nrows & 7)) != 0)
		{
			*errdetail = psprintf("Column %d null bitmap has bits set past the last row.",
								  attnum);
			return false;
		}
	}

	count = pg_popcount(view->bitmap, (int) view->bitmap_len);
	if (count != view->nnulls)
	{
		*errdetail = psprintf("Column %d null bitmap marks %llu nulls, the header says %u.",
							  attnum, (unsigned long long) count, view->nnulls);
		return false;
	}
	return true;
}

/*
 * Return the arena offset, at or after off, where a variable-width value
 * goes, and set *size to the bytes it takes there.  first is the value's
 * first stored byte; it matters only for raw values.
 */
static inline Size
compspill_place_value(Size off, uint8 kind, uint32 entry, char first,
					  bool may_pack, char valign, Size *size)
{
	Size		len = entry >> 1;

	if (kind == COMPSPILL_KIND_CSTRING)
	{
		*size = len + 1;
		return off;
	}
	if ((entry & COMPSPILL_LEN_RAW) != 0)
	{
		*size = len;
		return VARATT_IS_4B(&first) ? att_align_nominal(off, valign) : off;
	}
	if (may_pack && len <= VARATT_SHORT_MAX - VARHDRSZ_SHORT)
	{
		*size = len + VARHDRSZ_SHORT;
		return off;
	}
	*size = len + VARHDRSZ;
	return att_align_nominal(off, valign);
}

/*
 * Check that a stored raw varlena is a TOAST pointer or a compressed value
 * whose own size is its stored length.
 */
static bool
compspill_check_raw(const char *src, Size len)
{
	varattrib_4b hdr;

	if (len < VARHDRSZ)
		return false;
	/* look at an aligned copy of the header word */
	memcpy(&hdr, src, VARHDRSZ);
	if (VARATT_IS_1B_E(&hdr))
		return VARTAG_EXTERNAL(&hdr) == VARTAG_ONDISK &&
			len == VARHDRSZ_EXTERNAL + sizeof(varatt_external);
	if (VARATT_IS_4B_C(&hdr))
		return len >= VARHDRSZ_COMPRESSED && VARSIZE_4B(&hdr) == len;
	return false;
}

/*
 * Check every value of a checked column against its streams and work out
 * the most bytes one rebuilt value of the column can take in a row's arena,
 * alignment padding included.
 */
static bool
compspill_measure_column(const CompSpillColumnView *view,
						 Form_pg_attribute attr, int attnum,
						 Size *max_size, const char **errdetail)
{
	Size		voff = 0;
	Size		maxsz = 0;
	const char *lp = view->lengths;
	const char *lend = view->lengths + view->lengths_len;
	char		valign;
	bool		may_pack;

	switch (view->kind)
	{
		case COMPSPILL_KIND_BYVAL:
			*max_size = 0;
			return true;

		case COMPSPILL_KIND_FIXED:
			*max_size = view->attlen + MAXIMUM_ALIGNOF;
			return true;

		default:
			break;
	}

	/* 4-byte headers get the type's alignment, at least int */
	valign = attr->attalign == TYPALIGN_DOUBLE ? TYPALIGN_DOUBLE : TYPALIGN_INT;
	/* values of plain-storage types must keep a 4-byte header */
	may_pack = attr->attstorage != TYPSTORAGE_PLAIN;

	for (uint32 i = 0; i < view->nvalues; i++)
	{
		uint32		entry;
		Size		len;
		Size		size;
		const char *src;
		char		first = '\0';

		if (!compspill_get_varint(&lp, lend, &entry))
		{
			*errdetail = psprintf("Column %d length %u is malformed or runs past the length stream.",
								  attnum, i + 1);
			return false;
		}
		len = entry >> 1;
		if (len > view->values_len - voff)
		{
			*errdetail = psprintf("Column %d value %u runs past the value stream.",
								  attnum, i + 1);
			return false;
		}
		src = view->values + voff;

		if (view->kind == COMPSPILL_KIND_CSTRING)
		{
			if ((entry & COMPSPILL_LEN_RAW) != 0)
			{
				*errdetail = psprintf("Column %d string %u is flagged as a raw varlena.",
									  attnum, i + 1);
				return false;
			}
			if (memchr(src, '\0', len) != NULL)
			{
				*errdetail = psprintf("Column %d string %u contains a NUL byte.",
									  attnum, i + 1);
				return false;
			}
		}
		else if ((entry & COMPSPILL_LEN_RAW) != 0)
		{
			if (!compspill_check_raw(src, len))
			{
				*errdetail = psprintf("Column %d raw value %u of %zu bytes is not a well-formed TOAST pointer or compressed value.",
									  attnum, i + 1, len);
				return false;
			}
			first = *src;
		}
		else if (len > COMPSPILL_MAX_VALUE_LEN - VARHDRSZ)
		{
			*errdetail = psprintf("Column %d value %u is too long: %zu bytes.",
								  attnum, i + 1, len);
			return false;
		}

		(void) compspill_place_value(0, view->kind, entry, first, may_pack,
									 valign, &size);
		maxsz = Max(maxsz, size);
		voff += len;
	}

	if (lp != lend)
	{
		*errdetail = psprintf("Column %d length stream has %zu bytes left over.",
							  attnum, (Size) (lend - lp));
		return false;
	}
	if (voff != view->values_len)
	{
		*errdetail = psprintf("Column %d value lengths add up to %zu bytes, but the value stream holds %zu.",
							  attnum, voff, view->values_len);
		return false;
	}

	*max_size = maxsz > 0 ? maxsz + MAXIMUM_ALIGNOF : 0;
	return true;
}

/*
 * Check a raw block of nrows rows and position blk before its first row;
 * on bad data return false with a sentence in *errdetail.  The rows are
 * read from raw itself, which must stay in place until the next call.
 */
bool
CompSpillDecodeBlock(CompSpillDecodedBlock *blk, TupleDesc tupdesc,
					 const char *raw, Size rawlen, int nrows,
					 const char **errdetail)
{
	int			natts = tupdesc->natts;
	uint16		hdr_version;
	uint16		hdr_natts;
	uint32		hdr_nrows;
	Size		pos;
	Size		arena_need = 0;
	Size		fixed_need = 0;
	Size		fixed_off = 0;
	CompSpillColumnView view;

	if (natts != blk->natts)
		elog(ERROR, "decoded block has %d attributes, tuple descriptor has %d",
			 blk->natts, natts);

	*errdetail = NULL;
	blk->nrows = 0;
	blk->row = 0;

	if (nrows < 0)
	{
		*errdetail = psprintf("Block row count %d is negative.", nrows);
		return false;
	}
	if (rawlen < COMPSPILL_BLOCK_HEADER_SIZE)
	{
		*errdetail = psprintf("Block of %zu bytes is shorter than its header.",
							  rawlen);
		return false;
	}
	memcpy(&hdr_version, raw, sizeof(uint16));
	memcpy(&hdr_natts, raw + 2, sizeof(uint16));
	memcpy(&hdr_nrows, raw + 4, sizeof(uint32));
	if (hdr_version != COMPSPILL_BLOCK_VERSION)
	{
		*errdetail = psprintf("Block format version is %u, expected %u.",
							  (unsigned) hdr_version,
							  (unsigned) COMPSPILL_BLOCK_VERSION);
		return false;
	}
	if (hdr_natts != natts)
	{
		*errdetail = psprintf("Block has %u columns, expected %d.",
							  (unsigned) hdr_natts, natts);
		return false;
	}
	if (hdr_nrows != (uint32) nrows)
	{
		*errdetail = psprintf("Block has %u rows, expected %d.",
							  hdr_nrows, nrows);
		return false;
	}

	if (blk->cols == NULL && natts > 0)
	{
		blk->cols = MemoryContextAllocZero(blk->cxt,
										   sizeof(CompSpillColumnCursor) * natts);
		blk->values = MemoryContextAllocZero(blk->cxt, sizeof(Datum) * natts);
		blk->isnull = MemoryContextAllocZero(blk->cxt, sizeof(bool) * natts);
	}

	/* check everything, measure the largest row, and aim the cursors */
	pos = COMPSPILL_BLOCK_HEADER_SIZE;
	for (int a = 0; a < natts; a++)
	{
		Form_pg_attribute attr = TupleDescAttr(tupdesc, a);
		CompSpillColumnCursor *cur = &blk->cols[a];
		Size		max_size;

		if (!compspill_parse_column(raw, rawlen, &pos, attr, a + 1,
									hdr_nrows, &view, errdetail) ||
			!compspill_check_bitmap(&view, a + 1, hdr_nrows, errdetail) ||
			!compspill_measure_column(&view, attr, a + 1, &max_size,
									  errdetail))
			return false;
		arena_need += max_size;

		cur->kind = view.kind;
		cur->attlen = view.attlen;
		cur->attalign = attr->attalign;
		cur->valign = attr->attalign == TYPALIGN_DOUBLE ?
			TYPALIGN_DOUBLE : TYPALIGN_INT;
		cur->may_pack = attr->attstorage != TYPSTORAGE_PLAIN;
		cur->bitmap = view.bitmap_len > 0 ?
			(const unsigned char *) view.bitmap : NULL;
		cur->lengths = view.lengths;
		cur->values = view.values;
		cur->planes_len = 0;
		if (view.kind != COMPSPILL_KIND_VARLENA &&
			view.kind != COMPSPILL_KIND_CSTRING && view.attlen > 1)
			cur->planes_len = view.values_len;
		fixed_need += cur->planes_len;
	}
	if (pos != rawlen)
	{
		*errdetail = psprintf("Block is %zu bytes, but its columns account for %zu.",
							  rawlen, pos);
		return false;
	}

	if (arena_need > blk->arena_cap)
	{
		Size		newcap = Max(arena_need, blk->arena_cap + blk->arena_cap / 4);

		if (blk->arena != NULL)
			pfree(blk->arena);
		blk->arena = NULL;
		blk->arena_cap = 0;
		blk->arena = MemoryContextAllocHuge(blk->cxt, newcap);
		blk->arena_cap = newcap;
	}

	/*
	 * Turn the byte planes of fixed-width columns back into arrays, once per
	 * block, so that each row reads its values from consecutive bytes.
	 */
	if (fixed_need > blk->fixed_cap)
	{
		Size		newcap = Max(fixed_need, blk->fixed_cap + blk->fixed_cap / 4);

		if (blk->fixed != NULL)
			pfree(blk->fixed);
		blk->fixed = NULL;
		blk->fixed_cap = 0;
		blk->fixed = MemoryContextAllocHuge(blk->cxt, newcap);
		blk->fixed_cap = newcap;
	}
	for (int a = 0; a < natts; a++)
	{
		CompSpillColumnCursor *cur = &blk->cols[a];

		if (cur->planes_len == 0)
			continue;
		compspill_unshuffle(blk->fixed + fixed_off, cur->values,
							cur->planes_len, cur->attlen);
		cur->values = blk->fixed + fixed_off;
		fixed_off += cur->planes_len;
	}
	Assert(fixed_off == fixed_need);

	blk->nrows = nrows;
	return true;
}

/*
 * Make the block's next row current in blk->values / blk->isnull; return
 * false after the last row.  The row's by-reference values live in the
 * block's arena until the next call.
 */
bool
CompSpillDecodeNextRow(CompSpillDecodedBlock *blk)
{
	int			r;
	Size		off = 0;

	if (blk->row >= blk->nrows)
		return false;
	r = blk->row++;

	for (int a = 0; a < blk->natts; a++)
	{
		CompSpillColumnCursor *cur = &blk->cols[a];
		uint32		entry = 0;
		Size		len;
		Size		size;
		char	   *dst;

		if (cur->bitmap != NULL &&
			(cur->bitmap[r >> 3] & (1 << (r & 7))) != 0)
		{
			blk->values[a] = (Datum) 0;
			blk->isnull[a] = true;
			continue;
		}
		blk->isnull[a] = false;

		switch (cur->kind)
		{
			case COMPSPILL_KIND_BYVAL:
				switch (cur->attlen)
				{
					case 1:
						blk->values[a] = CharGetDatum(*cur->values);
						break;
					case 2:
						{
							int16		v;

							memcpy(&v, cur->values, sizeof(v));
							blk->values[a] = Int16GetDatum(v);
							break;
						}
					case 4:
						{
							int32		v;

							memcpy(&v, cur->values, sizeof(v));
							blk->values[a] = Int32GetDatum(v);
							break;
						}
					default:
						{
							int64		v;

							memcpy(&v, cur->values, sizeof(v));
							blk->values[a] = Int64GetDatum(v);
							break;
						}
				}
				cur->values += cur->attlen;
				break;

			case COMPSPILL_KIND_FIXED:
				off = att_align_nominal(off, cur->attalign);
				if (off + cur->attlen > blk->arena_cap)
					elog(ERROR, "compspill block decoder overran its arena");
				dst = blk->arena + off;
				memcpy(dst, cur->values, cur->attlen);
				blk->values[a] = PointerGetDatum(dst);
				cur->values += cur->attlen;
				off += cur->attlen;
				break;

			default:
				/* checked by CompSpillDecodeBlock, so it cannot fail */
				(void) compspill_get_varint(&cur->lengths,
											cur->lengths + COMPSPILL_VARINT_MAX,
											&entry);
				len = entry >> 1;
				off = compspill_place_value(off, cur->kind, entry,
											len > 0 ? *cur->values : '\0',
											cur->may_pack, cur->valign, &size);
				if (off + size > blk->arena_cap)
					elog(ERROR, "compspill block decoder overran its arena");
				dst = blk->arena + off;

				if (cur->kind == COMPSPILL_KIND_CSTRING)
				{
					memcpy(dst, cur->values, len);
					dst[len] = '\0';
				}
				else if ((entry & COMPSPILL_LEN_RAW) != 0)
					memcpy(dst, cur->values, len);
				else if (size == len + VARHDRSZ_SHORT)
				{
					SET_VARSIZE_SHORT(dst, size);
					memcpy(dst + VARHDRSZ_SHORT, cur->values, len);
				}
				else
				{
					SET_VARSIZE(dst, size);
					memcpy(dst + VARHDRSZ, cur->values, len);
				}
				blk->values[a] = PointerGetDatum(dst);
				cur->values += len;
				off += size;
				break;
		}
	}

	return true;
}
