/*-------------------------------------------------------------------------
 *
 * enc_numeric.c
 *	  The NUMERIC column encoding: numerics as scaled integers.
 *
 * For columns of type numeric whose values all have one display scale (at
 * most 15) and fit an int64 once scaled by it (a price 52611.16 of
 * numeric(15,2) is 5261116): the smallest such integer (8 bytes), the
 * display scale (1 byte), then each integer less the smallest,
 * bit-packed.  The decoder rebuilds each value's short on-disk form,
 * which numeric.c keeps to itself; the encoder therefore takes only
 * values that come back byte for byte, so a value it does not understand
 * (NaN, infinity, a long-form numeric) only keeps the column in another
 * encoding.  Each value is converted once, while choosing; the writer
 * packs the integers kept then.
 *
 * IDENTIFICATION
 *	  src/codec/enc/enc_numeric.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/tupmacs.h"
#include "catalog/pg_type.h"

#include "codec/enc/encoding.h"

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

/* NUMERIC fits columns of type numeric */
static bool
numeric_fits(uint8 kind, int16 attlen pg_attribute_unused(),
			 bool may_pack pg_attribute_unused(), Oid typid)
{
	return kind == COMPSPILL_KIND_VARLENA && typid == NUMERICOID;
}

/*
 * Convert every value of the block to its integer, keeping them for
 * numeric_write; false unless all are short numerics of one display
 * scale that compspill_int_to_numeric rebuilds exactly.
 */
static bool
numeric_choose(CompSpillEncoder *enc, CompSpillEncoderColumn *col,
			   CompSpillChoice *ch)
{
	uint32		n = compspill_col_nvalues(enc, col);
	const char *lp = col->lengths.data;
	const char *lend = col->lengths.data + col->lengths.len;
	const char *vp = col->values.data;
	int64		min = 0,
				max = 0;
	int			dscale = -1;
	uint32		i = 0;
	int			bits;

	if (n == 0 || col->nraw > 0 || !col->is_numeric ||
		col->maxlen > COMPSPILL_NUMERIC_MAX_DATA)
		return false;
	col->nums = compspill_scratch(enc, col->nums, &col->nums_cap,
								   sizeof(int64), n);

	while (lp < lend)
	{
		Size		len = compspill_next_varint(&lp) >> 1;
		int			ds;
		int64		u;

		if (!compspill_numeric_to_int(vp, len, &ds, &u))
			return false;
		if (dscale < 0)
		{
			dscale = ds;
			min = max = u;
		}
		else if (ds != dscale)
			return false;
		min = Min(min, u);
		max = Max(max, u);
		col->nums[i++] = u;
		vp += len;
	}
	bits = compspill_bit_width((uint64) max - (uint64) min);
	col->num_base = min;
	ch->bits = (uint8) bits;
	ch->out_lengths = 0;
	ch->out_values = sizeof(int64) + 1 + compspill_packed_size(n, bits);
	ch->out_aux = (Size) dscale;
	return true;
}

/*
 * Write the smallest integer, the display scale, then each integer less
 * the smallest, bit-packed.
 */
static void
numeric_write(CompSpillEncoder *enc, CompSpillEncoderColumn *col, char *p)
{
	uint32		n = compspill_col_nvalues(enc, col);
	CompSpillBits b = {0};
	int64		base = col->num_base;
	uint8		ds = (uint8) col->ch.out_aux;

	compspill_put(&p, &base, sizeof(base));
	compspill_put(&p, &ds, sizeof(ds));
	b.wp = (unsigned char *) p;
	for (uint32 i = 0; i < n; i++)
		compspill_bits_put(&b, (uint64) col->nums[i] - (uint64) base,
						   col->ch.bits);
	compspill_bits_flush(&b);
}

/* Check a NUMERIC column's bit width and stream sizes */
static bool
numeric_check_header(const CompSpillColumnView *view, int attnum,
					 const char **errdetail)
{
	/* the base and the digit shift, then the scaled integers */
	return compspill_check_packed_header(view, attnum, 64,
										 sizeof(int64) + 1, view->nvalues,
										 errdetail);
}

/* Check the display scale; a value takes at most one short numeric */
static bool
numeric_check(CompSpillColumnCursor *cur,
			  CompSpillColumnCheck *chk,
			  Form_pg_attribute attr pg_attribute_unused(), int attnum,
			  Size *max_size, const char **errdetail)
{
	cur->dscale = (uint8) chk->view.values[sizeof(int64)];
	if (cur->dscale > COMPSPILL_NUMERIC_DSCALE_MAX)
	{
		*errdetail = psprintf("Column %d numeric display scale %u is out of range.",
							  attnum, (unsigned) cur->dscale);
		return false;
	}
	*max_size = VARHDRSZ + COMPSPILL_NUMERIC_MAX_DATA + MAXIMUM_ALIGNOF;
	return true;
}

/* Check the padding bits, and aim at the packed integers */
static bool
numeric_setup(CompSpillColumnCursor *cur,
			  const CompSpillColumnCheck *chk, int attnum,
			  char **fixed pg_attribute_unused(),
			  char **dicts pg_attribute_unused(),
			  char **buf pg_attribute_unused(), const char **errdetail)
{
	const CompSpillColumnView *view = &chk->view;
	uint64		nbits = (uint64) view->nvalues * view->bits;

	/*
	 * Any 64-bit integer makes a numeric (the sum with the base may wrap),
	 * so only the padding bits are left to check; the rows unpack the
	 * integers one at a time.
	 */
	if (nbits % 8 != 0 &&
		((uint8) view->values[view->values_len - 1] >> (nbits % 8)) != 0)
	{
		*errdetail = psprintf("Column %d packed numerics have stray bits after the last one.",
							  attnum);
		return false;
	}
	cur->bits = view->bits;
	memcpy(&cur->base, view->values, sizeof(cur->base));
	memset(&cur->packed, 0, sizeof(cur->packed));
	cur->packed.rp = (const unsigned char *) view->values + sizeof(int64) + 1;
	return true;
}

/* Rebuild the next numeric in the arena */
static Datum
numeric_next(CompSpillDecodedBlock *blk, CompSpillColumnCursor *cur,
			 Size *off)
{
	int64		u = (int64) (cur->base +
							 compspill_bits_get(&cur->packed, cur->bits));
	Size		o = *off;
	Size		len;
	char	   *dst;

	if (!cur->may_pack)
		o = att_align_nominal(o, cur->valign);
	if (o + VARHDRSZ + COMPSPILL_NUMERIC_MAX_DATA > blk->arena_cap)
		elog(ERROR, "compspill block decoder overran its arena");
	dst = blk->arena + o;
	if (cur->may_pack)
	{
		len = compspill_int_to_numeric(u, cur->dscale, dst + VARHDRSZ_SHORT);
		SET_VARSIZE_SHORT(dst, len + VARHDRSZ_SHORT);
		*off = o + len + VARHDRSZ_SHORT;
	}
	else
	{
		len = compspill_int_to_numeric(u, cur->dscale, dst + VARHDRSZ);
		SET_VARSIZE(dst, len + VARHDRSZ);
		*off = o + len + VARHDRSZ;
	}
	return PointerGetDatum(dst);
}

const CompSpillEncodingOps compspill_enc_numeric = {
	.name = "numeric",
	.id = COMPSPILL_ENC_NUMERIC,
	.light = false,
	.fits = numeric_fits,
	.choose = numeric_choose,
	.write = numeric_write,
	.check_header = numeric_check_header,
	.check = numeric_check,
	.setup = numeric_setup,
	.next = numeric_next,
};
