/*-------------------------------------------------------------------------
 *
 * enc_common.c
 *	  Helpers shared by the block codec's column encodings.
 *
 * IDENTIFICATION
 *	  src/codec/enc/enc_common.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "port/pg_bitutils.h"
#include "utils/memutils.h"

#include "base/buffer.h"
#include "codec/enc/encoding.h"

/*
 * Grow a stream buffer to hold at least need bytes, keeping its contents.
 */
void
compspill_stream_grow(MemoryContext cxt, CompSpillStream *s, Size need)
{
	Size		newcap = CompSpillGrowSize(s->cap, Max(need, 64));

	if (s->data == NULL)
		s->data = MemoryContextAllocHuge(cxt, newcap);
	else
		s->data = repalloc_huge(s->data, newcap);
	s->cap = newcap;
}

/*
 * Return a per-value scratch array of a column (FRONT's shared lengths,
 * DICT's codes, NUMERIC's integers) at array, of *cap values of width
 * bytes, made to hold at least n values; it grows by doubling, and keeps
 * none of its contents when it does.
 */
void *
compspill_scratch(CompSpillEncoder *enc, void *array, uint32 *cap,
				  Size width, uint32 n)
{
	uint32		newcap;

	if (n <= *cap && array != NULL)
		return array;
	newcap = pg_nextpower2_32(Max(n, 64));
	if (array != NULL)
		pfree(array);
	*cap = 0;
	array = MemoryContextAllocHuge(enc->cxt, width * newcap);
	*cap = newcap;
	return array;
}

/*
 * Check that a stored raw varlena is a TOAST pointer or a compressed value
 * whose own size is its stored length.
 */
bool
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
 * Check that the n values of a PACKED stream, or the n entries of a
 * dictionary, are well-formed short varlenas inside len bytes at p; return
 * the bytes they take, or -1 (with *errdetail) if they are not.
 */
int64
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
bool
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
 * Report stream sizes that do not follow from a column's header; return
 * false.
 */
bool
compspill_stream_sizes_error(const CompSpillColumnView *view, int attnum,
							 const char **errdetail)
{
	*errdetail = psprintf("Column %d holds %zu length bytes and %zu value bytes for %u values in encoding %u of %u bits.",
						  attnum, view->lengths_len, view->values_len,
						  view->nvalues, (unsigned) view->enc,
						  (unsigned) view->bits);
	return false;
}

/*
 * Check that an encoding without a bit width or dictionary has neither.
 */
bool
compspill_no_params(const CompSpillColumnView *view, int attnum,
					const char **errdetail)
{
	if (view->bits != 0 || view->ndict != 0)
		return compspill_params_error(view, attnum, errdetail);
	return true;
}

/*
 * Report a bit width or dictionary size that does not fit a column's
 * encoding; return false.
 */
bool
compspill_params_error(const CompSpillColumnView *view, int attnum,
					   const char **errdetail)
{
	*errdetail = psprintf("Column %d has a bit width of %u and %u dictionary entries for encoding %u and %u values.",
						  attnum, (unsigned) view->bits, view->ndict,
						  (unsigned) view->enc, view->nvalues);
	return false;
}

/*
 * Check the header of a column whose value stream is prefix bytes and then
 * npacked values of the header's bit width (at most max_bits), with no
 * dictionary and no length stream: FOR, DELTA and NUMERIC.
 */
bool
compspill_check_packed_header(const CompSpillColumnView *view, int attnum,
							  int max_bits, Size prefix, uint64 npacked,
							  const char **errdetail)
{
	if (view->bits > max_bits || view->ndict != 0)
		return compspill_params_error(view, attnum, errdetail);
	if (view->nvalues > 0 && view->lengths_len == 0 &&
		view->values_len == prefix + compspill_packed_size(npacked, view->bits))
		return true;
	return compspill_stream_sizes_error(view, attnum, errdetail);
}

/* Any varlena column */
bool
compspill_fits_varlena(uint8 kind, int16 attlen pg_attribute_unused(),
					   bool may_pack pg_attribute_unused(),
					   Oid typid pg_attribute_unused())
{
	return kind == COMPSPILL_KIND_VARLENA;
}

/* A varlena column whose values may have 1-byte headers */
bool
compspill_fits_packable(uint8 kind, int16 attlen pg_attribute_unused(),
						bool may_pack, Oid typid pg_attribute_unused())
{
	return kind == COMPSPILL_KIND_VARLENA && may_pack;
}

/* A by-value integer column of 2, 4 or 8 bytes */
bool
compspill_fits_int(uint8 kind, int16 attlen,
				   bool may_pack pg_attribute_unused(),
				   Oid typid pg_attribute_unused())
{
	return kind == COMPSPILL_KIND_BYVAL && attlen > 1;
}
