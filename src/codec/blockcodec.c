/*-------------------------------------------------------------------------
 *
 * blockcodec.c
 *	  Turn N rows into one block of column streams, and back.
 *
 * A spilled row is not written as a tuple.  The encoder collects the rows
 * of a block column by column, the way Apache DataFusion rewrites string
 * columns as a stream of lengths and a stream of bytes before compressing
 * them: similar things end up next to each other, which is what lz4 and
 * zstd feed on.  For each column it keeps, while rows are added,
 *
 *	- a null bitmap (bit r set when row r is null), stored only when the
 *	  column had a null in this block;
 *	- for fixed-width types, the non-null values as an array;
 *	- for varlena and cstring types, a length stream (one varint per
 *	  non-null value: seven bits a byte, so one byte for a value shorter
 *	  than 64 bytes) and a value stream holding the bytes of the values
 *	  back to back.
 *
 * Sort-aware encodings.  The rows of a block come from one sorted run, so
 * the leading sort key is ordered and other columns are often narrow or
 * repetitive; the codec is not told which column is which and needs no
 * hint.  When the block is finished (CompSpillEncoderSize decides, once per
 * block, and CompSpillEncoderFinish writes), each column's streams are
 * measured and written in the smallest of the encodings that apply, plain
 * when none is smaller.  The encoding is recorded in the column header.
 *
 *	fixed width, and 1-byte by-value columns
 *		PLAIN: byte planes, the first byte of every value, then the second
 *		and so on, with no padding (integers of a narrow range leave long
 *		runs of equal high bytes, which the codecs feed on).
 *	by-value integers of 2, 4 and 8 bytes (int2/4/8, date, timestamp, oid)
 *		PLAIN, or
 *		FOR: frame of reference, the smallest value (8 bytes), then every
 *		value minus it in "bits" bits, bit-packed;
 *		DELTA: the first value and the smallest difference between
 *		neighbours (8 bytes each), then every later value's difference
 *		from the one before minus that smallest difference, bit-packed.
 *		Sorted columns take a few bits a value; narrow ones (dates, small
 *		keys, line numbers) take the bits of their range.
 *	varlena
 *		PLAIN: length stream and value stream, as described above;
 *		PACKED: when every value is short (data of at most 126 bytes),
 *		inline and uncompressed, and the type may be packed: the values
 *		with their 1-byte varlena headers back to back and no length
 *		stream.  The decoder hands out pointers straight into the block.
 *		FRONT: front coding, for sorted or prefix-sharing columns: a
 *		stream of varints of the length shared with the previous value,
 *		then one of the lengths of the rest, then the rest of each value;
 *		DICT: for a handful of distinct values (at most 256, all of them
 *		short): the distinct values as 1-byte-header varlenas ("ndict" of
 *		them), then each row's index into them in "bits" bits, bit-packed;
 *		NUMERIC, for columns of type numeric whose values all have one
 *		display scale (at most 15) and fit an int64 once scaled by it (a
 *		price 52611.16 of numeric(15,2) is 5261116): the smallest such
 *		integer (8 bytes), the display scale (1 byte), then each integer
 *		less the smallest, bit-packed.  The decoder rebuilds each value's
 *		short on-disk form, which numeric.c keeps to itself; the encoder
 *		therefore checks that every value comes back byte for byte before
 *		choosing it, so a value it does not understand (NaN, infinity, a
 *		long-form numeric) only keeps the column in another encoding.
 *	cstring
 *		PLAIN only.
 *
 * A plain varlena loses its header: only its data bytes are stored, and
 * the decoder builds a new header, 1-byte when the value is short and the
 * type may be packed, 4-byte otherwise, as heap_fill_tuple would.  A TOAST
 * pointer or an inline-compressed value is stored whole, header included,
 * and flagged "raw" in the low bit of its length entry, (len << 1) | raw:
 * detoasting it here would inflate the spill, and it is detoasted when
 * someone looks at it, as with a native sort.  A column holding a raw value
 * is stored PLAIN.  Expanded objects are flattened and indirect pointers
 * followed first, since neither may outlive the memory it points to.
 *
 * The raw block, all integers in native byte order:
 *
 *	block header, 8 bytes
 *		uint16	format version (COMPSPILL_BLOCK_VERSION)
 *		uint16	natts
 *		uint32	nrows
 *	then for each attribute, in tuple descriptor order:
 *		column header, 40 bytes
 *			uint8	kind (byval / fixed by-ref / varlena / cstring)
 *			uint8	flags (COMPSPILL_COL_HAS_NULLS)
 *			int16	attlen
 *			uint32	nnulls
 *			uint8	encoding (COMPSPILL_ENC_*)
 *			uint8	bits			bit width of packed values or codes
 *			uint16	zero
 *			uint32	ndict			dictionary entries, DICT only
 *			uint64	bitmap_len		0, or (nrows + 7) / 8 with nulls
 *			uint64	lengths_len		bytes of the length stream(s)
 *			uint64	values_len		bytes of the value stream
 *		null bitmap		bitmap_len bytes
 *		length stream	lengths_len bytes of varints
 *		value stream	values_len bytes
 *
 * Nothing is aligned inside a block; every multi-byte integer is read with
 * memcpy.  Decoding is in two steps.  CompSpillDecodeBlock is a pure
 * check of the bytes: the column headers against the tuple descriptor, the
 * streams against the block (they must add up to it exactly), the null
 * counts against the bitmaps, every length against its value stream, every
 * raw varlena's own header against its length, every 1-byte header, every
 * shared prefix against the previous value, every dictionary code against
 * the dictionary, every unpacked integer against its type's range.  On the
 * way it works out the most bytes one rebuilt row can take, with headers
 * and alignment, undoes byte planes and integer bit packing into arrays
 * (the memory of the old byte-plane arrays, no more), and aims a cursor
 * at each column's streams; dictionary codes and numeric integers are
 * read from their packed bits row by row.  Bad data makes it return false with
 * a sentence saying what is wrong; the caller reports it with the file
 * name and offset.  CompSpillDecodeNextRow then produces one row at a time
 * from data known to be sound: integers from the arrays, packed and
 * dictionary varlenas as pointers into the block, front-coded values
 * rebuilt in place in one buffer per column (the shared prefix is already
 * there), numerics and plain ones into an arena the size of one row.  A merge input
 * thus costs its compressed and raw block and one row, not a whole block
 * of decoded rows, which is what lets the merge read many runs at once
 * within work_mem.
 *
 * The encoder caps the rows of a block at one per byte of its target (see
 * compspill_max_rows), so that rows of all-null columns still make blocks
 * of sane size.  Whether a block is full is judged on its plain size, so
 * that adding a row stays cheap; a block is thus at most its target, and
 * usually smaller once encoded.
 *
 * IDENTIFICATION
 *	  src/codec/blockcodec.c
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

#include "codec/blockcodec.h"
#include "compspill.h"

#define COMPSPILL_BLOCK_VERSION			2
#define COMPSPILL_BLOCK_HEADER_SIZE		8
#define COMPSPILL_COLUMN_HEADER_SIZE	40

/* column kinds, decided by the tuple descriptor */
#define COMPSPILL_KIND_BYVAL			1	/* by value, attlen 1/2/4/8 */
#define COMPSPILL_KIND_FIXED_BYREF		2	/* by reference, attlen > 0 */
#define COMPSPILL_KIND_VARLENA			3	/* attlen -1 */
#define COMPSPILL_KIND_CSTRING			4	/* attlen -2 */

/* column encodings, decided per block from the data */
#define COMPSPILL_ENC_PLAIN				0
#define COMPSPILL_ENC_PACKED			1	/* varlena, 1-byte headers kept */
#define COMPSPILL_ENC_FRONT				2	/* varlena, front coding */
#define COMPSPILL_ENC_DICT				3	/* varlena, dictionary + codes */
#define COMPSPILL_ENC_FOR				4	/* integer, frame of reference */
#define COMPSPILL_ENC_DELTA				5	/* integer, packed differences */
#define COMPSPILL_ENC_NUMERIC			6	/* numeric as a scaled integer */

/* column header flags */
#define COMPSPILL_COL_HAS_NULLS			0x01

/* low bit of a length entry: the value is a whole varlena, header included */
#define COMPSPILL_LEN_RAW				0x01

/* longest varint length entry: 32 bits at 7 a byte */
#define COMPSPILL_VARINT_MAX			5

/* largest value length we store; no varlena can be larger */
#define COMPSPILL_MAX_VALUE_LEN			((Size) 0x3FFFFFFF)

/* longest data of a value that fits a 1-byte varlena header */
#define COMPSPILL_SHORT_MAX				(VARATT_SHORT_MAX - VARHDRSZ_SHORT)

/* most distinct values of a dictionary-coded column in a block */
#define COMPSPILL_DICT_MAX				256
#define COMPSPILL_DICT_SLOTS			512 /* hash table, power of two */

/* how the decoder produces a column's values, one switch per row */
#define COMPSPILL_HOW_BYVAL1			0
#define COMPSPILL_HOW_BYVAL2			1
#define COMPSPILL_HOW_BYVAL4			2
#define COMPSPILL_HOW_BYVAL8			3
#define COMPSPILL_HOW_FIXED				4
#define COMPSPILL_HOW_VARLENA			5	/* plain varlena or cstring */
#define COMPSPILL_HOW_PACKED			6
#define COMPSPILL_HOW_DICT				7
#define COMPSPILL_HOW_FRONT				8
#define COMPSPILL_HOW_NUMERIC			9

/*
 * The short on-disk numeric (numeric.c keeps the format to itself; PG 15):
 * a uint16 header, then base-10000 digits as int16, most significant
 * first, no leading or trailing zero digits.
 */
#define COMPSPILL_NUMERIC_SHORT			0x8000
#define COMPSPILL_NUMERIC_FORM_MASK		0xC000
#define COMPSPILL_NUMERIC_SIGN			0x2000
#define COMPSPILL_NUMERIC_DSCALE_MASK	0x1F80
#define COMPSPILL_NUMERIC_DSCALE_SHIFT	7
#define COMPSPILL_NUMERIC_WEIGHT_SIGN	0x0040
#define COMPSPILL_NUMERIC_WEIGHT_MASK	0x003F
#define COMPSPILL_NUMERIC_DSCALE_MAX	15	/* 10^dscale fits in an int64 */
#define COMPSPILL_NUMERIC_MAX_DATA		20	/* header + 9 digits */

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
	bool		may_pack;		/* may a short varlena get a 1-byte header? */
	bool		is_numeric;		/* of type numeric? */
	uint32		nnulls;			/* nulls in the current block */
	uint32		nraw;			/* raw varlenas in the current block */
	uint32		maxlen;			/* longest plain varlena data, this block */
	CompSpillStream bitmap;		/* len = bytes zeroed so far */
	CompSpillStream lengths;
	CompSpillStream values;
	/* the encoding chosen for the block as it stands */
	uint8		enc;
	uint8		bits;
	uint32		ndict;
	Size		out_lengths;	/* bytes of the length stream(s) written */
	Size		out_values;		/* bytes of the value stream written */
	Size		out_aux;		/* FRONT: prefix varint bytes; DICT: bytes
								 * of the dictionary; NUMERIC: dscale */
} CompSpillEncoderColumn;

/* a dictionary entry while a block is encoded */
typedef struct CompSpillDictSlot
{
	const char *data;			/* NULL when the slot is free */
	uint32		len;
	uint32		code;
} CompSpillDictSlot;

struct CompSpillEncoder
{
	MemoryContext cxt;
	int			natts;
	Size		target_size;
	uint32		max_rows;
	uint32		nrows;
	int			nnullcols;		/* columns with a null in this block */
	Size		stream_bytes;	/* length and value bytes of all columns */
	uint32		chosen_rows;	/* rows the encodings were chosen for, or
								 * PG_UINT32_MAX */
	Size		chosen_size;	/* the block's size in those encodings */
	bool		light;			/* only the encodings that cost no time */
	char	   *flat;			/* scratch for flattened expanded objects */
	Size		flat_cap;
	CompSpillDictSlot *slots;	/* dictionary hash table, made on demand */
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
	uint8		enc;
	uint8		bits;
	uint32		ndict;
	const char *bitmap;
	const char *lengths;
	const char *values;
	Size		bitmap_len;
	Size		lengths_len;
	Size		values_len;
} CompSpillColumnView;

/* bit-packed values, low bits first, written or read one at a time */
typedef struct CompSpillBits
{
	unsigned char *wp;			/* writing: next byte */
	const unsigned char *rp;	/* reading: next byte */
	uint64		acc;			/* bits not yet written or returned */
	int			nbits;			/* how many */
} CompSpillBits;

/* where the next row's value of a column is, while a block is read */
typedef struct CompSpillColumnCursor
{
	uint8		how;			/* COMPSPILL_HOW_* */
	uint8		dscale;			/* NUMERIC: display scale */
	uint8		kind;
	int16		attlen;
	char		attalign;		/* alignment of fixed-width values */
	char		valign;			/* alignment of 4-byte varlena headers */
	bool		may_pack;		/* may a short varlena get a 1-byte header? */
	const unsigned char *bitmap;	/* null bitmap, or NULL */
	const char *lengths;		/* next length entry (FRONT: prefix) */
	const char *suffixes;		/* FRONT: next suffix length */
	const char *values;			/* next value bytes */
	CompSpillBits packed;		/* DICT: codes; NUMERIC: integers */
	uint64		base;			/* NUMERIC: the smallest integer */
	Datum	   *dict;			/* DICT: the entries */
	char	   *buf;			/* FRONT: the value, data at buf + VARHDRSZ */
	/* set while the block is checked */
	CompSpillColumnView view;
	Size		fixed_len;		/* bytes of arrays to build in blk->fixed */
	Size		buf_len;		/* FRONT: bytes of the rebuild buffer */
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
static void compspill_choose(CompSpillEncoder *enc);
static void compspill_choose_light(CompSpillEncoder *enc,
								   CompSpillEncoderColumn *col);
static bool compspill_parse_column(const char *raw, Size rawlen, Size *pos,
								   Form_pg_attribute attr, int attnum,
								   uint32 nrows, CompSpillColumnView *view,
								   const char **errdetail);
static bool compspill_check_bitmap(const CompSpillColumnView *view,
								   int attnum, uint32 nrows,
								   const char **errdetail);
static bool compspill_check_raw(const char *src, Size len);
static bool compspill_check_column(CompSpillColumnCursor *cur,
								   Form_pg_attribute attr, int attnum,
								   Size *max_size, const char **errdetail);
static bool compspill_setup_column(CompSpillDecodedBlock *blk,
								   CompSpillColumnCursor *cur, int attnum,
								   char **fixed, char **dicts, char **buf,
								   const char **errdetail);

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
		return COMPSPILL_KIND_FIXED_BYREF;
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
 * Grow a stream buffer to hold at least need bytes, keeping its contents.
 */
static void
compspill_stream_grow(MemoryContext cxt, CompSpillStream *s, Size need)
{
	Size		newcap = CompSpillGrowSize(Max(need, 64));

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
 * Write v as a varint at p, seven bits a byte, low bits first; return the
 * bytes it took (at most COMPSPILL_VARINT_MAX).
 */
static inline Size
compspill_write_varint(char *p, uint32 v)
{
	Size		n = 0;

	while (v >= 0x80)
	{
		p[n++] = (char) ((v & 0x7F) | 0x80);
		v >>= 7;
	}
	p[n++] = (char) v;
	return n;
}

/*
 * Return the bytes v takes as a varint.
 */
static inline Size
compspill_varint_size(uint32 v)
{
	return v < 0x80 ? 1 : v < 0x4000 ? 2 : v < 0x200000 ? 3 :
		v < 0x10000000 ? 4 : 5;
}

/*
 * Append a length entry as a varint; return the bytes it took.  Most
 * values are short, so most entries take one byte instead of four, which
 * leaves less for the codec to squeeze.
 */
static inline Size
compspill_put_varint(MemoryContext cxt, CompSpillStream *s, uint32 v)
{
	char	   *p = compspill_stream_append(cxt, s, COMPSPILL_VARINT_MAX);
	Size		n = compspill_write_varint(p, v);

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
 * Read a varint already checked to be well formed; advance *p.
 */
static inline uint32
compspill_next_varint(const char **p)
{
	uint8		b = (uint8) *(*p)++;
	uint32		result;
	int			shift;

	if (likely(b < 0x80))
		return b;
	result = b & 0x7F;
	shift = 7;
	do
	{
		b = (uint8) *(*p)++;
		result |= (uint32) (b & 0x7F) << shift;
		shift += 7;
	} while ((b & 0x80) != 0);
	return result;
}

/*
 * Return the bits needed to hold every value from 0 to range.
 */
static inline int
compspill_bit_width(uint64 range)
{
	return range == 0 ? 0 : pg_leftmost_one_pos64(range) + 1;
}

/*
 * Return the bytes n values of width bits take, bit-packed.
 */
static inline uint64
compspill_packed_size(uint64 n, int width)
{
	return (n * (uint64) width + 7) / 8;
}

/*
 * Append the low width bits of v (v < 2^width) to a bit-packed stream.
 */
static inline void
compspill_bits_put(CompSpillBits *b, uint64 v, int width)
{
	if (width > 56)
	{
		compspill_bits_put(b, v & UINT64CONST(0xFFFFFFFF), 32);
		compspill_bits_put(b, v >> 32, width - 32);
		return;
	}
	b->acc |= v << b->nbits;
	b->nbits += width;
	while (b->nbits >= 8)
	{
		*b->wp++ = (unsigned char) b->acc;
		b->acc >>= 8;
		b->nbits -= 8;
	}
}

/*
 * Write out the last, partly filled byte of a bit-packed stream.
 */
static inline void
compspill_bits_flush(CompSpillBits *b)
{
	if (b->nbits > 0)
		*b->wp++ = (unsigned char) b->acc;
	b->acc = 0;
	b->nbits = 0;
}

/*
 * Return the next width bits of a bit-packed stream whose length has been
 * checked to hold them.
 */
static inline uint64
compspill_bits_get(CompSpillBits *b, int width)
{
	uint64		v;

	if (width > 56)
	{
		uint64		lo = compspill_bits_get(b, 32);

		return lo | (compspill_bits_get(b, width - 32) << 32);
	}
	while (b->nbits < width)
	{
		b->acc |= (uint64) *b->rp++ << b->nbits;
		b->nbits += 8;
	}
	v = b->acc & ((UINT64CONST(1) << width) - 1);
	b->acc >>= width;
	b->nbits -= width;
	return v;
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
	enc->chosen_rows = PG_UINT32_MAX;

	for (int a = 0; a < natts; a++)
	{
		Form_pg_attribute attr = TupleDescAttr(tupdesc, a);

		CompSpillEncoderColumn *col = &enc->cols[a];

		col->kind = compspill_column_kind(attr);
		col->attlen = attr->attlen;
		col->may_pack = attr->attstorage != TYPSTORAGE_PLAIN;
		col->is_numeric = attr->atttypid == NUMERICOID;

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
			Size		newcap = CompSpillGrowSize(flatsize);

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
		col->nraw++;
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
	if (len > col->maxlen)
		col->maxlen = (uint32) len;

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

			case COMPSPILL_KIND_FIXED_BYREF:
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
 * Return the bytes of the block in plain encodings: what judging fullness
 * goes by, and an upper bound of the encoded size.
 */
static inline Size
compspill_plain_size(CompSpillEncoder *enc)
{
	return COMPSPILL_BLOCK_HEADER_SIZE +
		(Size) enc->natts * COMPSPILL_COLUMN_HEADER_SIZE +
		enc->stream_bytes +
		(Size) enc->nnullcols * (((Size) enc->nrows + 7) / 8);
}

/*
 * Return whether the block has reached its target size or row limit.
 */
bool
CompSpillEncoderIsFull(CompSpillEncoder *enc)
{
	return enc->nrows >= enc->max_rows ||
		compspill_plain_size(enc) >= enc->target_size;
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
 * Return the exact number of bytes CompSpillEncoderFinish will write,
 * choosing the columns' encodings if the block changed since last asked.
 */
Size
CompSpillEncoderSize(CompSpillEncoder *enc)
{
	if (enc->chosen_rows != enc->nrows)
		compspill_choose(enc);
	return enc->chosen_size;
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
 * Return the i-th value of an array of width-byte integers, sign-extended.
 */
static inline int64
compspill_int_at(const char *p, Size i, int width)
{
	switch (width)
	{
		case 2:
			{
				int16		v;

				memcpy(&v, p + i * 2, sizeof(v));
				return v;
			}
		case 4:
			{
				int32		v;

				memcpy(&v, p + i * 4, sizeof(v));
				return v;
			}
		default:
			{
				int64		v;

				memcpy(&v, p + i * 8, sizeof(v));
				return v;
			}
	}
}

/*
 * Choose FOR, DELTA or PLAIN for a by-value integer column: whichever
 * takes the fewest bytes, PLAIN on a tie.
 */
static void
compspill_choose_int(CompSpillEncoderColumn *col)
{
	Size		n = col->values.len / col->attlen;
	int64		v,
				prev,
				min,
				max;
	int64		dmin = 0,
				dmax = 0;
	int			for_bits,
				delta_bits;
	Size		for_size,
				delta_size;

	if (n == 0)
		return;
	prev = min = max = compspill_int_at(col->values.data, 0, col->attlen);
	for (Size i = 1; i < n; i++)
	{
		int64		d;

		v = compspill_int_at(col->values.data, i, col->attlen);
		/* differences wrap around, as the decoder adds them back */
		d = (int64) ((uint64) v - (uint64) prev);
		if (i == 1)
			dmin = dmax = d;
		else if (d < dmin)
			dmin = d;
		else if (d > dmax)
			dmax = d;
		if (v < min)
			min = v;
		else if (v > max)
			max = v;
		prev = v;
	}

	for_bits = compspill_bit_width((uint64) max - (uint64) min);
	for_size = sizeof(int64) + compspill_packed_size(n, for_bits);
	delta_bits = compspill_bit_width((uint64) dmax - (uint64) dmin);
	delta_size = 2 * sizeof(int64) + compspill_packed_size(n - 1, delta_bits);

	if (for_size < col->values.len && for_size <= delta_size)
	{
		col->enc = COMPSPILL_ENC_FOR;
		col->bits = (uint8) for_bits;
		col->out_values = for_size;
	}
	else if (delta_size < col->values.len)
	{
		col->enc = COMPSPILL_ENC_DELTA;
		col->bits = (uint8) delta_bits;
		col->out_values = delta_size;
	}
}

/*
 * Return how many leading bytes a and b share, at most n.
 */
static inline Size
compspill_common_prefix(const char *a, const char *b, Size n)
{
	Size		i = 0;

	while (i + 8 <= n)
	{
		uint64		x,
					y;

		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		if (x != y)
		{
#ifdef WORDS_BIGENDIAN
			return i + (63 - pg_leftmost_one_pos64(x ^ y)) / 8;
#else
			return i + pg_rightmost_one_pos64(x ^ y) / 8;
#endif
		}
		i += 8;
	}
	while (i < n && a[i] == b[i])
		i++;
	return i;
}

/*
 * Return a hash of len bytes at p, for the dictionary.
 */
static inline uint32
compspill_hash(const char *p, Size len)
{
	uint64		h = (uint64) len * UINT64CONST(0x9E3779B97F4A7C15);

	while (len >= 8)
	{
		uint64		w;

		memcpy(&w, p, 8);
		h = (h ^ w) * UINT64CONST(0xFF51AFD7ED558CCD);
		p += 8;
		len -= 8;
	}
	while (len > 0)
	{
		h = (h ^ (uint8) *p++) * UINT64CONST(0xC4CEB9FE1A85EC53);
		len--;
	}
	return (uint32) (h ^ (h >> 32));
}

/*
 * Find the value in the dictionary hash table, or enter it with the next
 * code if there is room; return its code, or -1 when the table is full.
 */
static inline int
compspill_dict_code(CompSpillDictSlot *slots, uint32 *ndict,
					const char *data, uint32 len)
{
	uint32		i = compspill_hash(data, len) & (COMPSPILL_DICT_SLOTS - 1);

	for (;;)
	{
		CompSpillDictSlot *slot = &slots[i];

		if (slot->data == NULL)
		{
			if (*ndict >= COMPSPILL_DICT_MAX)
				return -1;
			slot->data = data;
			slot->len = len;
			slot->code = (*ndict)++;
			return (int) slot->code;
		}
		if (slot->len == len && memcmp(slot->data, data, len) == 0)
			return (int) slot->code;
		i = (i + 1) & (COMPSPILL_DICT_SLOTS - 1);
	}
}

/* 10^k, for k from 0 to 19 */
static const uint64 compspill_pow10[20] = {
	UINT64CONST(1), UINT64CONST(10), UINT64CONST(100), UINT64CONST(1000),
	UINT64CONST(10000), UINT64CONST(100000), UINT64CONST(1000000),
	UINT64CONST(10000000), UINT64CONST(100000000), UINT64CONST(1000000000),
	UINT64CONST(10000000000), UINT64CONST(100000000000),
	UINT64CONST(1000000000000), UINT64CONST(10000000000000),
	UINT64CONST(100000000000000), UINT64CONST(1000000000000000),
	UINT64CONST(10000000000000000), UINT64CONST(100000000000000000),
	UINT64CONST(1000000000000000000), UINT64CONST(10000000000000000000)
};

/*
 * Write the short on-disk numeric (header and digits, no varlena header)
 * whose value is u / 10^dscale, as numeric.c would store it, at out;
 * return its length, at most COMPSPILL_NUMERIC_MAX_DATA.  This is on the
 * per-row path: the digits come from divisions by the constant 10000.
 */
static inline Size
compspill_int_to_numeric(int64 u, int dscale, char *out)
{
	bool		neg = u < 0;
	uint64		a = neg ? (uint64) 0 - (uint64) u : (uint64) u;
	int			fgroups = (dscale + 3) / 4;
	int16		groups[10];		/* least significant first */
	int			ng = 0;
	int			low = 0;
	int			weight = 0;
	uint16		header;
	char	   *p;

	/*
	 * value * 10000^fgroups as an integer, whose base-10000 digits are the
	 * numeric's; when that does not fit, the fraction goes separately.
	 */
	if (likely(a <= PG_UINT64_MAX / 1000))
	{
		uint64		scaled = a * compspill_pow10[4 * fgroups - dscale];

		while (scaled > 0)
		{
			groups[ng++] = (int16) (scaled % 10000);
			scaled /= 10000;
		}
	}
	else
	{
		uint64		ip = a / compspill_pow10[dscale];
		uint64		fp = (a % compspill_pow10[dscale]) *
			compspill_pow10[4 * fgroups - dscale];

		for (int k = 0; k < fgroups; k++)
		{
			groups[ng++] = (int16) (fp % 10000);
			fp /= 10000;
		}
		while (ip > 0)
		{
			groups[ng++] = (int16) (ip % 10000);
			ip /= 10000;
		}
		while (ng > 0 && groups[ng - 1] == 0)
			ng--;
	}

	/* no trailing zero digits; zero has none at all, and no sign */
	while (low < ng && groups[low] == 0)
		low++;
	if (low == ng)
		neg = false;
	else
		weight = ng - 1 - fgroups;

	header = COMPSPILL_NUMERIC_SHORT | (neg ? COMPSPILL_NUMERIC_SIGN : 0) |
		(uint16) (dscale << COMPSPILL_NUMERIC_DSCALE_SHIFT) |
		(weight < 0 ? COMPSPILL_NUMERIC_WEIGHT_SIGN : 0) |
		(uint16) (weight & COMPSPILL_NUMERIC_WEIGHT_MASK);
	memcpy(out, &header, sizeof(header));
	p = out + sizeof(header);
	for (int i = ng - 1; i >= low; i--)
	{
		memcpy(p, &groups[i], sizeof(int16));
		p += sizeof(int16);
	}
	return (Size) (p - out);
}

/*
 * Read a short on-disk numeric of len bytes as the integer *u = value *
 * 10^dscale; return false if it is not one, or does not fit, or is not in
 * the canonical form (no leading or trailing zero digits, zero without
 * sign or weight) that compspill_int_to_numeric rebuilds byte for byte.
 */
static bool
compspill_numeric_to_int(const char *data, Size len, int *dscale, int64 *u)
{
	uint16		header;
	int			ds,
				weight,
				nd,
				fgroups;
	uint64		acc = 0;
	uint64		div;
	char		check[COMPSPILL_NUMERIC_MAX_DATA];

	if (len < sizeof(header) || len > COMPSPILL_NUMERIC_MAX_DATA ||
		(len & 1) != 0)
		return false;
	memcpy(&header, data, sizeof(header));
	if ((header & COMPSPILL_NUMERIC_FORM_MASK) != COMPSPILL_NUMERIC_SHORT)
		return false;
	ds = (header & COMPSPILL_NUMERIC_DSCALE_MASK) >>
		COMPSPILL_NUMERIC_DSCALE_SHIFT;
	if (ds > COMPSPILL_NUMERIC_DSCALE_MAX)
		return false;
	weight = (header & COMPSPILL_NUMERIC_WEIGHT_MASK) -
		((header & COMPSPILL_NUMERIC_WEIGHT_SIGN) ? 64 : 0);
	nd = (int) (len - sizeof(header)) / 2;
	fgroups = (ds + 3) / 4;
	if (nd > 0 && nd - 1 - weight > fgroups)
		return false;			/* digits below the display scale */
	if (nd == 0)
	{
		if (header != (COMPSPILL_NUMERIC_SHORT |
					   (uint16) (ds << COMPSPILL_NUMERIC_DSCALE_SHIFT)))
			return false;		/* a zero with a sign or a weight */
	}
	else
	{
		int16		lead,
					trail;

		memcpy(&lead, data + sizeof(header), sizeof(lead));
		memcpy(&trail, data + len - sizeof(trail), sizeof(trail));
		if (lead == 0 || trail == 0)
			return false;
	}

	for (int pos = weight; pos >= -fgroups; pos--)
	{
		int			i = weight - pos;
		int16		d = 0;

		if (i < nd)
			memcpy(&d, data + sizeof(header) + 2 * i, sizeof(d));
		if (d < 0 || d >= 10000 ||
			__builtin_mul_overflow(acc, (uint64) 10000, &acc) ||
			__builtin_add_overflow(acc, (uint64) d, &acc))
			return false;
	}
	div = compspill_pow10[4 * fgroups - ds];
	if (acc % div != 0 || acc / div > (uint64) PG_INT64_MAX)
		return false;
	*u = (int64) (acc / div);
	if ((header & COMPSPILL_NUMERIC_SIGN) != 0)
		*u = -*u;
	*dscale = ds;

	/* canonical form comes back exactly; make sure in assert-enabled builds */
	Assert(compspill_int_to_numeric(*u, ds, check) == len &&
		   memcmp(check, data, len) == 0);
	(void) check;
	return true;
}

/*
 * Empty the dictionary hash table, making it on first use.
 */
static void
compspill_dict_reset(CompSpillEncoder *enc)
{
	if (enc->slots == NULL)
		enc->slots = MemoryContextAlloc(enc->cxt, sizeof(CompSpillDictSlot) *
										COMPSPILL_DICT_SLOTS);
	memset(enc->slots, 0, sizeof(CompSpillDictSlot) * COMPSPILL_DICT_SLOTS);
}

/*
 * Check that every value of a numeric column is a short numeric of one
 * display scale that compspill_int_to_numeric rebuilds exactly; set *bits
 * to the bits of the range of their integers and *dscale.  With base, set
 * *base to the smallest integer.
 */
static bool
compspill_numeric_range(CompSpillEncoderColumn *col, int *bits, int *dscale,
						int64 *base)
{
	const char *lp = col->lengths.data;
	const char *lend = col->lengths.data + col->lengths.len;
	const char *vp = col->values.data;
	int64		min = 0,
				max = 0;
	bool		first = true;

	while (lp < lend)
	{
		uint32		entry = 0;
		Size		len;
		int			ds;
		int64		u;

		(void) compspill_get_varint(&lp, lend, &entry);
		len = entry >> 1;
		if (!compspill_numeric_to_int(vp, len, &ds, &u))
			return false;
		if (first)
		{
			*dscale = ds;
			min = max = u;
			first = false;
		}
		else if (ds != *dscale)
			return false;
		min = Min(min, u);
		max = Max(max, u);
		vp += len;
	}
	*bits = compspill_bit_width((uint64) max - (uint64) min);
	if (base)
		*base = min;
	return !first;
}

/*
 * Choose PLAIN, PACKED, FRONT, DICT or NUMERIC for a varlena column: the
 * fewest bytes wins; on a tie PACKED (decoded without a copy), then PLAIN.
 */
static void
compspill_choose_varlena(CompSpillEncoder *enc, CompSpillEncoderColumn *col)
{
	uint32		n = enc->nrows - col->nnulls;
	bool		packable;
	Size		best;
	Size		front_lens = 0;
	Size		front_prefix = 0;
	Size		front_rest = 0;
	Size		dict_bytes = 0;
	uint32		ndict = 0;
	bool		dict_ok;
	const char *lp = col->lengths.data;
	const char *lend = col->lengths.data + col->lengths.len;
	const char *vp = col->values.data;
	const char *prev = NULL;
	Size		prevlen = 0;
	int			bits_n = 0;
	int			dscale_n = 0;

	/* values with raw varlenas stay plain, lengths and all */
	if (n == 0 || col->nraw > 0)
		return;

	packable = col->may_pack && col->maxlen <= COMPSPILL_SHORT_MAX;
	best = col->lengths.len + col->values.len;
	if (packable && (Size) n + col->values.len <= best)
	{
		col->enc = COMPSPILL_ENC_PACKED;
		best = (Size) n + col->values.len;
		col->out_lengths = 0;
		col->out_values = best;
	}

	dict_ok = packable;
	if (dict_ok)
		compspill_dict_reset(enc);

	while (lp < lend)
	{
		uint32		entry = 0;
		Size		len;
		Size		shared;

		(void) compspill_get_varint(&lp, lend, &entry);
		len = entry >> 1;

		shared = prev == NULL ? 0 :
			compspill_common_prefix(prev, vp, Min(len, prevlen));
		front_prefix += compspill_varint_size((uint32) shared);
		front_lens += compspill_varint_size((uint32) (len - shared));
		front_rest += len - shared;

		if (dict_ok)
		{
			uint32		before = ndict;

			if (compspill_dict_code(enc->slots, &ndict, vp, (uint32) len) < 0)
				dict_ok = false;
			else if (ndict > before)
				dict_bytes += VARHDRSZ_SHORT + len;
		}

		prev = vp;
		prevlen = len;
		vp += len;
	}

	if (col->is_numeric)
	{
		Size		size;

		if (compspill_numeric_range(col, &bits_n, &dscale_n, NULL) &&
			(size = sizeof(int64) + 1 +
			 compspill_packed_size(n, bits_n)) < best &&
			size < front_prefix + front_lens + front_rest)
		{
			col->enc = COMPSPILL_ENC_NUMERIC;
			col->bits = (uint8) bits_n;
			col->out_lengths = 0;
			col->out_values = size;
			col->out_aux = (Size) dscale_n;
			best = size;
		}
	}
	if (front_prefix + front_lens + front_rest < best)
	{
		col->enc = COMPSPILL_ENC_FRONT;
		best = front_prefix + front_lens + front_rest;
		col->out_lengths = front_prefix + front_lens;
		col->out_values = front_rest;
		col->out_aux = front_prefix;
	}
	if (dict_ok)
	{
		int			bits = compspill_bit_width(ndict - 1);
		Size		size = dict_bytes + compspill_packed_size(n, bits);

		if (size < best)
		{
			col->enc = COMPSPILL_ENC_DICT;
			col->bits = (uint8) bits;
			col->ndict = ndict;
			col->out_lengths = 0;
			col->out_values = size;
			col->out_aux = dict_bytes;
		}
	}
}

/*
 * Choose a column's encoding among those that cost nothing to find: plain,
 * or short varlenas with their 1-byte headers kept (which also decode
 * without a copy).  For blocks whose I/O costs next to nothing.
 */
static void
compspill_choose_light(CompSpillEncoder *enc, CompSpillEncoderColumn *col)
{
	uint32		n = enc->nrows - col->nnulls;

	if (col->kind != COMPSPILL_KIND_VARLENA || n == 0 || col->nraw > 0)
		return;
	if (col->may_pack && col->maxlen <= COMPSPILL_SHORT_MAX &&
		(Size) n <= col->lengths.len)
	{
		col->enc = COMPSPILL_ENC_PACKED;
		col->out_lengths = 0;
		col->out_values = (Size) n + col->values.len;
	}
}

/*
 * Use only the encodings that cost no time to choose (light), or all of
 * them, from the next block on.
 */
void
CompSpillEncoderSetLight(CompSpillEncoder *enc, bool light)
{
	if (enc->light != light)
	{
		enc->light = light;
		enc->chosen_rows = PG_UINT32_MAX;
	}
}

/*
 * Choose each column's encoding for the block as it stands, and work out
 * the block's size in them.
 */
static void
compspill_choose(CompSpillEncoder *enc)
{
	Size		size = COMPSPILL_BLOCK_HEADER_SIZE +
		(Size) enc->nnullcols * (((Size) enc->nrows + 7) / 8);

	for (int a = 0; a < enc->natts; a++)
	{
		CompSpillEncoderColumn *col = &enc->cols[a];

		col->enc = COMPSPILL_ENC_PLAIN;
		col->bits = 0;
		col->ndict = 0;
		col->out_lengths = col->lengths.len;
		col->out_values = col->values.len;
		col->out_aux = 0;

		if (enc->light)
			compspill_choose_light(enc, col);
		else if (col->kind == COMPSPILL_KIND_BYVAL && col->attlen > 1)
			compspill_choose_int(col);
		else if (col->kind == COMPSPILL_KIND_VARLENA)
			compspill_choose_varlena(enc, col);

		size += COMPSPILL_COLUMN_HEADER_SIZE + col->out_lengths +
			col->out_values;
	}
	enc->chosen_size = size;
	enc->chosen_rows = enc->nrows;
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
 * Write a FOR or DELTA integer column's value stream at p.
 */
static void
compspill_write_int(CompSpillEncoderColumn *col, char *p)
{
	Size		n = col->values.len / col->attlen;
	CompSpillBits b = {0};
	int64		first = compspill_int_at(col->values.data, 0, col->attlen);

	if (col->enc == COMPSPILL_ENC_FOR)
	{
		int64		min = first;

		for (Size i = 1; i < n; i++)
			min = Min(min, compspill_int_at(col->values.data, i, col->attlen));
		compspill_put(&p, &min, sizeof(min));
		b.wp = (unsigned char *) p;
		for (Size i = 0; i < n; i++)
		{
			int64		v = compspill_int_at(col->values.data, i, col->attlen);

			compspill_bits_put(&b, (uint64) v - (uint64) min, col->bits);
		}
	}
	else
	{
		int64		prev = first;
		int64		dmin = PG_INT64_MAX;

		for (Size i = 1; i < n; i++)
		{
			int64		v = compspill_int_at(col->values.data, i, col->attlen);

			dmin = Min(dmin, (int64) ((uint64) v - (uint64) prev));
			prev = v;
		}
		compspill_put(&p, &first, sizeof(first));
		compspill_put(&p, &dmin, sizeof(dmin));
		b.wp = (unsigned char *) p;
		prev = first;
		for (Size i = 1; i < n; i++)
		{
			int64		v = compspill_int_at(col->values.data, i, col->attlen);

			compspill_bits_put(&b, (uint64) v - (uint64) prev - (uint64) dmin,
							   col->bits);
			prev = v;
		}
	}
	compspill_bits_flush(&b);
}

/*
 * Write a NUMERIC column's value stream at p: the smallest integer, the
 * display scale, then each integer less the smallest, bit-packed.
 */
static void
compspill_write_numeric(CompSpillEncoderColumn *col, char *p)
{
	const char *lp = col->lengths.data;
	const char *lend = col->lengths.data + col->lengths.len;
	const char *vp = col->values.data;
	CompSpillBits b = {0};
	int			bits = 0;
	int			dscale = 0;
	int64		base = 0;
	uint8		ds;

	if (!compspill_numeric_range(col, &bits, &dscale, &base) ||
		bits != col->bits || (Size) dscale != col->out_aux)
		elog(ERROR, "numeric column changed while its block was written");
	ds = (uint8) dscale;
	compspill_put(&p, &base, sizeof(base));
	compspill_put(&p, &ds, sizeof(ds));
	b.wp = (unsigned char *) p;
	while (lp < lend)
	{
		uint32		entry = 0;
		Size		len;
		int64		u = 0;

		(void) compspill_get_varint(&lp, lend, &entry);
		len = entry >> 1;
		(void) compspill_numeric_to_int(vp, len, &dscale, &u);
		compspill_bits_put(&b, (uint64) u - (uint64) base, col->bits);
		vp += len;
	}
	compspill_bits_flush(&b);
}

/*
 * Write a varlena column's length and value streams at p in its chosen
 * encoding, other than PLAIN and NUMERIC.
 */
static void
compspill_write_varlena(CompSpillEncoder *enc, CompSpillEncoderColumn *col,
						char *p)
{
	const char *lp = col->lengths.data;
	const char *lend = col->lengths.data + col->lengths.len;
	const char *vp = col->values.data;
	char	   *prefixes = p;
	char	   *suffixes = p + col->out_aux;
	char	   *rest = p + col->out_lengths;
	char	   *dict = p;
	CompSpillBits b = {0};
	const char *prev = NULL;
	Size		prevlen = 0;
	uint32		ndict = 0;

	if (col->enc == COMPSPILL_ENC_DICT)
	{
		compspill_dict_reset(enc);
		b.wp = (unsigned char *) p + col->out_aux;
	}

	while (lp < lend)
	{
		uint32		entry = 0;
		Size		len;

		(void) compspill_get_varint(&lp, lend, &entry);
		len = entry >> 1;

		switch (col->enc)
		{
			case COMPSPILL_ENC_PACKED:
				SET_VARSIZE_SHORT(p, len + VARHDRSZ_SHORT);
				memcpy(p + VARHDRSZ_SHORT, vp, len);
				p += len + VARHDRSZ_SHORT;
				break;

			case COMPSPILL_ENC_FRONT:
				{
					Size		shared = prev == NULL ? 0 :
						compspill_common_prefix(prev, vp, Min(len, prevlen));

					prefixes += compspill_write_varint(prefixes, (uint32) shared);
					suffixes += compspill_write_varint(suffixes,
													   (uint32) (len - shared));
					memcpy(rest, vp + shared, len - shared);
					rest += len - shared;
					break;
				}

			default:			/* DICT */
				{
					uint32		before = ndict;
					int			code = compspill_dict_code(enc->slots, &ndict,
														   vp, (uint32) len);

					Assert(code >= 0);
					if (ndict > before)
					{
						SET_VARSIZE_SHORT(dict, len + VARHDRSZ_SHORT);
						memcpy(dict + VARHDRSZ_SHORT, vp, len);
						dict += len + VARHDRSZ_SHORT;
					}
					compspill_bits_put(&b, (uint64) code, col->bits);
					break;
				}
		}
		prev = vp;
		prevlen = len;
		vp += len;
	}
	if (col->enc == COMPSPILL_ENC_DICT)
	{
		compspill_bits_flush(&b);
		Assert(ndict == col->ndict && dict == p + col->out_aux);
	}
	Assert(col->enc != COMPSPILL_ENC_FRONT ||
		   (prefixes == p + col->out_aux && suffixes == p + col->out_lengths));
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
	Size		size = CompSpillEncoderSize(enc);

	compspill_put(&p, &version, sizeof(version));
	compspill_put(&p, &natts, sizeof(natts));
	compspill_put(&p, &nrows, sizeof(nrows));

	for (int a = 0; a < enc->natts; a++)
	{
		CompSpillEncoderColumn *col = &enc->cols[a];
		uint8		flags = col->nnulls > 0 ? COMPSPILL_COL_HAS_NULLS : 0;
		uint16		zero = 0;
		uint64		bitmap_len = col->nnulls > 0 ? bitmap_bytes : 0;
		uint64		lengths_len = col->out_lengths;
		uint64		values_len = col->out_values;

		compspill_put(&p, &col->kind, sizeof(uint8));
		compspill_put(&p, &flags, sizeof(uint8));
		compspill_put(&p, &col->attlen, sizeof(int16));
		compspill_put(&p, &col->nnulls, sizeof(uint32));
		compspill_put(&p, &col->enc, sizeof(uint8));
		compspill_put(&p, &col->bits, sizeof(uint8));
		compspill_put(&p, &zero, sizeof(uint16));
		compspill_put(&p, &col->ndict, sizeof(uint32));
		compspill_put(&p, &bitmap_len, sizeof(uint64));
		compspill_put(&p, &lengths_len, sizeof(uint64));
		compspill_put(&p, &values_len, sizeof(uint64));

		if (col->nnulls > 0)
		{
			compspill_put(&p, col->bitmap.data, col->bitmap.len);
			memset(p, 0, bitmap_bytes - col->bitmap.len);
			p += bitmap_bytes - col->bitmap.len;
		}

		switch (col->enc)
		{
			case COMPSPILL_ENC_PLAIN:
				if (col->lengths.len > 0)
					compspill_put(&p, col->lengths.data, col->lengths.len);
				if (col->values.len > 0 &&
					col->kind != COMPSPILL_KIND_VARLENA &&
					col->kind != COMPSPILL_KIND_CSTRING && col->attlen > 1)
				{
					compspill_shuffle(p, col->values.data, col->values.len,
									  col->attlen);
					p += col->values.len;
				}
				else if (col->values.len > 0)
					compspill_put(&p, col->values.data, col->values.len);
				break;

			case COMPSPILL_ENC_FOR:
			case COMPSPILL_ENC_DELTA:
				compspill_write_int(col, p);
				p += col->out_values;
				break;

			case COMPSPILL_ENC_NUMERIC:
				compspill_write_numeric(col, p);
				p += col->out_values;
				break;

			default:
				compspill_write_varlena(enc, col, p);
				p += col->out_lengths + col->out_values;
				break;
		}

		col->nnulls = 0;
		col->nraw = 0;
		col->maxlen = 0;
		col->bitmap.len = 0;
		col->lengths.len = 0;
		col->values.len = 0;
	}

	Assert((Size) (p - dst) == size);
	(void) size;

	enc->nrows = 0;
	enc->nnullcols = 0;
	enc->stream_bytes = 0;
	enc->chosen_rows = PG_UINT32_MAX;
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
 * Return whether encoding enc may be used for a column of this kind.
 */
static bool
compspill_encoding_fits(uint8 enc, uint8 kind, int16 attlen, bool may_pack,
						Oid typid)
{
	switch (enc)
	{
		case COMPSPILL_ENC_PLAIN:
			return true;
		case COMPSPILL_ENC_PACKED:
		case COMPSPILL_ENC_DICT:
			return kind == COMPSPILL_KIND_VARLENA && may_pack;
		case COMPSPILL_ENC_FRONT:
			return kind == COMPSPILL_KIND_VARLENA;
		case COMPSPILL_ENC_FOR:
		case COMPSPILL_ENC_DELTA:
			return kind == COMPSPILL_KIND_BYVAL && attlen > 1;
		case COMPSPILL_ENC_NUMERIC:
			return kind == COMPSPILL_KIND_VARLENA && typid == NUMERICOID;
		default:
			return false;
	}
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
	uint16		zero;
	uint64		bitmap_len;
	uint64		lengths_len;
	uint64		values_len;
	uint64		n;

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
	memcpy(&view->enc, h + 8, sizeof(uint8));
	memcpy(&view->bits, h + 9, sizeof(uint8));
	memcpy(&zero, h + 10, sizeof(uint16));
	memcpy(&view->ndict, h + 12, sizeof(uint32));
	memcpy(&bitmap_len, h + 16, sizeof(uint64));
	memcpy(&lengths_len, h + 24, sizeof(uint64));
	memcpy(&values_len, h + 32, sizeof(uint64));
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
	if ((view->flags & ~COMPSPILL_COL_HAS_NULLS) != 0 || zero != 0)
	{
		*errdetail = psprintf("Column %d has unknown flags 0x%02x.",
							  attnum, (unsigned) view->flags);
		return false;
	}
	if (!compspill_encoding_fits(view->enc, kind, view->attlen,
								 attr->attstorage != TYPSTORAGE_PLAIN,
								 attr->atttypid))
	{
		*errdetail = psprintf("Column %d has encoding %u, which does not fit its type.",
							  attnum, (unsigned) view->enc);
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
	n = view->nvalues;

	/* the bit width and dictionary size, where the encoding has them */
	if ((view->enc == COMPSPILL_ENC_FOR &&
		 view->bits > 8 * view->attlen) ||
		((view->enc == COMPSPILL_ENC_DELTA ||
		  view->enc == COMPSPILL_ENC_NUMERIC) && view->bits > 64) ||
		(view->enc == COMPSPILL_ENC_DICT &&
		 (view->ndict == 0 || view->ndict > COMPSPILL_DICT_MAX ||
		  view->ndict > n ||
		  view->bits != compspill_bit_width(view->ndict - 1))) ||
		(view->enc != COMPSPILL_ENC_FOR && view->enc != COMPSPILL_ENC_DELTA &&
		 view->enc != COMPSPILL_ENC_DICT &&
		 view->enc != COMPSPILL_ENC_NUMERIC && view->bits != 0) ||
		(view->enc != COMPSPILL_ENC_DICT && view->ndict != 0))
	{
		*errdetail = psprintf("Column %d has a bit width of %u and %u dictionary entries for encoding %u and %u values.",
							  attnum, (unsigned) view->bits, view->ndict,
							  (unsigned) view->enc, view->nvalues);
		return false;
	}

	/* the sizes of the streams, as far as they follow from the header */
	switch (view->enc)
	{
		case COMPSPILL_ENC_PLAIN:
			if (kind == COMPSPILL_KIND_BYVAL || kind == COMPSPILL_KIND_FIXED_BYREF)
			{
				if (lengths_len == 0 &&
					values_len == n * (uint64) view->attlen)
					break;
			}
			else if (lengths_len >= n &&
					 lengths_len <= n * COMPSPILL_VARINT_MAX)
				break;
			*errdetail = psprintf("Column %d holds %llu length bytes and %llu value bytes for %u values.",
								  attnum, (unsigned long long) lengths_len,
								  (unsigned long long) values_len,
								  view->nvalues);
			return false;

		case COMPSPILL_ENC_PACKED:
			if (lengths_len == 0 && values_len >= n &&
				values_len <= n * VARATT_SHORT_MAX)
				break;
			*errdetail = psprintf("Column %d holds %llu length bytes and %llu packed value bytes for %u values.",
								  attnum, (unsigned long long) lengths_len,
								  (unsigned long long) values_len,
								  view->nvalues);
			return false;

		case COMPSPILL_ENC_FRONT:
			if (n > 0 && lengths_len >= 2 * n &&
				lengths_len <= 2 * n * COMPSPILL_VARINT_MAX)
				break;
			*errdetail = psprintf("Column %d holds %llu length bytes for %u front-coded values.",
								  attnum, (unsigned long long) lengths_len,
								  view->nvalues);
			return false;

		case COMPSPILL_ENC_DICT:
			if (lengths_len == 0 &&
				values_len >= view->ndict + compspill_packed_size(n, view->bits) &&
				values_len <= view->ndict * VARATT_SHORT_MAX +
				compspill_packed_size(n, view->bits))
				break;
			*errdetail = psprintf("Column %d holds %llu length bytes and %llu value bytes for a dictionary of %u and %u values.",
								  attnum, (unsigned long long) lengths_len,
								  (unsigned long long) values_len,
								  view->ndict, view->nvalues);
			return false;

		case COMPSPILL_ENC_FOR:
			if (n > 0 && lengths_len == 0 &&
				values_len == sizeof(int64) + compspill_packed_size(n, view->bits))
				break;
			*errdetail = psprintf("Column %d holds %llu length bytes and %llu value bytes for %u values of %u bits.",
								  attnum, (unsigned long long) lengths_len,
								  (unsigned long long) values_len,
								  view->nvalues, (unsigned) view->bits);
			return false;

		case COMPSPILL_ENC_NUMERIC:
			if (n > 0 && lengths_len == 0 &&
				values_len == sizeof(int64) + 1 +
				compspill_packed_size(n, view->bits))
				break;
			*errdetail = psprintf("Column %d holds %llu length bytes and %llu value bytes for %u numerics of %u bits.",
								  attnum, (unsigned long long) lengths_len,
								  (unsigned long long) values_len,
								  view->nvalues, (unsigned) view->bits);
			return false;

		default:				/* DELTA */
			if (n > 0 && lengths_len == 0 &&
				values_len == 2 * sizeof(int64) +
				compspill_packed_size(n - 1, view->bits))
				break;
			*errdetail = psprintf("Column %d holds %llu length bytes and %llu value bytes for %u values of %u-bit differences.",
								  attnum, (unsigned long long) lengths_len,
								  (unsigned long long) values_len,
								  view->nvalues, (unsigned) view->bits);
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
 * Check that the n values of width bytes of a PACKED stream, or the n
 * entries of a dictionary, are well-formed short varlenas inside len bytes
 * at p; return the bytes they take, or -1 (with *errdetail) if they are not.
 */
static int64
compspill_check_packed(const char *p, Size len, uint32 n, int attnum,
					   const char *what, const char **errdetail)
{
	Size		off = 0;

	for (uint32 i = 0; i < n; i++)
	{
		Size		size;

		if (off >= len)
		{
			*errdetail = psprintf("Column %d %s %u runs past the value stream.",
								  attnum, what, i + 1);
			return -1;
		}
		if (!VARATT_IS_1B(p + off) || VARATT_IS_1B_E(p + off))
		{
			*errdetail = psprintf("Column %d %s %u does not have a 1-byte varlena header.",
								  attnum, what, i + 1);
			return -1;
		}
		size = VARSIZE_1B(p + off);
		if (size < VARHDRSZ_SHORT || size > len - off)
		{
			*errdetail = psprintf("Column %d %s %u of %zu bytes runs past the value stream.",
								  attnum, what, i + 1, size);
			return -1;
		}
		off += size;
	}
	return (int64) off;
}

/*
 * Check that reading a column's lengths ended exactly at the end of its
 * length stream (at lp) and that they added up to its value stream (voff).
 */
static bool
compspill_check_streams_used(const CompSpillColumnView *view, int attnum,
							 const char *lp, Size voff,
							 const char **errdetail)
{
	const char *lend = view->lengths + view->lengths_len;

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
	return true;
}

/*
 * Check the length and value streams of a PLAIN varlena or cstring column;
 * set *max_size to the most bytes one rebuilt value takes in a row's arena.
 */
static bool
compspill_check_plain(const CompSpillColumnView *view,
					  Form_pg_attribute attr, int attnum,
					  Size *max_size, const char **errdetail)
{
	Size		voff = 0;
	Size		maxsz = 0;
	const char *lp = view->lengths;
	const char *lend = view->lengths + view->lengths_len;
	char		valign;
	bool		may_pack;

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

	if (!compspill_check_streams_used(view, attnum, lp, voff, errdetail))
		return false;

	*max_size = maxsz > 0 ? maxsz + MAXIMUM_ALIGNOF : 0;
	return true;
}

/*
 * Check the streams of a FRONT column: every shared prefix within the
 * previous value, every rest within the value stream; set *maxlen to the
 * longest value, and aim cur->suffixes at the second length stream.
 */
static bool
compspill_check_front(CompSpillColumnCursor *cur, int attnum,
					  Size *maxlen, const char **errdetail)
{
	const CompSpillColumnView *view = &cur->view;
	const char *lend = view->lengths + view->lengths_len;
	const char *pp = view->lengths;
	const char *sp;
	Size		prevlen = 0;
	Size		voff = 0;
	Size		longest = 0;

	/* find where the prefix lengths end */
	sp = view->lengths;
	for (uint32 i = 0; i < view->nvalues; i++)
	{
		uint32		v;

		if (!compspill_get_varint(&sp, lend, &v))
		{
			*errdetail = psprintf("Column %d shared length %u is malformed or runs past the length stream.",
								  attnum, i + 1);
			return false;
		}
	}
	cur->suffixes = sp;

	for (uint32 i = 0; i < view->nvalues; i++)
	{
		uint32		shared = 0;
		uint32		rest;

		(void) compspill_get_varint(&pp, cur->suffixes, &shared);
		if (!compspill_get_varint(&sp, lend, &rest))
		{
			*errdetail = psprintf("Column %d length %u is malformed or runs past the length stream.",
								  attnum, i + 1);
			return false;
		}
		if (shared > prevlen)
		{
			*errdetail = psprintf("Column %d value %u shares %u bytes with a previous value of %zu.",
								  attnum, i + 1, shared, prevlen);
			return false;
		}
		if (rest > view->values_len - voff)
		{
			*errdetail = psprintf("Column %d value %u runs past the value stream.",
								  attnum, i + 1);
			return false;
		}
		if (rest > COMPSPILL_MAX_VALUE_LEN - VARHDRSZ - shared)
		{
			*errdetail = psprintf("Column %d value %u is too long: %u + %u bytes.",
								  attnum, i + 1, shared, rest);
			return false;
		}
		voff += rest;
		prevlen = (Size) shared + rest;
		longest = Max(longest, prevlen);
	}

	if (!compspill_check_streams_used(view, attnum, sp, voff, errdetail))
		return false;
	*maxlen = longest;
	return true;
}

/*
 * Check every value of a checked column against its streams, decide how
 * its rows are produced, and work out what decoding it needs: the most
 * bytes one rebuilt value can take in a row's arena (alignment padding
 * included), arrays to build once per block, a rebuild buffer.
 */
static bool
compspill_check_column(CompSpillColumnCursor *cur, Form_pg_attribute attr,
					   int attnum, Size *max_size, const char **errdetail)
{
	const CompSpillColumnView *view = &cur->view;
	int64		used;
	Size		maxlen;

	*max_size = 0;
	cur->fixed_len = 0;
	cur->buf_len = 0;

	switch (view->kind)
	{
		case COMPSPILL_KIND_BYVAL:
			cur->how = view->attlen == 1 ? COMPSPILL_HOW_BYVAL1 :
				view->attlen == 2 ? COMPSPILL_HOW_BYVAL2 :
				view->attlen == 4 ? COMPSPILL_HOW_BYVAL4 : COMPSPILL_HOW_BYVAL8;
			if (view->attlen > 1)
				cur->fixed_len = (Size) view->nvalues * view->attlen;
			return true;

		case COMPSPILL_KIND_FIXED_BYREF:
			cur->how = COMPSPILL_HOW_FIXED;
			if (view->attlen > 1)
				cur->fixed_len = view->values_len;
			*max_size = view->attlen + MAXIMUM_ALIGNOF;
			return true;

		default:
			break;
	}

	switch (view->enc)
	{
		case COMPSPILL_ENC_PACKED:
			cur->how = COMPSPILL_HOW_PACKED;
			used = compspill_check_packed(view->values, view->values_len,
										  view->nvalues, attnum, "value",
										  errdetail);
			if (used < 0)
				return false;
			if ((Size) used != view->values_len)
			{
				*errdetail = psprintf("Column %d values take %lld bytes, but the value stream holds %zu.",
									  attnum, (long long) used,
									  view->values_len);
				return false;
			}
			return true;

		case COMPSPILL_ENC_DICT:
			cur->how = COMPSPILL_HOW_DICT;
			used = compspill_check_packed(view->values, view->values_len,
										  view->ndict, attnum,
										  "dictionary entry", errdetail);
			if (used < 0)
				return false;
			if (view->values_len - (Size) used !=
				compspill_packed_size(view->nvalues, view->bits))
			{
				*errdetail = psprintf("Column %d dictionary takes %lld bytes, leaving %zu for %u codes of %u bits.",
									  attnum, (long long) used,
									  view->values_len - (Size) used,
									  view->nvalues, (unsigned) view->bits);
				return false;
			}
			return true;

		case COMPSPILL_ENC_FRONT:
			cur->how = COMPSPILL_HOW_FRONT;
			if (!compspill_check_front(cur, attnum, &maxlen, errdetail))
				return false;
			cur->buf_len = MAXALIGN(VARHDRSZ + maxlen);
			return true;

		case COMPSPILL_ENC_NUMERIC:
			cur->how = COMPSPILL_HOW_NUMERIC;
			cur->dscale = (uint8) view->values[sizeof(int64)];
			if (cur->dscale > COMPSPILL_NUMERIC_DSCALE_MAX)
			{
				*errdetail = psprintf("Column %d numeric display scale %u is out of range.",
									  attnum, (unsigned) cur->dscale);
				return false;
			}
			*max_size = VARHDRSZ + COMPSPILL_NUMERIC_MAX_DATA +
				MAXIMUM_ALIGNOF;
			return true;

		default:
			cur->how = COMPSPILL_HOW_VARLENA;
			return compspill_check_plain(view, attr, attnum, max_size,
										 errdetail);
	}
}

/*
 * Unpack a FOR or DELTA column's integers into an array at dst, checking
 * each against its type's range.
 */
static bool
compspill_unpack_int(const CompSpillColumnView *view, int attnum, char *dst,
					 const char **errdetail)
{
	CompSpillBits b = {0};
	uint64		v;
	uint64		step = 0;
	int64		lo,
				hi;

	switch (view->attlen)
	{
		case 2:
			lo = PG_INT16_MIN;
			hi = PG_INT16_MAX;
			break;
		case 4:
			lo = PG_INT32_MIN;
			hi = PG_INT32_MAX;
			break;
		default:
			lo = PG_INT64_MIN;
			hi = PG_INT64_MAX;
			break;
	}

	memcpy(&v, view->values, sizeof(v));
	if (view->enc == COMPSPILL_ENC_DELTA)
		memcpy(&step, view->values + sizeof(int64), sizeof(step));
	b.rp = (const unsigned char *) view->values +
		(view->enc == COMPSPILL_ENC_DELTA ? 2 : 1) * sizeof(int64);

	for (uint32 i = 0; i < view->nvalues; i++)
	{
		uint64		x;

		if (view->enc == COMPSPILL_ENC_FOR)
		{
			/* v is the base; x the value's offset from it */
			x = v + compspill_bits_get(&b, view->bits);
		}
		else
		{
			if (i > 0)
				v += step + compspill_bits_get(&b, view->bits);
			x = v;
		}
		if ((int64) x < lo || (int64) x > hi)
		{
			*errdetail = psprintf("Column %d value %u is out of range for %d bytes.",
								  attnum, i + 1, (int) view->attlen);
			return false;
		}
		switch (view->attlen)
		{
			case 2:
				{
					int16		s = (int16) (int64) x;

					memcpy(dst, &s, sizeof(s));
					break;
				}
			case 4:
				{
					int32		s = (int32) (int64) x;

					memcpy(dst, &s, sizeof(s));
					break;
				}
			default:
				memcpy(dst, &x, sizeof(x));
				break;
		}
		dst += view->attlen;
	}
	if (b.acc != 0)
	{
		*errdetail = psprintf("Column %d packed values have stray bits after the last one.",
							  attnum);
		return false;
	}
	return true;
}

/*
 * Build what a checked column needs once per block: arrays of fixed-width
 * values at *fixed, dictionary entries at *dicts, a rebuild buffer at *buf;
 * advance each past what it used.  Return false on data that the checks so
 * far could not catch (integers out of range, codes past the dictionary).
 */
static bool
compspill_setup_column(CompSpillDecodedBlock *blk, CompSpillColumnCursor *cur,
					   int attnum, char **fixed, char **dicts, char **buf,
					   const char **errdetail)
{
	const CompSpillColumnView *view = &cur->view;

	(void) blk;
	switch (cur->how)
	{
		case COMPSPILL_HOW_BYVAL2:
		case COMPSPILL_HOW_BYVAL4:
		case COMPSPILL_HOW_BYVAL8:
		case COMPSPILL_HOW_FIXED:
			if (cur->fixed_len == 0)
				break;
			if (view->enc == COMPSPILL_ENC_PLAIN)
				compspill_unshuffle(*fixed, view->values, view->values_len,
									view->attlen);
			else if (!compspill_unpack_int(view, attnum, *fixed, errdetail))
				return false;
			cur->values = *fixed;
			*fixed += cur->fixed_len;
			break;

		case COMPSPILL_HOW_DICT:
			{
				const char *p = view->values;
				CompSpillBits b = {0};

				cur->dict = (Datum *) *dicts;
				for (uint32 i = 0; i < view->ndict; i++)
				{
					cur->dict[i] = PointerGetDatum(p);
					p += VARSIZE_1B(p);
				}
				*dicts += sizeof(Datum) * view->ndict;

				b.rp = (const unsigned char *) p;
				for (uint32 i = 0; i < view->nvalues; i++)
				{
					uint64		code = compspill_bits_get(&b, view->bits);

					if (code >= view->ndict)
					{
						*errdetail = psprintf("Column %d code %u is %llu, past the dictionary of %u.",
											  attnum, i + 1,
											  (unsigned long long) code,
											  view->ndict);
						return false;
					}
				}
				if (b.acc != 0)
				{
					*errdetail = psprintf("Column %d codes have stray bits after the last one.",
										  attnum);
					return false;
				}
				/* the rows read the codes again, one at a time */
				memset(&cur->packed, 0, sizeof(cur->packed));
				cur->packed.rp = (const unsigned char *) p;
				break;
			}

		case COMPSPILL_HOW_FRONT:
			cur->buf = *buf;
			*buf += cur->buf_len;
			break;

		case COMPSPILL_HOW_NUMERIC:
			{
				uint64		nbits = (uint64) view->nvalues * view->bits;

				/*
				 * Any 64-bit integer makes a numeric (the sum with the base
				 * may wrap), so only the padding bits are left to check; the
				 * rows unpack the integers one at a time.
				 */
				if (nbits % 8 != 0 &&
					((uint8) view->values[view->values_len - 1] >>
					 (nbits % 8)) != 0)
				{
					*errdetail = psprintf("Column %d packed numerics have stray bits after the last one.",
										  attnum);
					return false;
				}
				memcpy(&cur->base, view->values, sizeof(cur->base));
				memset(&cur->packed, 0, sizeof(cur->packed));
				cur->packed.rp = (const unsigned char *) view->values +
					sizeof(int64) + 1;
				break;
			}

		default:
			break;
	}
	return true;
}

/*
 * Make a buffer hold at least need bytes, keeping none of its contents.
 */
static void
compspill_reserve(MemoryContext cxt, char **buf, Size *cap, Size need)
{
	Size		newcap;

	if (need <= *cap)
		return;
	newcap = CompSpillGrowSize(need);
	if (*buf != NULL)
		pfree(*buf);
	*buf = NULL;
	*cap = 0;
	*buf = MemoryContextAllocHuge(cxt, newcap);
	*cap = newcap;
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
	Size		row_need = 0;
	Size		buf_need = 0;
	Size		dicts_need = 0;
	Size		fixed_need = 0;
	char	   *fixed;
	char	   *dicts;
	char	   *buf;

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
									hdr_nrows, &cur->view, errdetail) ||
			!compspill_check_bitmap(&cur->view, a + 1, hdr_nrows, errdetail) ||
			!compspill_check_column(cur, attr, a + 1, &max_size, errdetail))
			return false;
		row_need += max_size;
		buf_need += cur->buf_len;
		fixed_need += cur->fixed_len;
		if (cur->how == COMPSPILL_HOW_DICT)
			dicts_need += sizeof(Datum) * cur->view.ndict;

		cur->kind = cur->view.kind;
		cur->attlen = cur->view.attlen;
		cur->attalign = attr->attalign;
		cur->valign = attr->attalign == TYPALIGN_DOUBLE ?
			TYPALIGN_DOUBLE : TYPALIGN_INT;
		cur->may_pack = attr->attstorage != TYPSTORAGE_PLAIN;
		cur->bitmap = cur->view.bitmap_len > 0 ?
			(const unsigned char *) cur->view.bitmap : NULL;
		cur->lengths = cur->view.lengths;
		cur->values = cur->view.values;
	}
	if (pos != rawlen)
	{
		*errdetail = psprintf("Block is %zu bytes, but its columns account for %zu.",
							  rawlen, pos);
		return false;
	}

	/*
	 * The arena holds the rebuild buffers of front-coded columns, then one
	 * row's rebuilt values; the fixed buffer the dictionaries, then the
	 * arrays made once per block from byte planes, packed integers and
	 * packed codes, so that each row reads its values from consecutive
	 * bytes.
	 */
	compspill_reserve(blk->cxt, &blk->arena, &blk->arena_cap,
					  buf_need + row_need);
	blk->arena_row = buf_need;
	compspill_reserve(blk->cxt, &blk->fixed, &blk->fixed_cap,
					  dicts_need + fixed_need);
	dicts = blk->fixed;
	fixed = blk->fixed + dicts_need;
	buf = blk->arena;
	for (int a = 0; a < natts; a++)
	{
		if (!compspill_setup_column(blk, &blk->cols[a], a + 1, &fixed, &dicts,
									&buf, errdetail))
			return false;
	}
	Assert(fixed == blk->fixed + dicts_need + fixed_need);
	Assert(buf == blk->arena + buf_need);

	blk->nrows = nrows;
	return true;
}

/*
 * Make the block's next row current in blk->values / blk->isnull; return
 * false after the last row.  The row's by-reference values live in the
 * block's arena or in the raw block, at least until the next call.
 */
bool
CompSpillDecodeNextRow(CompSpillDecodedBlock *blk)
{
	int			r;
	Size		off = blk->arena_row;

	if (blk->row >= blk->nrows)
		return false;
	r = blk->row++;

	for (int a = 0; a < blk->natts; a++)
	{
		CompSpillColumnCursor *cur = &blk->cols[a];
		uint32		entry;
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

		switch (cur->how)
		{
			case COMPSPILL_HOW_BYVAL1:
				blk->values[a] = CharGetDatum(*cur->values);
				cur->values++;
				break;

			case COMPSPILL_HOW_BYVAL2:
				{
					int16		v;

					memcpy(&v, cur->values, sizeof(v));
					blk->values[a] = Int16GetDatum(v);
					cur->values += sizeof(v);
					break;
				}

			case COMPSPILL_HOW_BYVAL4:
				{
					int32		v;

					memcpy(&v, cur->values, sizeof(v));
					blk->values[a] = Int32GetDatum(v);
					cur->values += sizeof(v);
					break;
				}

			case COMPSPILL_HOW_BYVAL8:
				{
					int64		v;

					memcpy(&v, cur->values, sizeof(v));
					blk->values[a] = Int64GetDatum(v);
					cur->values += sizeof(v);
					break;
				}

			case COMPSPILL_HOW_FIXED:
				off = att_align_nominal(off, cur->attalign);
				if (off + cur->attlen > blk->arena_cap)
					elog(ERROR, "compspill block decoder overran its arena");
				dst = blk->arena + off;
				memcpy(dst, cur->values, cur->attlen);
				blk->values[a] = PointerGetDatum(dst);
				cur->values += cur->attlen;
				off += cur->attlen;
				break;

			case COMPSPILL_HOW_PACKED:
				/* a short varlena, header and all, right in the block */
				blk->values[a] = PointerGetDatum(cur->values);
				cur->values += VARSIZE_1B(cur->values);
				break;

			case COMPSPILL_HOW_DICT:
				blk->values[a] =
					cur->dict[compspill_bits_get(&cur->packed, cur->view.bits)];
				break;

			case COMPSPILL_HOW_FRONT:
				{
					/* the shared prefix is still in place from the last row */
					uint32		shared = compspill_next_varint(&cur->lengths);
					uint32		rest = compspill_next_varint(&cur->suffixes);

					memcpy(cur->buf + VARHDRSZ + shared, cur->values, rest);
					cur->values += rest;
					len = (Size) shared + rest;
					if (cur->may_pack && len <= COMPSPILL_SHORT_MAX)
					{
						dst = cur->buf + VARHDRSZ - VARHDRSZ_SHORT;
						SET_VARSIZE_SHORT(dst, len + VARHDRSZ_SHORT);
					}
					else
					{
						dst = cur->buf;
						SET_VARSIZE(dst, len + VARHDRSZ);
					}
					blk->values[a] = PointerGetDatum(dst);
					break;
				}

			case COMPSPILL_HOW_NUMERIC:
				{
					int64		u = (int64) (cur->base +
											 compspill_bits_get(&cur->packed,
																cur->view.bits));

					if (!cur->may_pack)
						off = att_align_nominal(off, cur->valign);
					if (off + VARHDRSZ + COMPSPILL_NUMERIC_MAX_DATA >
						blk->arena_cap)
						elog(ERROR, "compspill block decoder overran its arena");
					if (cur->may_pack)
					{
						dst = blk->arena + off;
						len = compspill_int_to_numeric(u, cur->dscale,
													   dst + VARHDRSZ_SHORT);
						SET_VARSIZE_SHORT(dst, len + VARHDRSZ_SHORT);
						off += len + VARHDRSZ_SHORT;
					}
					else
					{
						dst = blk->arena + off;
						len = compspill_int_to_numeric(u, cur->dscale,
													   dst + VARHDRSZ);
						SET_VARSIZE(dst, len + VARHDRSZ);
						off += len + VARHDRSZ;
					}
					blk->values[a] = PointerGetDatum(dst);
					break;
				}

			default:
				/* checked by CompSpillDecodeBlock, so it cannot fail */
				entry = compspill_next_varint(&cur->lengths);
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
