/*-------------------------------------------------------------------------
 *
 * enc_plain.c
 *	  The PLAIN and ARRAY column encodings.
 *
 * PLAIN fits every column.  Fixed-width values of more than one byte are
 * stored as byte planes, the first byte of every value, then the second
 * and so on, with no padding: integers of a narrow range leave long runs
 * of equal high bytes, which lz4 and zstd feed on.  Varlena and cstring
 * values are a length stream (one varint per value, (len << 1) | raw) and
 * a value stream holding their data back to back; a raw value (a TOAST
 * pointer or inline-compressed value) is stored whole, header included.
 *
 * ARRAY is PLAIN for fixed-width values without the byte planes, for
 * blocks that will be stored uncompressed, where the planes buy nothing:
 * the encoder copies the values and the decoder reads them in place.
 *
 * IDENTIFICATION
 *	  src/codec/enc/enc_plain.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/tupmacs.h"

#include "codec/enc/encoding.h"

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

/* PLAIN fits every column */
static bool
plain_fits(uint8 kind pg_attribute_unused(),
		   int16 attlen pg_attribute_unused(),
		   bool may_pack pg_attribute_unused(),
		   Oid typid pg_attribute_unused())
{
	return true;
}

/* Is the column fixed-width with values of more than one byte? */
static inline bool
is_wide_fixed(uint8 kind, int16 attlen)
{
	return (kind == COMPSPILL_KIND_BYVAL ||
			kind == COMPSPILL_KIND_FIXED_BYREF) && attlen > 1;
}

/*
 * PLAIN applies to every block, but for wide fixed-width values only when
 * the block will be compressed (ARRAY takes them otherwise).
 */
static bool
plain_choose(CompSpillEncoder *enc, CompSpillEncoderColumn *col,
			 CompSpillChoice *ch)
{
	if (is_wide_fixed(col->kind, col->attlen) && !enc->compressed)
		return false;
	ch->out_lengths = col->lengths.len;
	ch->out_values = col->values.len;
	return true;
}

/*
 * Copy an array of len / width values of width bytes to dst as byte
 * planes.
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

/* Write a PLAIN column's streams */
static void
plain_write(CompSpillEncoder *enc pg_attribute_unused(),
			CompSpillEncoderColumn *col, char *p)
{
	if (col->lengths.len > 0)
		compspill_put(&p, col->lengths.data, col->lengths.len);
	if (col->values.len > 0 && is_wide_fixed(col->kind, col->attlen))
		compspill_shuffle(p, col->values.data, col->values.len, col->attlen);
	else if (col->values.len > 0)
		memcpy(p, col->values.data, col->values.len);
}

/* Check the stream sizes of a PLAIN or ARRAY column */
static bool
plain_check_header(const CompSpillColumnView *view, int attnum,
				   const char **errdetail)
{
	uint64		n = view->nvalues;

	if (!compspill_no_params(view, attnum, errdetail))
		return false;
	if (view->kind == COMPSPILL_KIND_BYVAL ||
		view->kind == COMPSPILL_KIND_FIXED_BYREF)
	{
		if (view->lengths_len == 0 &&
			view->values_len == n * (uint64) view->attlen)
			return true;
	}
	else if (view->lengths_len >= n &&
			 view->lengths_len <= n * COMPSPILL_VARINT_MAX)
		return true;
	return compspill_stream_sizes_error(view, attnum, errdetail);
}

/*
 * Check the length and value streams of a PLAIN varlena or cstring column;
 * set *max_size to the most bytes one rebuilt value takes in a row's arena.
 * Fixed-width columns need their planes undone into an array.
 */
static bool
plain_check(CompSpillColumnCursor *cur,
			CompSpillColumnCheck *chk,
			Form_pg_attribute attr pg_attribute_unused(), int attnum,
			Size *max_size, const char **errdetail)
{
	const CompSpillColumnView *view = &chk->view;
	Size		voff = 0;
	Size		maxsz = 0;
	const char *lp = view->lengths;
	const char *lend = view->lengths + view->lengths_len;

	if (view->kind == COMPSPILL_KIND_BYVAL ||
		view->kind == COMPSPILL_KIND_FIXED_BYREF)
	{
		if (view->attlen > 1)
			chk->fixed_len = view->values_len;
		return true;
	}

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

		(void) compspill_place_value(0, view->kind, entry, first,
									 cur->may_pack, cur->valign, &size);
		maxsz = Max(maxsz, size);
		voff += len;
	}

	if (!compspill_check_streams_used(view, attnum, lp, voff, errdetail))
		return false;

	*max_size = maxsz > 0 ? maxsz + MAXIMUM_ALIGNOF : 0;
	return true;
}

/* Undo the byte planes of a fixed-width column into an array */
static bool
plain_setup(CompSpillColumnCursor *cur, const CompSpillColumnCheck *chk,
			int attnum pg_attribute_unused(),
			char **fixed, char **dicts pg_attribute_unused(),
			char **buf pg_attribute_unused(),
			const char **errdetail pg_attribute_unused())
{
	if (chk->fixed_len == 0)
		return true;
	compspill_unshuffle(*fixed, chk->view.values, chk->view.values_len,
						chk->view.attlen);
	cur->values = *fixed;
	*fixed += chk->fixed_len;
	return true;
}

/* Rebuild the next value of a PLAIN varlena or cstring column */
static Datum
plain_next(CompSpillDecodedBlock *blk, CompSpillColumnCursor *cur, Size *off)
{
	/* checked by CompSpillDecodeBlock, so it cannot fail */
	uint32		entry = compspill_next_varint(&cur->lengths);
	Size		len = entry >> 1;
	Size		size;
	Size		o;
	char	   *dst;

	o = compspill_place_value(*off, cur->kind, entry,
							  len > 0 ? *cur->values : '\0',
							  cur->may_pack, cur->valign, &size);
	if (o + size > blk->arena_cap)
		elog(ERROR, "compspill block decoder overran its arena");
	dst = blk->arena + o;

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
	cur->values += len;
	*off = o + size;
	return PointerGetDatum(dst);
}

const CompSpillEncodingOps compspill_enc_plain = {
	.name = "plain",
	.id = COMPSPILL_ENC_PLAIN,
	.light = true,
	.fits = plain_fits,
	.choose = plain_choose,
	.write = plain_write,
	.check_header = plain_check_header,
	.check = plain_check,
	.setup = plain_setup,
	.next = plain_next,
};

/* ARRAY fits wide fixed-width columns */
static bool
array_fits(uint8 kind, int16 attlen, bool may_pack pg_attribute_unused(),
		   Oid typid pg_attribute_unused())
{
	return is_wide_fixed(kind, attlen);
}

/* ARRAY applies to blocks that will be stored uncompressed */
static bool
array_choose(CompSpillEncoder *enc, CompSpillEncoderColumn *col,
			 CompSpillChoice *ch)
{
	if (enc->compressed)
		return false;
	ch->out_lengths = 0;
	ch->out_values = col->values.len;
	return true;
}

/* Write an ARRAY column's values as they are */
static void
array_write(CompSpillEncoder *enc pg_attribute_unused(),
			CompSpillEncoderColumn *col, char *p)
{
	if (col->values.len > 0)
		memcpy(p, col->values.data, col->values.len);
}

/* An ARRAY column is read in place: nothing to check or build */
static bool
array_check(CompSpillColumnCursor *cur pg_attribute_unused(),
			CompSpillColumnCheck *chk pg_attribute_unused(),
			Form_pg_attribute attr pg_attribute_unused(),
			int attnum pg_attribute_unused(),
			Size *max_size pg_attribute_unused(),
			const char **errdetail pg_attribute_unused())
{
	return true;
}

/* The values are already an array, in the block */
static bool
array_setup(CompSpillColumnCursor *cur pg_attribute_unused(),
			const CompSpillColumnCheck *chk pg_attribute_unused(),
			int attnum pg_attribute_unused(),
			char **fixed pg_attribute_unused(),
			char **dicts pg_attribute_unused(),
			char **buf pg_attribute_unused(),
			const char **errdetail pg_attribute_unused())
{
	return true;
}

const CompSpillEncodingOps compspill_enc_array = {
	.name = "array",
	.id = COMPSPILL_ENC_ARRAY,
	.light = true,
	.fits = array_fits,
	.choose = array_choose,
	.write = array_write,
	.check_header = plain_check_header,
	.check = array_check,
	.setup = array_setup,
	.next = NULL,
};
