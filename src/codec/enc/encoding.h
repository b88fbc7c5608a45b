/*-------------------------------------------------------------------------
 *
 * encoding.h
 *	  Private interface between the block codec (codec/blockcodec.c) and
 *	  its column encodings (codec/enc/enc_*.c).
 *
 * Each encoding lives in one file and is described by one
 * CompSpillEncodingOps: which columns it fits, how big a column would be
 * in it, how to write it, how to check a stored column, how to set up
 * decoding once per block and how to produce one value.  blockcodec.c
 * keeps the block layout, the null bitmaps, the driver loops and the
 * choice between encodings; it knows no encoding by its internals.
 *
 * Nothing here is visible outside src/codec.
 *
 * IDENTIFICATION
 *	  src/codec/enc/encoding.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPSPILL_ENCODING_H
#define COMPSPILL_ENCODING_H

#include "utils/expandeddatum.h"	/* brings varatt.h on 16 and later */
#include "access/tupdesc.h"
#include "port/pg_bitutils.h"

#include "codec/blockcodec.h"

#define COMPSPILL_BLOCK_VERSION			3
#define COMPSPILL_BLOCK_HEADER_SIZE		8
#define COMPSPILL_COLUMN_HEADER_SIZE	40

/* column kinds, decided by the tuple descriptor */
#define COMPSPILL_KIND_BYVAL			1	/* by value, attlen 1/2/4/8 */
#define COMPSPILL_KIND_FIXED_BYREF		2	/* by reference, attlen > 0 */
#define COMPSPILL_KIND_VARLENA			3	/* attlen -1 */
#define COMPSPILL_KIND_CSTRING			4	/* attlen -2 */

/* column encodings, the byte in the column header */
#define COMPSPILL_ENC_PLAIN				0
#define COMPSPILL_ENC_PACKED			1	/* varlena, 1-byte headers kept */
#define COMPSPILL_ENC_FRONT				2	/* varlena, front coding */
#define COMPSPILL_ENC_DICT				3	/* varlena, dictionary + codes */
#define COMPSPILL_ENC_FOR				4	/* integer, frame of reference */
#define COMPSPILL_ENC_DELTA				5	/* integer, packed differences */
#define COMPSPILL_ENC_NUMERIC			6	/* numeric as a scaled integer */
#define COMPSPILL_ENC_ARRAY				7	/* fixed width, no byte planes */
#define COMPSPILL_NUM_ENCODINGS			8

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
#define COMPSPILL_HOW_NEXT				5	/* the encoding's next() */
#define COMPSPILL_HOW_FOR				6	/* FOR's packed integers */
#define COMPSPILL_HOW_DELTA				7	/* DELTA's packed differences */

/* a growable byte buffer, kept across blocks */
typedef struct CompSpillStream
{
	char	   *data;
	Size		len;
	Size		cap;
} CompSpillStream;

/* what an encoding would make of a column's block: sizes and parameters */
typedef struct CompSpillChoice
{
	uint8		enc;
	uint8		bits;			/* bit width of packed values or codes */
	uint32		ndict;			/* DICT: entries */
	Size		out_lengths;	/* bytes of the length stream(s) */
	Size		out_values;		/* bytes of the value stream */
	Size		out_aux;		/* FRONT: prefix varint bytes; DICT: bytes
								 * of the dictionary; NUMERIC: dscale */
} CompSpillChoice;

/* a dictionary entry while a block is encoded */
typedef struct CompSpillDictSlot
{
	const char *data;			/* NULL when the slot is free */
	uint32		len;
	uint32		code;
} CompSpillDictSlot;

typedef struct CompSpillEncoderColumn
{
	uint8		kind;
	int16		attlen;
	bool		may_pack;		/* may a short varlena get a 1-byte header? */
	bool		is_numeric;		/* of type numeric? */
	char		attalign;		/* for deforming minimal tuples */
	uint32		nnulls;			/* nulls in the current block */
	uint32		nraw;			/* raw varlenas in the current block */
	uint32		maxlen;			/* longest plain varlena data, this block */
	CompSpillStream bitmap;		/* len = bytes zeroed so far */
	CompSpillStream lengths;
	CompSpillStream values;
	/* the encodings that fit the column, in order of preference */
	uint8		ncand;
	uint8		cand[COMPSPILL_NUM_ENCODINGS];
	/* the encoding chosen for the block as it stands */
	CompSpillChoice ch;
	/* the encoding kept for the run, and blocks until it is re-checked */
	uint8		run_enc;		/* COMPSPILL_ENC_*, or 0xFF for none */
	uint32		run_left;
	uint32		run_period;		/* blocks kept since the last measuring */
	/* work of the choosing pass that the writer reuses, per value */
	uint32	   *shared;			/* FRONT: bytes shared with the previous */
	uint8	   *codes;			/* DICT: codes */
	int64	   *nums;			/* NUMERIC: scaled integers */
	uint32		shared_cap;		/* values each array holds */
	uint32		codes_cap;
	uint32		nums_cap;
	int64		num_base;		/* NUMERIC: the smallest integer */
	int64		int_min;		/* FOR: the smallest value */
	int64		delta_min;		/* DELTA: the smallest difference */
	const char **dict_data;		/* DICT: the entries, made on first use */
	uint32	   *dict_len;
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
	uint32		chosen_rows;	/* rows the encodings were chosen for, or
								 * PG_UINT32_MAX */
	Size		chosen_size;	/* the block's size in those encodings */
	bool		light;			/* only the encodings that cost no time */
	bool		compressed;		/* will the block be compressed? */
	uint32		recheck_blocks; /* keep a column's encoding this many blocks */
	char	   *flat;			/* scratch for flattened expanded objects */
	Size		flat_cap;
	CompSpillDictSlot *slots;	/* dictionary hash table, made on demand */
	CompSpillEncoderColumn cols[FLEXIBLE_ARRAY_MEMBER];
};

/* a column of a raw block, as found by the block's parser */
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

typedef struct CompSpillEncodingOps CompSpillEncodingOps;

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
	uint8		bits;			/* NUMERIC, FOR, DELTA: bit width of the
								 * packed integers */
	bool		first;			/* DELTA: the first value is next */
	const CompSpillEncodingOps *ops;
	const unsigned char *bitmap;	/* null bitmap, or NULL */
	const char *lengths;		/* next length entry (FRONT: prefix) */
	const char *suffixes;		/* FRONT: next suffix length */
	const char *values;			/* next value bytes */
	CompSpillBits packed;		/* DICT: codes; NUMERIC: integers */
	uint64		base;			/* NUMERIC, FOR: the smallest integer;
								 * DELTA: the value made last */
	uint64		step;			/* DELTA: the smallest difference */
	Datum	   *dict;			/* DICT: the entries */
	char	   *buf;			/* FRONT: the value, data at buf + VARHDRSZ */
} CompSpillColumnCursor;

/*
 * What a column's check finds while its block is decoded: the column's
 * header and streams, and what decoding it needs built.  Needed only until
 * the block is set up, so kept apart from the cursors that every reader of
 * a merge holds for as long as it reads.
 */
typedef struct CompSpillColumnCheck
{
	CompSpillColumnView view;
	Size		fixed_len;		/* bytes of arrays to build in blk->fixed */
	Size		dicts_len;		/* bytes of dictionary Datums */
	Size		buf_len;		/* FRONT: bytes of the rebuild buffer */
} CompSpillColumnCheck;

/*
 * One encoding.  Encoder side: fits says whether it may be used for a
 * column type (the decoder asks too); choose works out the column's block
 * in it into *ch, returning false when it does not apply to this block
 * (and may keep per-value work for write); write puts the length and
 * value streams at p (ch->out_lengths + ch->out_values bytes).  Decoder
 * side: check_header checks the header's bit width, dictionary size and
 * stream sizes; check checks every stored value (setting *max_size, the
 * most arena bytes one value takes, and the cursor's fixed_len, dicts_len,
 * buf_len); setup builds what decoding needs once per block; next, for
 * variable-width values, makes the next value, placing what it rebuilds
 * in the arena at or after *off.  Fixed-width encodings have no next:
 * setup leaves cur->values at an array of the values, or (FOR, DELTA) the
 * cursor at the packed integers, which the row loop unpacks itself.
 */
struct CompSpillEncodingOps
{
	const char *name;
	uint8		id;
	bool		light;			/* costs no time to choose */
	bool		(*fits) (uint8 kind, int16 attlen, bool may_pack, Oid typid);
	bool		(*choose) (CompSpillEncoder *enc, CompSpillEncoderColumn *col,
						   CompSpillChoice *ch);
	void		(*write) (CompSpillEncoder *enc, CompSpillEncoderColumn *col,
						  char *p);
	bool		(*check_header) (const CompSpillColumnView *view, int attnum,
								 const char **errdetail);
	bool		(*check) (CompSpillColumnCursor *cur, CompSpillColumnCheck *chk,
						  Form_pg_attribute attr, int attnum, Size *max_size,
						  const char **errdetail);
	bool		(*setup) (CompSpillColumnCursor *cur,
						  const CompSpillColumnCheck *chk, int attnum,
						  char **fixed, char **dicts, char **buf,
						  const char **errdetail);
	Datum		(*next) (CompSpillDecodedBlock *blk, CompSpillColumnCursor *cur,
						 Size *off);
};

extern const CompSpillEncodingOps compspill_enc_plain;
extern const CompSpillEncodingOps compspill_enc_array;
extern const CompSpillEncodingOps compspill_enc_packed;
extern const CompSpillEncodingOps compspill_enc_front;
extern const CompSpillEncodingOps compspill_enc_dict;
extern const CompSpillEncodingOps compspill_enc_for;
extern const CompSpillEncodingOps compspill_enc_delta;
extern const CompSpillEncodingOps compspill_enc_numeric;

/* enc_common.c */
extern void compspill_stream_grow(MemoryContext cxt, CompSpillStream *s,
								  Size need);
extern void *compspill_scratch(CompSpillEncoder *enc, void *array,
							   uint32 *cap, Size width, uint32 n);
extern bool compspill_check_raw(const char *src, Size len);
extern int64 compspill_check_packed(const char *p, Size len, uint32 n,
									int attnum, const char *what,
									const char **errdetail);
extern bool compspill_check_streams_used(const CompSpillColumnView *view,
										 int attnum, const char *lp, Size voff,
										 const char **errdetail);
extern bool compspill_stream_sizes_error(const CompSpillColumnView *view,
										 int attnum, const char **errdetail);
extern bool compspill_no_params(const CompSpillColumnView *view, int attnum,
								const char **errdetail);
extern bool compspill_params_error(const CompSpillColumnView *view,
								   int attnum, const char **errdetail);
extern bool compspill_check_packed_header(const CompSpillColumnView *view,
										  int attnum, int max_bits,
										  Size prefix, uint64 npacked,
										  const char **errdetail);
extern bool compspill_fits_varlena(uint8 kind, int16 attlen, bool may_pack,
								   Oid typid);
extern bool compspill_fits_packable(uint8 kind, int16 attlen, bool may_pack,
									Oid typid);
extern bool compspill_fits_int(uint8 kind, int16 attlen, bool may_pack,
							   Oid typid);

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
 * Copy n bytes to *p and advance it.
 */
static inline void
compspill_put(char **p, const void *src, Size n)
{
	memcpy(*p, src, n);
	*p += n;
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
 * Make an integer of width bytes (2, 4 or 8) a Datum.
 */
static inline Datum
compspill_int_datum(int width, uint64 x)
{
	switch (width)
	{
		case 2:
			return Int16GetDatum((int16) (int64) x);
		case 4:
			return Int32GetDatum((int32) (int64) x);
		default:
			return Int64GetDatum((int64) x);
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
 * Return the non-null values of a column in the current block.
 */
static inline uint32
compspill_col_nvalues(CompSpillEncoder *enc, CompSpillEncoderColumn *col)
{
	return enc->nrows - col->nnulls;
}

#endif							/* COMPSPILL_ENCODING_H */
