/*-------------------------------------------------------------------------
 *
 * enc_dict.c
 *	  The DICT column encoding: a dictionary of short varlenas and codes.
 *
 * For a handful of distinct values (at most 256, all of them short): the
 * distinct values as 1-byte-header varlenas ("ndict" of them, in order of
 * first appearance), then each row's index into them in "bits" bits,
 * bit-packed.  The decoder unpacks the codes into an array once per block,
 * checking each in the same pass, and hands out pointers to the entries
 * in the block.
 *
 * The encoder's hash table is shared by the columns; choosing leaves it
 * empty again by clearing only the slots it used, and keeps each value's
 * code for the writer, which therefore hashes nothing.
 *
 * IDENTIFICATION
 *	  src/codec/enc/enc_dict.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/memutils.h"

#include "codec/enc/encoding.h"

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
 * Measure the block dictionary-coded, keeping each value's code and the
 * entries for dict_write; false when it has too many distinct values or
 * a value too long for a 1-byte header.
 */
static bool
dict_choose(CompSpillEncoder *enc, CompSpillEncoderColumn *col,
			CompSpillChoice *ch)
{
	uint32		n = compspill_col_nvalues(enc, col);
	const char *lp = col->lengths.data;
	const char *lend = col->lengths.data + col->lengths.len;
	const char *vp = col->values.data;
	CompSpillDictSlot *slots;
	uint16		used[COMPSPILL_DICT_MAX];
	uint32		ndict = 0;
	Size		dict_bytes = 0;
	uint32		i = 0;
	bool		ok = true;
	int			bits;

	if (n == 0 || col->nraw > 0 || col->maxlen > COMPSPILL_SHORT_MAX)
		return false;
	if (enc->slots == NULL)
		enc->slots = MemoryContextAllocZero(enc->cxt,
											sizeof(CompSpillDictSlot) *
											COMPSPILL_DICT_SLOTS);
	slots = enc->slots;
	if (col->dict_data == NULL)
	{
		col->dict_data = MemoryContextAlloc(enc->cxt, sizeof(const char *) *
											COMPSPILL_DICT_MAX);
		col->dict_len = MemoryContextAlloc(enc->cxt, sizeof(uint32) *
										   COMPSPILL_DICT_MAX);
	}
	col->codes = compspill_scratch(enc, col->codes, &col->codes_cap,
								   sizeof(uint8), n);

	while (lp < lend)
	{
		uint32		len = compspill_next_varint(&lp) >> 1;
		uint32		h = compspill_hash(vp, len) & (COMPSPILL_DICT_SLOTS - 1);

		for (;;)
		{
			CompSpillDictSlot *slot = &slots[h];

			if (slot->data == NULL)
			{
				if (ndict >= COMPSPILL_DICT_MAX)
				{
					ok = false;
					break;
				}
				slot->data = vp;
				slot->len = len;
				slot->code = ndict;
				used[ndict] = (uint16) h;
				col->dict_data[ndict] = vp;
				col->dict_len[ndict] = len;
				dict_bytes += VARHDRSZ_SHORT + len;
				col->codes[i] = (uint8) ndict++;
				break;
			}
			if (slot->len == len && memcmp(slot->data, vp, len) == 0)
			{
				col->codes[i] = (uint8) slot->code;
				break;
			}
			h = (h + 1) & (COMPSPILL_DICT_SLOTS - 1);
		}
		if (!ok)
			break;
		i++;
		vp += len;
	}

	/* leave the table empty for the next column */
	for (uint32 k = 0; k < ndict; k++)
		slots[used[k]].data = NULL;
	if (!ok)
		return false;

	bits = compspill_bit_width(ndict - 1);
	ch->bits = (uint8) bits;
	ch->ndict = ndict;
	ch->out_lengths = 0;
	ch->out_values = dict_bytes + compspill_packed_size(n, bits);
	ch->out_aux = dict_bytes;
	return true;
}

/* Write the entries, then the codes dict_choose kept */
static void
dict_write(CompSpillEncoder *enc, CompSpillEncoderColumn *col, char *p)
{
	uint32		n = compspill_col_nvalues(enc, col);
	CompSpillBits b = {0};

	for (uint32 k = 0; k < col->ch.ndict; k++)
	{
		uint32		len = col->dict_len[k];

		SET_VARSIZE_SHORT(p, len + VARHDRSZ_SHORT);
		memcpy(p + VARHDRSZ_SHORT, col->dict_data[k], len);
		p += len + VARHDRSZ_SHORT;
	}
	b.wp = (unsigned char *) p;
	for (uint32 i = 0; i < n; i++)
		compspill_bits_put(&b, col->codes[i], col->ch.bits);
	compspill_bits_flush(&b);
}

/* Check a DICT column's dictionary size, bit width and stream sizes */
static bool
dict_check_header(const CompSpillColumnView *view, int attnum,
				  const char **errdetail)
{
	uint64		n = view->nvalues;

	if (view->ndict == 0 || view->ndict > COMPSPILL_DICT_MAX ||
		view->ndict > n ||
		view->bits != compspill_bit_width(view->ndict - 1))
		return compspill_params_error(view, attnum, errdetail);
	if (view->lengths_len == 0 &&
		view->values_len >= view->ndict + compspill_packed_size(n, view->bits) &&
		view->values_len <= view->ndict * VARATT_SHORT_MAX +
		compspill_packed_size(n, view->bits))
		return true;
	return compspill_stream_sizes_error(view, attnum, errdetail);
}

/* Check the entries; the codes are checked while they are set up */
static bool
dict_check(CompSpillColumnCursor *cur pg_attribute_unused(),
		   CompSpillColumnCheck *chk,
		   Form_pg_attribute attr pg_attribute_unused(), int attnum,
		   Size *max_size pg_attribute_unused(), const char **errdetail)
{
	const CompSpillColumnView *view = &chk->view;
	int64		used;

	used = compspill_check_packed(view->values, view->values_len,
								  view->ndict, attnum, "dictionary entry",
								  errdetail);
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
	chk->dicts_len = sizeof(Datum) * view->ndict;
	chk->fixed_len = view->nvalues;
	return true;
}

/*
 * Point at the entries, and unpack the codes into an array at *fixed,
 * checking each against the dictionary in the same pass.
 */
static bool
dict_setup(CompSpillColumnCursor *cur, const CompSpillColumnCheck *chk,
		   int attnum, char **fixed, char **dicts,
		   char **buf pg_attribute_unused(), const char **errdetail)
{
	const CompSpillColumnView *view = &chk->view;
	const char *p = view->values;
	CompSpillBits b = {0};

	cur->dict = (Datum *) *dicts;
	for (uint32 i = 0; i < view->ndict; i++)
	{
		cur->dict[i] = PointerGetDatum(p);
		p += VARSIZE_1B(p);
	}
	*dicts += chk->dicts_len;

	b.rp = (const unsigned char *) p;
	for (uint32 i = 0; i < view->nvalues; i++)
	{
		uint64		code = compspill_bits_get(&b, view->bits);

		(*fixed)[i] = (char) (uint8) code;
		if (code >= view->ndict)
		{
			*errdetail = psprintf("Column %d code %u is %llu, past the dictionary of %u.",
								  attnum, i + 1, (unsigned long long) code,
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
	cur->values = *fixed;
	*fixed += chk->fixed_len;
	return true;
}

/* The entry of the next code */
static Datum
dict_next(CompSpillDecodedBlock *blk pg_attribute_unused(),
		  CompSpillColumnCursor *cur, Size *off pg_attribute_unused())
{
	return cur->dict[(uint8) *cur->values++];
}

const CompSpillEncodingOps compspill_enc_dict = {
	.name = "dict",
	.id = COMPSPILL_ENC_DICT,
	.light = false,
	.fits = compspill_fits_packable,
	.choose = dict_choose,
	.write = dict_write,
	.check_header = dict_check_header,
	.check = dict_check,
	.setup = dict_setup,
	.next = dict_next,
};
