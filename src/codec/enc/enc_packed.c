/*-------------------------------------------------------------------------
 *
 * enc_packed.c
 *	  The PACKED column encoding: short varlenas with their 1-byte headers.
 *
 * When every value of a varlena column is short (data of at most 126
 * bytes), inline and uncompressed, and the type may be packed, the values
 * are stored with their 1-byte varlena headers back to back and no length
 * stream.  The decoder hands out pointers straight into the block.
 *
 * IDENTIFICATION
 *	  src/codec/enc/enc_packed.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "codec/enc/encoding.h"

/* PACKED applies when every value of the block is short and inline */
static bool
packed_choose(CompSpillEncoder *enc, CompSpillEncoderColumn *col,
			  CompSpillChoice *ch)
{
	uint32		n = compspill_col_nvalues(enc, col);

	if (n == 0 || col->nraw > 0 || col->maxlen > COMPSPILL_SHORT_MAX)
		return false;
	ch->out_lengths = 0;
	ch->out_values = (Size) n + col->values.len;
	return true;
}

/* Write the values with 1-byte headers */
static void
packed_write(CompSpillEncoder *enc pg_attribute_unused(),
			 CompSpillEncoderColumn *col, char *p)
{
	const char *lp = col->lengths.data;
	const char *lend = col->lengths.data + col->lengths.len;
	const char *vp = col->values.data;

	while (lp < lend)
	{
		Size		len = compspill_next_varint(&lp) >> 1;

		SET_VARSIZE_SHORT(p, len + VARHDRSZ_SHORT);
		memcpy(p + VARHDRSZ_SHORT, vp, len);
		p += len + VARHDRSZ_SHORT;
		vp += len;
	}
}

/* Check a PACKED column's stream sizes */
static bool
packed_check_header(const CompSpillColumnView *view, int attnum,
					const char **errdetail)
{
	uint64		n = view->nvalues;

	if (!compspill_no_params(view, attnum, errdetail))
		return false;
	if (view->lengths_len == 0 && view->values_len >= n &&
		view->values_len <= n * VARATT_SHORT_MAX)
		return true;
	return compspill_stream_sizes_error(view, attnum, errdetail);
}

/* Check that the value stream is exactly nvalues short varlenas */
static bool
packed_check(CompSpillColumnCursor *cur pg_attribute_unused(),
			 CompSpillColumnCheck *chk,
			 Form_pg_attribute attr pg_attribute_unused(), int attnum,
			 Size *max_size pg_attribute_unused(), const char **errdetail)
{
	const CompSpillColumnView *view = &chk->view;
	int64		used;

	used = compspill_check_packed(view->values, view->values_len,
								  view->nvalues, attnum, "value", errdetail);
	if (used < 0)
		return false;
	if ((Size) used != view->values_len)
	{
		*errdetail = psprintf("Column %d values take %lld bytes, but the value stream holds %zu.",
							  attnum, (long long) used, view->values_len);
		return false;
	}
	return true;
}

/* Nothing to build */
static bool
packed_setup(CompSpillColumnCursor *cur pg_attribute_unused(),
			 const CompSpillColumnCheck *chk pg_attribute_unused(),
			 int attnum pg_attribute_unused(),
			 char **fixed pg_attribute_unused(),
			 char **dicts pg_attribute_unused(),
			 char **buf pg_attribute_unused(),
			 const char **errdetail pg_attribute_unused())
{
	return true;
}

/* A short varlena, header and all, right in the block */
static Datum
packed_next(CompSpillDecodedBlock *blk pg_attribute_unused(),
			CompSpillColumnCursor *cur, Size *off pg_attribute_unused())
{
	const char *v = cur->values;

	cur->values += VARSIZE_1B(v);
	return PointerGetDatum(v);
}

const CompSpillEncodingOps compspill_enc_packed = {
	.name = "packed",
	.id = COMPSPILL_ENC_PACKED,
	.light = true,
	.fits = compspill_fits_packable,
	.choose = packed_choose,
	.write = packed_write,
	.check_header = packed_check_header,
	.check = packed_check,
	.setup = packed_setup,
	.next = packed_next,
};
