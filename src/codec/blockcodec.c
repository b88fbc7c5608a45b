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
 * Encodings.  When the block is finished (CompSpillEncoderSize decides,
 * CompSpillEncoderFinish writes), each column is written in one of the
 * encodings in codec/enc/, each in a file of its own behind one
 * CompSpillEncodingOps (codec/enc/encoding.h): PLAIN and ARRAY
 * (enc_plain.c), PACKED (enc_packed.c), FRONT (enc_front.c), DICT
 * (enc_dict.c), FOR and DELTA (enc_int.c), NUMERIC (enc_numeric.c).  This
 * file knows none of them by its internals: it keeps the block layout, the
 * null bitmaps, the loops over columns and rows, and the choice.
 *
 * Choosing.  The rows of a block come from one sorted run, so the leading
 * sort key is ordered and other columns are often narrow or repetitive;
 * the codec is not told which column is which and needs no hint.  A
 * column's first block of a run measures every encoding that fits the
 * column's type and takes the smallest (ties go to the one listed first in
 * compspill_enc_order).  The next COMPSPILL_RECHECK_BLOCKS - 1 blocks of
 * the run measure only the encoding kept, and fall back to measuring all
 * of them when it no longer applies (a value too long for a dictionary, a
 * numeric of another scale) or is no smaller than PLAIN.  Each time the
 * measuring of all of them keeps the same encoding, it is kept twice as
 * long before the next (16, 32, 64... blocks): a run's choice is made
 * once, from its first block, and checked a few times while it pays.  The measuring
 * pass keeps its work for the writer: shared prefix lengths, dictionary
 * codes, numerics converted to integers.  Blocks whose I/O costs next to
 * nothing (CompSpillEncoderSetLight) take only the encodings that cost no
 * time to find; blocks that will be stored uncompressed
 * (CompSpillEncoderSetCompressed) keep fixed-width values as arrays
 * (ARRAY) instead of byte planes (PLAIN), which only help a compressor.
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
 * memcpy.  Decoding is in two steps.  CompSpillDecodeBlock checks the
 * bytes: the column headers against the tuple descriptor, the streams
 * against the block (they must add up to it exactly), the null counts
 * against the bitmaps, and then, through each column's encoding, every
 * length against its value stream, every raw varlena's own header against
 * its length, every 1-byte header, every shared prefix against the
 * previous value, every dictionary code against the dictionary, every
 * unpacked integer against its type's range.  On the way it works out the
 * most bytes one rebuilt row can take, with headers and alignment, builds
 * what the columns need once per block (integers unpacked, byte planes
 * undone, into arrays: unpacking is checking), and aims a cursor at each
 * column's streams.  Bad data makes it return false with a sentence
 * saying what is wrong; the caller reports it with the file name and
 * offset.  CompSpillDecodeNextRow then produces one row at a time from
 * data known to be sound: fixed-width values from their arrays, the rest
 * through their encoding's next().  A merge input thus costs its
 * compressed and raw block and one row, not a whole block of decoded
 * rows, which is what lets the merge read many runs at once within
 * work_mem.
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
#include "access/htup_details.h"
#include "access/tupmacs.h"
#include "catalog/pg_type.h"
#include "port/pg_bitutils.h"
#include "utils/expandeddatum.h"
#include "utils/memutils.h"

#include "base/buffer.h"
#include "codec/blockcodec.h"
#include "codec/enc/encoding.h"

/*
 * A column keeps the encoding its run's first block chose for this many
 * blocks, measuring only that one, before it measures them all again.
 * Chosen from codecbench on lineitem (see test/codec/README.md): from 1
 * to 16 the encoded bytes change by under 0.1%, the encode time falls by
 * about a third.
 */
#define COMPSPILL_RECHECK_BLOCKS		16

/* every encoding, by its id */
static const CompSpillEncodingOps *const compspill_encodings[COMPSPILL_NUM_ENCODINGS] = {
	[COMPSPILL_ENC_PLAIN] = &compspill_enc_plain,
	[COMPSPILL_ENC_PACKED] = &compspill_enc_packed,
	[COMPSPILL_ENC_FRONT] = &compspill_enc_front,
	[COMPSPILL_ENC_DICT] = &compspill_enc_dict,
	[COMPSPILL_ENC_FOR] = &compspill_enc_for,
	[COMPSPILL_ENC_DELTA] = &compspill_enc_delta,
	[COMPSPILL_ENC_NUMERIC] = &compspill_enc_numeric,
	[COMPSPILL_ENC_ARRAY] = &compspill_enc_array,
};

/*
 * The order in which encodings are measured; a later one replaces the
 * best so far only when strictly smaller.  PACKED comes before PLAIN, as
 * it decodes without a copy.
 */
static const uint8 compspill_enc_order[COMPSPILL_NUM_ENCODINGS] = {
	COMPSPILL_ENC_PACKED, COMPSPILL_ENC_PLAIN, COMPSPILL_ENC_ARRAY,
	COMPSPILL_ENC_FOR, COMPSPILL_ENC_DELTA, COMPSPILL_ENC_NUMERIC,
	COMPSPILL_ENC_FRONT, COMPSPILL_ENC_DICT
};

#define COMPSPILL_NO_ENC				0xFF

static void compspill_choose(CompSpillEncoder *enc);
static bool compspill_decode_block(CompSpillDecodedBlock *blk,
								   TupleDesc tupdesc, const char *raw,
								   Size rawlen, int nrows,
								   CompSpillColumnCheck *checks,
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
	enc->compressed = true;
	enc->recheck_blocks = COMPSPILL_RECHECK_BLOCKS;

	for (int a = 0; a < natts; a++)
	{
		Form_pg_attribute attr = TupleDescAttr(tupdesc, a);

		CompSpillEncoderColumn *col = &enc->cols[a];

		col->kind = compspill_column_kind(attr);
		col->attlen = attr->attlen;
		col->may_pack = attr->attstorage != TYPSTORAGE_PLAIN;
		col->is_numeric = attr->atttypid == NUMERICOID;
		col->attalign = attr->attalign;
		col->run_enc = COMPSPILL_NO_ENC;
		col->run_period = enc->recheck_blocks;

		/* the encodings that fit the column's type, in order */
		for (int i = 0; i < COMPSPILL_NUM_ENCODINGS; i++)
		{
			const CompSpillEncodingOps *ops =
				compspill_encodings[compspill_enc_order[i]];

			if (ops->fits(col->kind, col->attlen, col->may_pack,
						  attr->atttypid))
				col->cand[col->ncand++] = ops->id;
		}

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
			Size		newcap = CompSpillGrowSize(enc->flat_cap, flatsize);

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
 * Mark row row of a column null.
 */
static inline void
compspill_encode_null(CompSpillEncoder *enc, CompSpillEncoderColumn *col,
					  uint32 row)
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
			compspill_encode_null(enc, col, row);
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
 * Append one row, a minimal tuple, to the encoder's block: its attributes
 * deformed in one walk straight into the column streams, the way
 * heap_deform_tuple walks them, with no slot and no Datum in between.  A
 * fixed-width value is copied as the tuple holds it (a by-value one is
 * stored there in native byte order, as the streams keep it); a plain
 * varlena's data is appended behind its length entry; anything else (a
 * TOAST pointer, an inline-compressed value, a cstring) goes the way
 * CompSpillEncoderAdd takes it.
 */
void
CompSpillEncoderAddMinimal(CompSpillEncoder *enc, MinimalTuple tup)
{
	uint32		row = enc->nrows;
	int			natts = enc->natts;
	int			tupnatts = HeapTupleHeaderGetNatts(tup);
	bool		hasnulls = (tup->t_infomask & HEAP_HASNULL) != 0;
	const bits8 *bp = tup->t_bits;
	const char *tp;
	Size		off = 0;
	Size		bytes = 0;

	if (row >= PG_INT32_MAX)
		elog(ERROR, "too many rows in a spill block");
	if (unlikely(tupnatts < natts))
	{
		/* attributes added since: their defaults need heap_deform_tuple */
		elog(ERROR, "minimal tuple has %d attributes, the spill %d",
			 tupnatts, natts);
	}

	/* t_hoff counts from where a full tuple header would start */
	tp = (const char *) tup - MINIMAL_TUPLE_OFFSET + tup->t_hoff;

	for (int a = 0; a < natts; a++)
	{
		CompSpillEncoderColumn *col = &enc->cols[a];
		const char *v;

		if (hasnulls && att_isnull(a, bp))
		{
			compspill_encode_null(enc, col, row);
			continue;
		}

		if (col->attlen > 0)
		{
			off = att_align_nominal(off, col->attalign);
			v = tp + off;
			/* by value or not, the stored bytes are what the stream keeps */
			memcpy(compspill_stream_append(enc->cxt, &col->values,
										   col->attlen), v, col->attlen);
			bytes += col->attlen;
			off += col->attlen;
		}
		else if (col->attlen == -1)
		{
			off = att_align_pointer(off, col->attalign, -1, tp + off);
			v = tp + off;
			if (likely(VARATT_IS_4B_U(v) ||
					   (VARATT_IS_1B(v) && !VARATT_IS_1B_E(v))))
			{
				/* plain: 4-byte header uncompressed, or 1-byte header */
				Size		len = VARSIZE_ANY_EXHDR(v);

				if (unlikely(len > col->maxlen))
				{
					if (len > COMPSPILL_MAX_VALUE_LEN)
						elog(ERROR, "varlena of %zu bytes is too large to spill",
							 len);
					col->maxlen = (uint32) len;
				}
				bytes += compspill_put_varint(enc->cxt, &col->lengths,
											  (uint32) len << 1);
				memcpy(compspill_stream_append(enc->cxt, &col->values, len),
					   VARDATA_ANY(v), len);
				bytes += len;
			}
			else
				compspill_encode_varlena(enc, col, PointerGetDatum(v));
			off += VARSIZE_ANY(v);
		}
		else
		{
			off = att_align_nominal(off, col->attalign);
			v = tp + off;
			compspill_encode_cstring(enc, col, PointerGetDatum(v));
			off += strlen(v) + 1;
		}
	}

	enc->stream_bytes += bytes;
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
 * Say whether the next block will be compressed: an uncompressed one keeps
 * fixed-width values as arrays rather than byte planes.
 */
void
CompSpillEncoderSetCompressed(CompSpillEncoder *enc, bool compressed)
{
	if (enc->compressed != compressed)
	{
		enc->compressed = compressed;
		enc->chosen_rows = PG_UINT32_MAX;
	}
}

/*
 * Say that the next block starts a new run: every column measures all its
 * encodings again.
 */
void
CompSpillEncoderNewRun(CompSpillEncoder *enc)
{
	for (int a = 0; a < enc->natts; a++)
	{
		enc->cols[a].run_enc = COMPSPILL_NO_ENC;
		enc->cols[a].run_period = enc->recheck_blocks;
	}
	enc->chosen_rows = PG_UINT32_MAX;
}

/*
 * Set how many blocks a column keeps its encoding before measuring all of
 * them again (1: every block).  For measurements and tests.
 */
void
CompSpillEncoderSetRecheck(CompSpillEncoder *enc, int blocks)
{
	enc->recheck_blocks = (uint32) Max(blocks, 1);
	CompSpillEncoderNewRun(enc);
}

/*
 * Measure the column in encoding id; return whether it applies, with its
 * sizes in *ch.
 */
static inline bool
compspill_try(CompSpillEncoder *enc, CompSpillEncoderColumn *col, uint8 id,
			  CompSpillChoice *ch)
{
	memset(ch, 0, sizeof(CompSpillChoice));
	ch->enc = id;
	return compspill_encodings[id]->choose(enc, col, ch);
}

/*
 * Choose a column's encoding for the block as it stands, into col->ch.
 */
static void
compspill_choose_column(CompSpillEncoder *enc, CompSpillEncoderColumn *col)
{
	CompSpillChoice best;
	CompSpillChoice ch;
	bool		have = false;

	/* the encoding kept for the run, while it still pays */
	if (!enc->light && col->run_enc != COMPSPILL_NO_ENC && col->run_left > 0)
	{
		uint8		id = col->run_enc;

		col->run_left--;
		if (compspill_try(enc, col, id, &ch) &&
			(id == COMPSPILL_ENC_PLAIN || id == COMPSPILL_ENC_ARRAY ||
			 id == COMPSPILL_ENC_PACKED ||
			 ch.out_lengths + ch.out_values <
			 col->lengths.len + col->values.len))
		{
			col->ch = ch;
			return;
		}
	}

	for (int i = 0; i < col->ncand; i++)
	{
		uint8		id = col->cand[i];

		if (enc->light && !compspill_encodings[id]->light)
			continue;
		if (!compspill_try(enc, col, id, &ch))
			continue;
		if (!have ||
			ch.out_lengths + ch.out_values <
			best.out_lengths + best.out_values)
		{
			best = ch;
			have = true;
		}
	}
	Assert(have);

	/*
	 * The writer reuses the measuring pass of the encoding it writes: each
	 * encoding keeps its work apart, so measuring others after it loses
	 * nothing.
	 */
	col->ch = best;

	if (!enc->light)
	{
		/*
		 * Measured again to the same choice, the encoding is kept twice as
		 * long: a run's columns rarely change their nature, so a run's
		 * choice is measured about log2(blocks / recheck_blocks) times.
		 */
		if (col->run_enc == best.enc && enc->recheck_blocks > 1)
			col->run_period = Min(col->run_period * 2, PG_UINT32_MAX / 4);
		else
			col->run_period = enc->recheck_blocks;
		col->run_enc = best.enc;
		col->run_left = col->run_period - 1;
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

		compspill_choose_column(enc, col);
		size += COMPSPILL_COLUMN_HEADER_SIZE + col->ch.out_lengths +
			col->ch.out_values;
	}
	enc->chosen_size = size;
	enc->chosen_rows = enc->nrows;
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
		uint64		lengths_len = col->ch.out_lengths;
		uint64		values_len = col->ch.out_values;

		compspill_put(&p, &col->kind, sizeof(uint8));
		compspill_put(&p, &flags, sizeof(uint8));
		compspill_put(&p, &col->attlen, sizeof(int16));
		compspill_put(&p, &col->nnulls, sizeof(uint32));
		compspill_put(&p, &col->ch.enc, sizeof(uint8));
		compspill_put(&p, &col->ch.bits, sizeof(uint8));
		compspill_put(&p, &zero, sizeof(uint16));
		compspill_put(&p, &col->ch.ndict, sizeof(uint32));
		compspill_put(&p, &bitmap_len, sizeof(uint64));
		compspill_put(&p, &lengths_len, sizeof(uint64));
		compspill_put(&p, &values_len, sizeof(uint64));

		if (col->nnulls > 0)
		{
			compspill_put(&p, col->bitmap.data, col->bitmap.len);
			memset(p, 0, bitmap_bytes - col->bitmap.len);
			p += bitmap_bytes - col->bitmap.len;
		}

		compspill_encodings[col->ch.enc]->write(enc, col, p);
		p += col->ch.out_lengths + col->ch.out_values;

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
	const CompSpillEncodingOps *ops;

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
	if (view->enc >= COMPSPILL_NUM_ENCODINGS ||
		!(ops = compspill_encodings[view->enc])->fits(kind, view->attlen,
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

	/* where the streams are */
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

	/* the bit width, dictionary size and stream sizes, by the encoding */
	return ops->check_header(view, attnum, errdetail);
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
 * Check every value of a column whose header is sound, decide how its
 * rows are produced, and work out what decoding it needs: the most bytes
 * one rebuilt value can take in a row's arena (alignment padding
 * included), arrays and dictionaries to build once per block, a rebuild
 * buffer.
 */
static bool
compspill_check_column(CompSpillColumnCursor *cur, CompSpillColumnCheck *chk,
					   Form_pg_attribute attr, int attnum, Size *max_size,
					   const char **errdetail)
{
	const CompSpillColumnView *view = &chk->view;

	*max_size = 0;
	chk->fixed_len = 0;
	chk->dicts_len = 0;
	chk->buf_len = 0;
	cur->ops = compspill_encodings[view->enc];
	cur->kind = view->kind;
	cur->attlen = view->attlen;
	cur->attalign = attr->attalign;
	/* 4-byte headers get the type's alignment, at least int */
	cur->valign = attr->attalign == TYPALIGN_DOUBLE ?
		TYPALIGN_DOUBLE : TYPALIGN_INT;
	/* values of plain-storage types must keep a 4-byte header */
	cur->may_pack = attr->attstorage != TYPSTORAGE_PLAIN;

	switch (view->kind)
	{
		case COMPSPILL_KIND_BYVAL:
			cur->how = view->attlen == 1 ? COMPSPILL_HOW_BYVAL1 :
				view->attlen == 2 ? COMPSPILL_HOW_BYVAL2 :
				view->attlen == 4 ? COMPSPILL_HOW_BYVAL4 : COMPSPILL_HOW_BYVAL8;
			break;
		case COMPSPILL_KIND_FIXED_BYREF:
			cur->how = COMPSPILL_HOW_FIXED;
			*max_size = view->attlen + MAXIMUM_ALIGNOF;
			break;
		default:
			cur->how = COMPSPILL_HOW_NEXT;
			break;
	}
	return cur->ops->check(cur, chk, attr, attnum, max_size, errdetail);
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
	newcap = CompSpillGrowSize(*cap, need);
	if (*buf != NULL)
		pfree(*buf);
	*buf = NULL;
	*cap = 0;
	*buf = MemoryContextAllocHuge(cxt, newcap);
	*cap = newcap;
}

/*
 * The columns whose checks CompSpillDecodeBlock keeps on the stack; wider
 * rows get theirs palloc'd for the call.
 */
#define COMPSPILL_STACK_CHECKS	64

/*
 * Check a raw block of nrows rows and position blk before its first row;
 * on bad data return false with a sentence in *errdetail.  The rows are
 * read from raw itself, which must stay in place until the next call.
 * What the checks find lives only through the call: a merge holds a
 * decoded block per input, and keeps only the columns' cursors.
 */
bool
CompSpillDecodeBlock(CompSpillDecodedBlock *blk, TupleDesc tupdesc,
					 const char *raw, Size rawlen, int nrows,
					 const char **errdetail)
{
	CompSpillColumnCheck local[COMPSPILL_STACK_CHECKS];
	CompSpillColumnCheck *checks = local;
	bool		ok;

	if (tupdesc->natts > COMPSPILL_STACK_CHECKS)
		checks = palloc(sizeof(CompSpillColumnCheck) * tupdesc->natts);
	ok = compspill_decode_block(blk, tupdesc, raw, rawlen, nrows, checks,
								errdetail);
	if (checks != local)
		pfree(checks);
	return ok;
}

/*
 * CompSpillDecodeBlock's work, with room for each column's check in
 * checks.
 */
static bool
compspill_decode_block(CompSpillDecodedBlock *blk, TupleDesc tupdesc,
					   const char *raw, Size rawlen, int nrows,
					   CompSpillColumnCheck *checks, const char **errdetail)
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

	/* the cursors and the current row's arrays, in one chunk */
	if (blk->cols == NULL && natts > 0)
	{
		char	   *p;

		StaticAssertStmt(sizeof(CompSpillColumnCursor) % sizeof(Datum) == 0,
						 "cursors must leave the values aligned");
		p = MemoryContextAllocZero(blk->cxt,
								   (sizeof(CompSpillColumnCursor) +
									sizeof(Datum) + sizeof(bool)) * natts);
		blk->cols = (CompSpillColumnCursor *) p;
		p += sizeof(CompSpillColumnCursor) * natts;
		blk->values = (Datum *) p;
		p += sizeof(Datum) * natts;
		blk->isnull = (bool *) p;
	}

	/* check everything, measure the largest row, and aim the cursors */
	pos = COMPSPILL_BLOCK_HEADER_SIZE;
	for (int a = 0; a < natts; a++)
	{
		Form_pg_attribute attr = TupleDescAttr(tupdesc, a);
		CompSpillColumnCursor *cur = &blk->cols[a];
		CompSpillColumnCheck *chk = &checks[a];
		Size		max_size;

		if (!compspill_parse_column(raw, rawlen, &pos, attr, a + 1,
									hdr_nrows, &chk->view, errdetail) ||
			!compspill_check_bitmap(&chk->view, a + 1, hdr_nrows, errdetail) ||
			!compspill_check_column(cur, chk, attr, a + 1, &max_size,
									errdetail))
			return false;
		row_need += max_size;
		buf_need += chk->buf_len;
		fixed_need += chk->fixed_len;
		dicts_need += chk->dicts_len;

		cur->bitmap = chk->view.bitmap_len > 0 ?
			(const unsigned char *) chk->view.bitmap : NULL;
		cur->lengths = chk->view.lengths;
		cur->values = chk->view.values;
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
		CompSpillColumnCursor *cur = &blk->cols[a];

		if (!cur->ops->setup(cur, &checks[a], a + 1, &fixed, &dicts, &buf,
							 errdetail))
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

			case COMPSPILL_HOW_FOR:
				blk->values[a] =
					compspill_int_datum(cur->attlen,
										cur->base +
										compspill_bits_get(&cur->packed,
														   cur->bits));
				break;

			case COMPSPILL_HOW_DELTA:
				if (cur->first)
					cur->first = false;
				else
					cur->base += cur->step +
						compspill_bits_get(&cur->packed, cur->bits);
				blk->values[a] = compspill_int_datum(cur->attlen, cur->base);
				break;

			default:
				blk->values[a] = cur->ops->next(blk, cur, &off);
				break;
		}
	}

	return true;
}
