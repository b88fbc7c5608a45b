/*-------------------------------------------------------------------------
 *
 * rowframe.h
 *	  Row frames: a frame's payload as rows laid out as native sort writes
 *	  them, a length and a minimal tuple's body each (rowframe.c).
 *
 * The column codec (blockcodec.h) is the other payload a frame carries;
 * the frame header's COMPSPILL_FRAME_ROWS flag says which (spill/frame.h).
 *
 * IDENTIFICATION
 *	  src/codec/rowframe.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPSPILL_ROWFRAME_H
#define COMPSPILL_ROWFRAME_H

#include "access/htup_details.h"
#include "access/tupdesc.h"

/* rowframe.c */

/* The rows of the frame being written: a growing buffer */
typedef struct CompSpillRowWriter
{
	MemoryContext cxt;
	char	   *buf;
	Size		len;
	Size		cap;
	Size		target;			/* the frame is full from this size on */
	int			nrows;
} CompSpillRowWriter;

/* A checked row frame being read row by row */
typedef struct CompSpillRowCursor
{
	const char *pos;			/* next row's length word */
	int			left;			/* rows not yet returned */
	MinimalTuple tup;			/* the current row, MAXALIGNed */
	Size		tup_cap;
	MemoryContext cxt;
} CompSpillRowCursor;

extern void CompSpillRowWriterInit(CompSpillRowWriter *w, MemoryContext cxt,
								   Size target);
extern void CompSpillRowWriterGrow(CompSpillRowWriter *w, Size need);
extern void CompSpillRowWriterFinish(CompSpillRowWriter *w, char *dst);
extern void CompSpillRowCursorInit(CompSpillRowCursor *c, MemoryContext cxt);
extern bool CompSpillRowFrameCheck(CompSpillRowCursor *c, TupleDesc tupdesc,
								   const char *raw, Size rawlen, int nrows,
								   const char **errdetail);
extern void CompSpillRowCursorGrow(CompSpillRowCursor *c, Size need);

/* bytes a row takes in a row frame besides its body */
#define COMPSPILL_ROW_LENGTH_SIZE	sizeof(uint32)

/*
 * Append a minimal tuple to the frame being written: its body's length,
 * then the body (the tuple from MINIMAL_TUPLE_DATA_OFFSET on).  Return
 * whether the frame is full.
 */
static inline bool
CompSpillRowWriterAdd(CompSpillRowWriter *w, MinimalTuple tup)
{
	uint32		body = tup->t_len - MINIMAL_TUPLE_DATA_OFFSET;
	Size		need = w->len + COMPSPILL_ROW_LENGTH_SIZE + body;

	if (unlikely(need > w->cap))
		CompSpillRowWriterGrow(w, need);
	memcpy(w->buf + w->len, &body, COMPSPILL_ROW_LENGTH_SIZE);
	memcpy(w->buf + w->len + COMPSPILL_ROW_LENGTH_SIZE,
		   (char *) tup + MINIMAL_TUPLE_DATA_OFFSET, body);
	w->len = need;
	w->nrows++;
	return w->len >= w->target;
}

/*
 * Make the next row of a checked frame current, as a minimal tuple in the
 * cursor's own buffer (valid until the next call); return NULL after the
 * last row.
 */
static inline MinimalTuple
CompSpillRowCursorNext(CompSpillRowCursor *c)
{
	uint32		body;

	if (unlikely(c->left <= 0))
		return NULL;
	memcpy(&body, c->pos, COMPSPILL_ROW_LENGTH_SIZE);
	if (unlikely(body + MINIMAL_TUPLE_DATA_OFFSET > c->tup_cap))
		CompSpillRowCursorGrow(c, body + MINIMAL_TUPLE_DATA_OFFSET);
	c->tup->t_len = body + MINIMAL_TUPLE_DATA_OFFSET;
	memcpy((char *) c->tup + MINIMAL_TUPLE_DATA_OFFSET,
		   c->pos + COMPSPILL_ROW_LENGTH_SIZE, body);
	c->pos += COMPSPILL_ROW_LENGTH_SIZE + body;
	c->left--;
	return c->tup;
}

#endif							/* COMPSPILL_ROWFRAME_H */
