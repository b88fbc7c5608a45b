/*-------------------------------------------------------------------------
 *
 * tupleform.c
 *	  Forming minimal tuples from datums, for the rows a sort or a store
 *	  keeps in memory.
 *
 * A sort or a store copies each row it takes into its own memory as a
 * minimal tuple.  A row given as datums (a projection's virtual slot, a
 * row decoded from a column frame) is formed by heap_form_minimal_tuple,
 * whose fill_val copies each by-reference value with an inlined copy that
 * costs the same for a 4-byte value as for a page: under a Material
 * above a sort of column frames that was a fifth of the time.  This file
 * forms the same tuple, byte for byte (the same layout, short varlena
 * headers where heap_fill_tuple makes them, zeroed padding), with the
 * attributes' facts read once from the descriptor and every copy a plain
 * memcpy.  An expanded object, which must be flattened, goes the server's
 * way.
 *
 * IDENTIFICATION
 *	  src/sort/tupleform.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/tupmacs.h"
#include "utils/expandeddatum.h"	/* brings varatt.h on 16 and later */
#include "utils/memutils.h"

#include "base/compat.h"
#include "sort/tupleform.h"

/* the alignment of a typalign, in bytes */
static uint8
compspill_alignby(char attalign)
{
	switch (attalign)
	{
		case TYPALIGN_CHAR:
			return 1;
		case TYPALIGN_SHORT:
			return ALIGNOF_SHORT;
		case TYPALIGN_INT:
			return ALIGNOF_INT;
		default:
			return ALIGNOF_DOUBLE;
	}
}

/*
 * Read what forming rows of tupdesc needs, in the current memory context.
 */
CompSpillTupleForm *
CompSpillTupleFormCreate(TupleDesc tupdesc)
{
	CompSpillTupleForm *form;

	form = palloc(offsetof(CompSpillTupleForm, atts) +
				  sizeof(CompSpillFormAtt) * Max(tupdesc->natts, 1));
	form->tupdesc = tupdesc;
	form->natts = tupdesc->natts;
	for (int i = 0; i < tupdesc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(tupdesc, i);
		CompSpillFormAtt *a = &form->atts[i];

		a->attlen = att->attlen;
		a->alignby = compspill_alignby(att->attalign);
		a->byval = att->attbyval;
		a->packable = att->attlen == -1 && att->attstorage != TYPSTORAGE_PLAIN;
	}
	return form;
}

/*
 * Copy len bytes, a short varlena or a small fixed-width value: in 8-byte
 * words, the last one overlapping.  memcpy with a length the compiler
 * knows to be small becomes a rep movsq, whose start costs more than such
 * a copy.
 */
static inline void
compspill_copy_small(char *dst, const char *src, Size len)
{
	if (len >= 8)
	{
		for (Size off = 0; off + 8 < len; off += 8)
			memcpy(dst + off, src + off, 8);
		memcpy(dst + len - 8, src + len - 8, 8);
	}
	else if (len >= 4)
	{
		memcpy(dst, src, 4);
		memcpy(dst + len - 4, src + len - 4, 4);
	}
	else
	{
		for (Size i = 0; i < len; i++)
			dst[i] = src[i];
	}
}

/* the longest value compspill_copy_small copies */
#define COMPSPILL_SMALL_COPY	128

/* Zero the padding up to the next multiple of alignby from start */
static inline char *
compspill_pad(char *data, const char *start, uint8 alignby)
{
	Size		off = (Size) (data - start);
	Size		aligned = TYPEALIGN(alignby, off);

	if (aligned != off)
	{
		memset(data, 0, aligned - off);
		data += aligned - off;
	}
	return data;
}

/*
 * Return len bytes for a tuple: from alloc where the caller gives one,
 * else palloc'd in the current memory context.
 */
static inline MinimalTuple
compspill_tuple_alloc(Size len, CompSpillTupleAlloc alloc, void *arg)
{
	if (alloc != NULL)
		return (MinimalTuple) alloc(len, arg);
	return (MinimalTuple) palloc(len);
}

/*
 * Copy the minimal tuple tup into memory from alloc (see
 * CompSpillFormMinimalWith).
 */
static MinimalTuple
compspill_copy_minimal(MinimalTuple tup, CompSpillTupleAlloc alloc,
					   void *arg)
{
	MinimalTuple copy = compspill_tuple_alloc(tup->t_len, alloc, arg);

	memcpy(copy, tup, tup->t_len);
	return copy;
}

/*
 * Form a minimal tuple of the row (values, isnull), in the current memory
 * context, as heap_form_minimal_tuple would.
 */
MinimalTuple
CompSpillFormMinimal(const CompSpillTupleForm *form, const Datum *values,
					 const bool *isnull)
{
	return CompSpillFormMinimalWith(form, values, isnull, NULL, NULL);
}

/*
 * CompSpillFormMinimal, in memory that alloc(len, arg) gives (the current
 * memory context's if alloc is NULL): for a caller that carves its tuples
 * from larger chunks.
 */
MinimalTuple
CompSpillFormMinimalWith(const CompSpillTupleForm *form, const Datum *values,
						 const bool *isnull, CompSpillTupleAlloc alloc,
						 void *arg)
{
	int			natts = form->natts;
	bool		hasnull = false;
	Size		data_len = 0;
	Size		hoff;
	uint16		infomask = 0;
	MinimalTuple tup;
	char	   *start;
	char	   *data;

	/* the data's length, as heap_compute_data_size counts it */
	for (int i = 0; i < natts; i++)
	{
		const CompSpillFormAtt *a = &form->atts[i];
		Pointer		p;

		if (isnull[i])
		{
			hasnull = true;
			continue;
		}
		if (a->attlen > 0)
		{
			data_len = TYPEALIGN(a->alignby, data_len) + a->attlen;
			continue;
		}
		if (a->attlen == -2)
		{
			data_len += strlen(DatumGetCString(values[i])) + 1;
			continue;
		}
		p = DatumGetPointer(values[i]);
		if (VARATT_IS_1B(p))
		{
			/* a short varlena, or a TOAST pointer: never aligned */
			if (unlikely(VARATT_IS_EXTERNAL_EXPANDED(p)))
			{
				MinimalTuple flat;

				flat = CompSpillFormMinimalTuple(form->tupdesc,
												 (Datum *) values,
												 (bool *) isnull);
				if (alloc == NULL)
					return flat;
				tup = compspill_copy_minimal(flat, alloc, arg);
				pfree(flat);
				return tup;
			}
			data_len += VARSIZE_ANY(p);
		}
		else if (a->packable && VARATT_CAN_MAKE_SHORT(p))
			data_len += VARATT_CONVERTED_SHORT_SIZE(p);
		else
			data_len = TYPEALIGN(a->alignby, data_len) + VARSIZE(p);
	}

	hoff = SizeofMinimalTupleHeader;
	if (hasnull)
		hoff += BITMAPLEN(natts);
	hoff = MAXALIGN(hoff);

	tup = compspill_tuple_alloc(hoff + data_len, alloc, arg);
	memset(tup, 0, hoff);
	tup->t_len = (uint32) (hoff + data_len);
	HeapTupleHeaderSetNatts(tup, natts);
	tup->t_hoff = (uint8) (hoff + MINIMAL_TUPLE_OFFSET);

	/* the data, as heap_fill_tuple lays it out */
	start = data = (char *) tup + hoff;
	for (int i = 0; i < natts; i++)
	{
		const CompSpillFormAtt *a = &form->atts[i];
		Pointer		p;
		Size		len;

		if (isnull[i])
			continue;
		if (hasnull)
			tup->t_bits[i >> 3] |= (bits8) (1 << (i & 7));

		if (a->byval)
		{
			data = compspill_pad(data, start, a->alignby);
			store_att_byval(data, values[i], a->attlen);
			data += a->attlen;
		}
		else if (a->attlen > 0)
		{
			data = compspill_pad(data, start, a->alignby);
			if (a->attlen <= COMPSPILL_SMALL_COPY)
				compspill_copy_small(data, DatumGetPointer(values[i]),
									 a->attlen);
			else
				memcpy(data, DatumGetPointer(values[i]), a->attlen);
			data += a->attlen;
		}
		else if (a->attlen == -1)
		{
			infomask |= HEAP_HASVARWIDTH;
			p = DatumGetPointer(values[i]);
			if (VARATT_IS_1B(p))
			{
				len = VARSIZE_ANY(p);
				if (VARATT_IS_EXTERNAL(p))
				{
					infomask |= HEAP_HASEXTERNAL;
					memcpy(data, p, len);
				}
				else
					compspill_copy_small(data, p, len);	/* at most 127 */
			}
			else if (a->packable && VARATT_CAN_MAKE_SHORT(p))
			{
				len = VARATT_CONVERTED_SHORT_SIZE(p);
				SET_VARSIZE_SHORT(data, len);
				compspill_copy_small(data + 1, VARDATA(p), len - 1);
			}
			else
			{
				data = compspill_pad(data, start, a->alignby);
				len = VARSIZE(p);
				memcpy(data, p, len);
			}
			data += len;
		}
		else
		{
			infomask |= HEAP_HASVARWIDTH;
			len = strlen(DatumGetCString(values[i])) + 1;
			memcpy(data, DatumGetCString(values[i]), len);
			data += len;
		}
	}
	Assert((Size) (data - start) == data_len);

	if (hasnull)
		infomask |= HEAP_HASNULL;
	tup->t_infomask = infomask;

#ifdef USE_ASSERT_CHECKING
	{
		/* the server's tuple of the same row, formed in a context of its own */
		static MemoryContext checkcxt = NULL;
		MemoryContext oldcxt;
		MinimalTuple check;

		if (checkcxt == NULL)
			checkcxt = AllocSetContextCreate(TopMemoryContext,
											 "CompSpill tuple check",
											 ALLOCSET_DEFAULT_SIZES);
		oldcxt = MemoryContextSwitchTo(checkcxt);
		check = CompSpillFormMinimalTuple(form->tupdesc, (Datum *) values,
										  (bool *) isnull);
		Assert(check->t_len == tup->t_len &&
			   memcmp(check, tup, tup->t_len) == 0);
		MemoryContextSwitchTo(oldcxt);
		MemoryContextReset(checkcxt);
	}
#endif

	return tup;
}

/*
 * Copy the row in slot into a minimal tuple in the current memory context:
 * a virtual slot's datums formed here, any other slot's row copied the
 * way its own operations copy it (a memcpy for a heap or minimal tuple).
 */
MinimalTuple
CompSpillCopySlotMinimal(const CompSpillTupleForm *form, TupleTableSlot *slot)
{
	return CompSpillCopySlotMinimalWith(form, slot, NULL, NULL);
}

/*
 * CompSpillCopySlotMinimal, in memory that alloc(len, arg) gives (see
 * CompSpillFormMinimalWith).  A heap or minimal tuple is copied once, from
 * where the slot holds it; another kind of slot's row is copied by the
 * slot's own operations first.
 */
MinimalTuple
CompSpillCopySlotMinimalWith(const CompSpillTupleForm *form,
							 TupleTableSlot *slot, CompSpillTupleAlloc alloc,
							 void *arg)
{
	MinimalTuple tup;

	if (TTS_IS_VIRTUAL(slot))
	{
		Assert(slot->tts_tupleDescriptor->natts == form->natts);
		slot_getallattrs(slot);
		return CompSpillFormMinimalWith(form, slot->tts_values,
										slot->tts_isnull, alloc, arg);
	}
	if (alloc == NULL)
		return ExecCopySlotMinimalTuple(slot);
	if (TTS_IS_HEAPTUPLE(slot) || TTS_IS_BUFFERTUPLE(slot))
	{
		/* a minimal tuple is a heap tuple's header and data, from t_len */
		HeapTuple	htup = ExecFetchSlotHeapTuple(slot, false, NULL);
		uint32		len = htup->t_len - MINIMAL_TUPLE_OFFSET;

		tup = compspill_tuple_alloc(len, alloc, arg);
		memcpy(tup, (char *) htup->t_data + MINIMAL_TUPLE_OFFSET, len);
		tup->t_len = len;
	}
	else
	{
		bool		shouldfree;
		MinimalTuple held = ExecFetchSlotMinimalTuple(slot, &shouldfree);

		tup = compspill_copy_minimal(held, alloc, arg);
		if (shouldfree)
			pfree(held);
	}
	return tup;
}
