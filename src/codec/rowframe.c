/*-------------------------------------------------------------------------
 *
 * rowframe.c
 *	  Row frames: rows as native sort writes them, for spills where I/O
 *	  is cheap and the column codec's work does not pay.
 *
 * A row frame's payload (before compression, and after the frame layer has
 * checked its CRC, decrypted and decompressed it) is nrows rows back to
 * back, with no alignment:
 *
 *		uint32	len			bytes of the body that follows
 *		body				the minimal tuple from MINIMAL_TUPLE_DATA_OFFSET
 *							on: t_infomask2, t_infomask, t_hoff, the null
 *							bitmap, padding and the attributes
 *
 * which is what tuplesort's heap tuples look like on tape, less the
 * trailing length word of random-access tapes.  Writing a row is two
 * memcpys of the sorter's minimal tuple; reading one is a memcpy of the
 * body into a MAXALIGNed buffer behind a rebuilt t_len, so the caller gets
 * a minimal tuple without forming it.
 *
 * A frame is checked as a whole before its first row is handed out: the
 * lengths must tile the payload exactly into nrows rows, and each row's
 * header must describe a tuple of the spill's descriptor whose null
 * bitmap and data offset lie inside the row.  The attribute bytes are not
 * walked (that would cost a deform per row, which row frames exist to
 * avoid): they are guarded by the frame's CRC-32C, and with encryption by
 * its authentication tag, as the header fields are.
 *
 * IDENTIFICATION
 *	  src/codec/rowframe.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/memutils.h"

#include "base/buffer.h"
#include "codec/rowframe.h"

/* the smallest body: the header fields after t_len and its padding */
#define COMPSPILL_ROW_MIN_BODY \
	(SizeofMinimalTupleHeader - MINIMAL_TUPLE_DATA_OFFSET)

/*
 * Prepare w to collect the rows of frames of about target bytes, in
 * memory of cxt.
 */
void
CompSpillRowWriterInit(CompSpillRowWriter *w, MemoryContext cxt, Size target)
{
	w->cxt = cxt;
	w->target = Max(target, (Size) 1024);
	w->len = 0;
	w->nrows = 0;
	w->cap = 0;
	w->buf = NULL;
	CompSpillRowWriterGrow(w, w->target + w->target / 8);
}

/* Make room for need bytes of rows in the frame being written */
void
CompSpillRowWriterGrow(CompSpillRowWriter *w, Size need)
{
	Size		cap = CompSpillGrowSize(w->cap, need);

	if (need <= w->cap)
		return;
	if (w->buf == NULL)
		w->buf = MemoryContextAllocHuge(w->cxt, cap);
	else
		w->buf = repalloc_huge(w->buf, cap);
	w->cap = cap;
}

/*
 * Copy the frame's rows to dst, which has room for w->len bytes, and start
 * the next frame.
 */
void
CompSpillRowWriterFinish(CompSpillRowWriter *w, char *dst)
{
	memcpy(dst, w->buf, w->len);
	w->len = 0;
	w->nrows = 0;
}

/* Prepare a cursor over row frames, its row buffer in memory of cxt */
void
CompSpillRowCursorInit(CompSpillRowCursor *c, MemoryContext cxt)
{
	c->cxt = cxt;
	c->pos = NULL;
	c->left = 0;
	c->tup = NULL;
	c->tup_cap = 0;
	CompSpillRowCursorGrow(c, 256);
}

/* Make the cursor's row buffer hold a tuple of need bytes */
void
CompSpillRowCursorGrow(CompSpillRowCursor *c, Size need)
{
	Size		cap = MAXALIGN(CompSpillGrowSize(c->tup_cap, need));

	if (need <= c->tup_cap)
		return;
	if (c->tup != NULL)
		pfree(c->tup);
	c->tup = MemoryContextAllocHuge(c->cxt, cap);
	c->tup_cap = cap;
}

/*
 * Check the row frame raw[0 .. rawlen), said to hold nrows rows of
 * tupdesc, and make it the cursor's current frame; on failure return false
 * with *errdetail saying why.  raw must stay in place while it is read.
 */
bool
CompSpillRowFrameCheck(CompSpillRowCursor *c, TupleDesc tupdesc,
					   const char *raw, Size rawlen, int nrows,
					   const char **errdetail)
{
	const char *p = raw;
	const char *end = raw + rawlen;
	int			row;

	c->pos = NULL;
	c->left = 0;
	for (row = 0; row < nrows; row++)
	{
		uint32		body;
		uint16		infomask2;
		uint16		infomask;
		uint8		hoff;
		Size		data;
		int			natts;

		if ((Size) (end - p) < COMPSPILL_ROW_LENGTH_SIZE)
		{
			*errdetail = psprintf("Row frame ends inside the length of row %d.",
								  row);
			return false;
		}
		memcpy(&body, p, COMPSPILL_ROW_LENGTH_SIZE);
		p += COMPSPILL_ROW_LENGTH_SIZE;
		if (body < COMPSPILL_ROW_MIN_BODY || body > (Size) (end - p))
		{
			*errdetail = psprintf("Row %d of the row frame has an invalid length %u.",
								  row, body);
			return false;
		}
		memcpy(&infomask2, p + offsetof(MinimalTupleData, t_infomask2) -
			   MINIMAL_TUPLE_DATA_OFFSET, sizeof(uint16));
		memcpy(&infomask, p + offsetof(MinimalTupleData, t_infomask) -
			   MINIMAL_TUPLE_DATA_OFFSET, sizeof(uint16));
		memcpy(&hoff, p + offsetof(MinimalTupleData, t_hoff) -
			   MINIMAL_TUPLE_DATA_OFFSET, sizeof(uint8));
		natts = infomask2 & HEAP_NATTS_MASK;

		/* where the attributes start, counted from the tuple's t_len */
		data = (Size) hoff - MINIMAL_TUPLE_OFFSET;
		if (natts > tupdesc->natts || hoff != MAXALIGN(hoff) ||
			hoff < MINIMAL_TUPLE_OFFSET ||
			data < SizeofMinimalTupleHeader ||
			data > (Size) body + MINIMAL_TUPLE_DATA_OFFSET ||
			((infomask & HEAP_HASNULL) &&
			 SizeofMinimalTupleHeader + BITMAPLEN(natts) > data))
		{
			*errdetail = psprintf("Row %d of the row frame has an invalid header.",
								  row);
			return false;
		}
		p += body;
	}
	if (p != end)
	{
		*errdetail = psprintf("Row frame has %zu bytes after its %d rows.",
							  (Size) (end - p), nrows);
		return false;
	}

	c->pos = raw;
	c->left = nrows;
	return true;
}
