/*-------------------------------------------------------------------------
 *
 * enc_front.c
 *	  The FRONT column encoding: front coding of varlenas.
 *
 * For sorted or prefix-sharing columns: a stream of varints of the length
 * each value shares with the previous one, then one of the lengths of the
 * rest, then the rest of each value.  The decoder rebuilds each value in
 * one buffer per column, where the shared prefix is already in place.
 *
 * IDENTIFICATION
 *	  src/codec/enc/enc_front.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "port/pg_bitutils.h"

#include "codec/enc/encoding.h"

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
 * Measure the block front-coded, keeping each value's shared length for
 * front_write.
 */
static bool
front_choose(CompSpillEncoder *enc, CompSpillEncoderColumn *col,
			 CompSpillChoice *ch)
{
	uint32		n = compspill_col_nvalues(enc, col);
	const char *lp = col->lengths.data;
	const char *lend = col->lengths.data + col->lengths.len;
	const char *vp = col->values.data;
	const char *prev = NULL;
	Size		prevlen = 0;
	Size		prefix = 0;
	Size		lens = 0;
	Size		rest = 0;
	uint32		i = 0;

	if (n == 0 || col->nraw > 0)
		return false;
	col->shared = compspill_scratch(enc, col->shared, &col->shared_cap,
								   sizeof(uint32), n);

	while (lp < lend)
	{
		Size		len = compspill_next_varint(&lp) >> 1;
		Size		shared;

		shared = prev == NULL ? 0 :
			compspill_common_prefix(prev, vp, Min(len, prevlen));
		col->shared[i++] = (uint32) shared;
		prefix += compspill_varint_size((uint32) shared);
		lens += compspill_varint_size((uint32) (len - shared));
		rest += len - shared;
		prev = vp;
		prevlen = len;
		vp += len;
	}
	Assert(i == n);
	ch->out_lengths = prefix + lens;
	ch->out_values = rest;
	ch->out_aux = prefix;
	return true;
}

/* Write the shared lengths, the rest lengths and the rests */
static void
front_write(CompSpillEncoder *enc pg_attribute_unused(),
			CompSpillEncoderColumn *col, char *p)
{
	const char *lp = col->lengths.data;
	const char *lend = col->lengths.data + col->lengths.len;
	const char *vp = col->values.data;
	char	   *prefixes = p;
	char	   *suffixes = p + col->ch.out_aux;
	char	   *rest = p + col->ch.out_lengths;
	uint32		i = 0;

	while (lp < lend)
	{
		Size		len = compspill_next_varint(&lp) >> 1;
		Size		shared = col->shared[i++];

		prefixes += compspill_write_varint(prefixes, (uint32) shared);
		suffixes += compspill_write_varint(suffixes, (uint32) (len - shared));
		memcpy(rest, vp + shared, len - shared);
		rest += len - shared;
		vp += len;
	}
	Assert(prefixes == p + col->ch.out_aux &&
		   suffixes == p + col->ch.out_lengths);
}

/* Check a FRONT column's stream sizes */
static bool
front_check_header(const CompSpillColumnView *view, int attnum,
				   const char **errdetail)
{
	uint64		n = view->nvalues;

	if (!compspill_no_params(view, attnum, errdetail))
		return false;
	if (n > 0 && view->lengths_len >= 2 * n &&
		view->lengths_len <= 2 * n * COMPSPILL_VARINT_MAX)
		return true;
	return compspill_stream_sizes_error(view, attnum, errdetail);
}

/*
 * Check the streams of a FRONT column: every shared prefix within the
 * previous value, every rest within the value stream; size the rebuild
 * buffer for the longest value, and aim cur->suffixes at the second
 * length stream.
 */
static bool
front_check(CompSpillColumnCursor *cur,
			CompSpillColumnCheck *chk,
			Form_pg_attribute attr pg_attribute_unused(), int attnum,
			Size *max_size pg_attribute_unused(), const char **errdetail)
{
	const CompSpillColumnView *view = &chk->view;
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
	chk->buf_len = MAXALIGN(VARHDRSZ + longest);
	return true;
}

/* Take the column's rebuild buffer */
static bool
front_setup(CompSpillColumnCursor *cur, const CompSpillColumnCheck *chk,
			int attnum pg_attribute_unused(),
			char **fixed pg_attribute_unused(),
			char **dicts pg_attribute_unused(), char **buf,
			const char **errdetail pg_attribute_unused())
{
	cur->buf = *buf;
	*buf += chk->buf_len;
	return true;
}

/* Rebuild the next value over the previous one */
static Datum
front_next(CompSpillDecodedBlock *blk pg_attribute_unused(),
		   CompSpillColumnCursor *cur, Size *off pg_attribute_unused())
{
	/* the shared prefix is still in place from the last row */
	uint32		shared = compspill_next_varint(&cur->lengths);
	uint32		rest = compspill_next_varint(&cur->suffixes);
	Size		len = (Size) shared + rest;
	char	   *dst;

	memcpy(cur->buf + VARHDRSZ + shared, cur->values, rest);
	cur->values += rest;
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
	return PointerGetDatum(dst);
}

const CompSpillEncodingOps compspill_enc_front = {
	.name = "front",
	.id = COMPSPILL_ENC_FRONT,
	.light = false,
	.fits = compspill_fits_varlena,
	.choose = front_choose,
	.write = front_write,
	.check_header = front_check_header,
	.check = front_check,
	.setup = front_setup,
	.next = front_next,
};
