/*-------------------------------------------------------------------------
 *
 * enc_int.c
 *	  The FOR and DELTA column encodings of by-value integers.
 *
 * For int2/int4/int8 and the types stored as them (date, timestamp, oid):
 *
 *	FOR: frame of reference, the smallest value (8 bytes), then every
 *	value minus it in "bits" bits, bit-packed;
 *	DELTA: the first value and the smallest difference between neighbours
 *	(8 bytes each), then every later value's difference from the one
 *	before minus that smallest difference, bit-packed.
 *
 * Sorted columns take a few bits a value; narrow ones (dates, small keys,
 * line numbers) take the bits of their range.  The decoder checks every
 * integer against its type's range when it checks the block, and unpacks
 * them again a row at a time, keeping no array of them.
 *
 * IDENTIFICATION
 *	  src/codec/enc/enc_int.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "codec/enc/encoding.h"

/*
 * Find the smallest and largest of n integers of width bytes.
 */
static pg_attribute_always_inline void
int_range(const char *p, Size n, int width, int64 *min, int64 *max)
{
	int64		lo = compspill_int_at(p, 0, width);
	int64		hi = lo;

	for (Size i = 1; i < n; i++)
	{
		int64		v = compspill_int_at(p, i, width);

		lo = Min(lo, v);
		hi = Max(hi, v);
	}
	*min = lo;
	*max = hi;
}

/*
 * Find the smallest and largest difference between neighbours of n > 1
 * integers of width bytes; the differences wrap, as the decoder adds them
 * back.
 */
static pg_attribute_always_inline void
int_delta_range(const char *p, Size n, int width, int64 *dmin, int64 *dmax)
{
	int64		prev = compspill_int_at(p, 0, width);
	int64		lo = PG_INT64_MAX;
	int64		hi = PG_INT64_MIN;

	for (Size i = 1; i < n; i++)
	{
		int64		v = compspill_int_at(p, i, width);
		int64		d = (int64) ((uint64) v - (uint64) prev);

		lo = Min(lo, d);
		hi = Max(hi, d);
		prev = v;
	}
	*dmin = lo;
	*dmax = hi;
}

/* Measure the block in FOR, keeping its base for for_write */
static bool
for_choose(CompSpillEncoder *enc pg_attribute_unused(),
		   CompSpillEncoderColumn *col, CompSpillChoice *ch)
{
	Size		n = col->values.len / col->attlen;
	int64		min,
				max;
	int			bits;

	if (n == 0)
		return false;
	switch (col->attlen)
	{
		case 2:
			int_range(col->values.data, n, 2, &min, &max);
			break;
		case 4:
			int_range(col->values.data, n, 4, &min, &max);
			break;
		default:
			int_range(col->values.data, n, 8, &min, &max);
			break;
	}
	bits = compspill_bit_width((uint64) max - (uint64) min);
	col->int_min = min;
	ch->bits = (uint8) bits;
	ch->out_lengths = 0;
	ch->out_values = sizeof(int64) + compspill_packed_size(n, bits);
	return true;
}

/* Measure the block in DELTA, keeping its step for delta_write */
static bool
delta_choose(CompSpillEncoder *enc pg_attribute_unused(),
			 CompSpillEncoderColumn *col, CompSpillChoice *ch)
{
	Size		n = col->values.len / col->attlen;
	int64		dmin = 0,
				dmax = 0;
	int			bits;

	if (n == 0)
		return false;
	if (n > 1)
	{
		switch (col->attlen)
		{
			case 2:
				int_delta_range(col->values.data, n, 2, &dmin, &dmax);
				break;
			case 4:
				int_delta_range(col->values.data, n, 4, &dmin, &dmax);
				break;
			default:
				int_delta_range(col->values.data, n, 8, &dmin, &dmax);
				break;
		}
	}
	bits = compspill_bit_width((uint64) dmax - (uint64) dmin);
	col->delta_min = dmin;
	ch->bits = (uint8) bits;
	ch->out_lengths = 0;
	ch->out_values = 2 * sizeof(int64) + compspill_packed_size(n - 1, bits);
	return true;
}

/* Pack n integers of width bytes less base */
static pg_attribute_always_inline void
for_pack(CompSpillBits *b, const char *p, Size n, int width, int64 base,
		 int bits)
{
	for (Size i = 0; i < n; i++)
		compspill_bits_put(b, (uint64) compspill_int_at(p, i, width) -
						   (uint64) base, bits);
}

/* Write a FOR column's value stream */
static void
for_write(CompSpillEncoder *enc pg_attribute_unused(),
		  CompSpillEncoderColumn *col, char *p)
{
	Size		n = col->values.len / col->attlen;
	CompSpillBits b = {0};
	int64		min = col->int_min;

	compspill_put(&p, &min, sizeof(min));
	b.wp = (unsigned char *) p;
	switch (col->attlen)
	{
		case 2:
			for_pack(&b, col->values.data, n, 2, min, col->ch.bits);
			break;
		case 4:
			for_pack(&b, col->values.data, n, 4, min, col->ch.bits);
			break;
		default:
			for_pack(&b, col->values.data, n, 8, min, col->ch.bits);
			break;
	}
	compspill_bits_flush(&b);
}

/* Pack the differences of n integers of width bytes less dmin */
static pg_attribute_always_inline void
delta_pack(CompSpillBits *b, const char *p, Size n, int width, int64 dmin,
		   int bits)
{
	int64		prev = compspill_int_at(p, 0, width);

	for (Size i = 1; i < n; i++)
	{
		int64		v = compspill_int_at(p, i, width);

		compspill_bits_put(b, (uint64) v - (uint64) prev - (uint64) dmin,
						   bits);
		prev = v;
	}
}

/* Write a DELTA column's value stream */
static void
delta_write(CompSpillEncoder *enc pg_attribute_unused(),
			CompSpillEncoderColumn *col, char *p)
{
	Size		n = col->values.len / col->attlen;
	CompSpillBits b = {0};
	int64		first = compspill_int_at(col->values.data, 0, col->attlen);
	int64		dmin = col->delta_min;

	compspill_put(&p, &first, sizeof(first));
	compspill_put(&p, &dmin, sizeof(dmin));
	b.wp = (unsigned char *) p;
	switch (col->attlen)
	{
		case 2:
			delta_pack(&b, col->values.data, n, 2, dmin, col->ch.bits);
			break;
		case 4:
			delta_pack(&b, col->values.data, n, 4, dmin, col->ch.bits);
			break;
		default:
			delta_pack(&b, col->values.data, n, 8, dmin, col->ch.bits);
			break;
	}
	compspill_bits_flush(&b);
}

/* Check a FOR column's bit width and stream sizes */
static bool
for_check_header(const CompSpillColumnView *view, int attnum,
				 const char **errdetail)
{
	return compspill_check_packed_header(view, attnum, 8 * view->attlen,
										 sizeof(int64), view->nvalues,
										 errdetail);
}

/* Check a DELTA column's bit width and stream sizes */
static bool
delta_check_header(const CompSpillColumnView *view, int attnum,
				   const char **errdetail)
{
	/* the first value and the step, then the steps after the first */
	return compspill_check_packed_header(view, attnum, 64,
										 2 * sizeof(int64),
										 view->nvalues - 1, errdetail);
}

/*
 * Work out the range of an integer of attlen bytes.
 */
static void
int_limits(int16 attlen, int64 *lo, int64 *hi)
{
	switch (attlen)
	{
		case 2:
			*lo = PG_INT16_MIN;
			*hi = PG_INT16_MAX;
			break;
		case 4:
			*lo = PG_INT32_MIN;
			*hi = PG_INT32_MAX;
			break;
		default:
			*lo = PG_INT64_MIN;
			*hi = PG_INT64_MAX;
			break;
	}
}

/*
 * Check every integer of a FOR or DELTA column against its type's range,
 * and that no stray bits follow the last.  The rows unpack them again one
 * at a time (CompSpillDecodeNextRow): an array of them would be memory a
 * merge input holds for as long as it reads, a tenth of the block.
 */
static bool
int_check(CompSpillColumnCursor *cur pg_attribute_unused(),
		  CompSpillColumnCheck *chk,
		  Form_pg_attribute attr pg_attribute_unused(),
		  int attnum, Size *max_size pg_attribute_unused(),
		  const char **errdetail)
{
	const CompSpillColumnView *view = &chk->view;
	CompSpillBits b = {0};
	bool		delta = view->enc == COMPSPILL_ENC_DELTA;
	uint64		v;
	uint64		step = 0;
	int64		lo,
				hi;

	int_limits(view->attlen, &lo, &hi);
	memcpy(&v, view->values, sizeof(v));
	if (delta)
		memcpy(&step, view->values + sizeof(int64), sizeof(step));
	b.rp = (const unsigned char *) view->values +
		(delta ? 2 : 1) * sizeof(int64);

	for (uint32 i = 0; i < view->nvalues; i++)
	{
		uint64		x;

		if (!delta)
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
 * Aim a FOR or DELTA column's cursor at its first packed integer; the row
 * loop unpacks them (CompSpillDecodeNextRow).
 */
static bool
int_setup(CompSpillColumnCursor *cur, const CompSpillColumnCheck *chk,
		  int attnum pg_attribute_unused(),
		  char **fixed pg_attribute_unused(),
		  char **dicts pg_attribute_unused(), char **buf pg_attribute_unused(),
		  const char **errdetail pg_attribute_unused())
{
	const CompSpillColumnView *view = &chk->view;
	bool		delta = view->enc == COMPSPILL_ENC_DELTA;

	cur->how = delta ? COMPSPILL_HOW_DELTA : COMPSPILL_HOW_FOR;
	cur->bits = view->bits;
	cur->first = true;
	memcpy(&cur->base, view->values, sizeof(cur->base));
	cur->step = 0;
	if (delta)
		memcpy(&cur->step, view->values + sizeof(int64), sizeof(cur->step));
	memset(&cur->packed, 0, sizeof(cur->packed));
	cur->packed.rp = (const unsigned char *) view->values +
		(delta ? 2 : 1) * sizeof(int64);
	return true;
}

const CompSpillEncodingOps compspill_enc_for = {
	.name = "for",
	.id = COMPSPILL_ENC_FOR,
	.light = false,
	.fits = compspill_fits_int,
	.choose = for_choose,
	.write = for_write,
	.check_header = for_check_header,
	.check = int_check,
	.setup = int_setup,
	.next = NULL,
};

const CompSpillEncodingOps compspill_enc_delta = {
	.name = "delta",
	.id = COMPSPILL_ENC_DELTA,
	.light = false,
	.fits = compspill_fits_int,
	.choose = delta_choose,
	.write = delta_write,
	.check_header = delta_check_header,
	.check = int_check,
	.setup = int_setup,
	.next = NULL,
};
