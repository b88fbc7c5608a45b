/*-------------------------------------------------------------------------
 *
 * runreader.c
 *	  The readers of runs: rows handed out one at a time, from frames read
 *	  through a window of the run.
 *
 * A reader keeps an aligned read buffer holding a window of the run, sized
 * by the caller to about one stored frame (a merge keeps one reader per
 * input, so their buffers are what bounds the fan-in) and refilled with
 * aligned reads that run ahead as far as it holds.  Each frame is checked,
 * decompressed and decoded by frame.c (compspill_load_frame) before any of
 * its rows is handed out.  Rows are rebuilt one at a time and handed out as
 * datums, or as minimal tuples from row frames; the per-row path does no
 * allocation and no I/O.  A reader opened to consume its run gives the
 * run's extents back to the file as it moves past them, so that a merge
 * pass writes into the space its inputs leave.
 *
 * IDENTIFICATION
 *	  src/spill/runreader.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/memutils.h"

#include "base/buffer.h"
#include "codec/blockcodec.h"
#include "codec/rowframe.h"
#include "spill/frame.h"
#include "spill/run.h"
#include "spill/run_private.h"
#include "spill/spillfile.h"

static void compspill_grow_window(CompSpillRunReader *r, Size need,
								  Size keep);
static int64 compspill_dbuf_memory(Size raw);

/*
 * Create a reader of runs of the spill, in a memory context of its own so
 * that freeing it releases the decoded block's memory as well.  Its read
 * buffer is made large enough at once for the largest frames written so
 * far, up to twice the average frame: a merge input then holds from the
 * start about what it will hold at most, which is what the merge measures
 * to size its fan-in.  Larger frames grow the buffer.  The decompression
 * buffer is a run's affair: CompSpillReaderOpen sizes it to the run.
 */
CompSpillRunReader *
CompSpillReaderCreate(CompSpillSpiller *sp)
{
	MemoryContext cxt;
	MemoryContext oldcxt;
	CompSpillRunReader *r;
	Size		avg_raw;
	Size		avg_stored;
	Size		rbuf;

	compspill_average_frame(sp, &avg_raw, &avg_stored);

	/*
	 * Buffered, the window holds exactly the largest frame written (its
	 * header included): reads start where the frame does, and a window
	 * that ends inside the next frame keeps those bytes.  Under direct I/O
	 * reads are of whole pages, and a frame straddles at most two more
	 * pages than its own.
	 */
	if (CompSpillFileAligned(sp->file))
	{
		rbuf = Min(sp->max_stored, 2 * avg_stored + COMPSPILL_FRAME_HEADER_SIZE);
		rbuf = COMPSPILL_ALIGN_UP(Max(rbuf, COMPSPILL_MIN_READ_BUFFER)) +
			2 * COMPSPILL_ALIGN;
	}
	else
		rbuf = MAXALIGN(Max(sp->max_stored, avg_stored) +
						COMPSPILL_FRAME_HEADER_SIZE);

	/*
	 * A small context whose blocks are no larger than its first: everything
	 * but the smallest pieces is then a block of its own, of its own size
	 * (no rounding up to a power of two), and the first holds the rest.
	 */
	cxt = AllocSetContextCreate(sp->cxt, "CompSpill run reader",
								0, 1024, 1024);
	oldcxt = MemoryContextSwitchTo(cxt);

	r = palloc0(sizeof(CompSpillRunReader));
	r->sp = sp;
	r->cxt = cxt;

	compspill_grow_window(r, rbuf, 0);

	CompSpillDecodedBlockInit(&r->blk, sp->tupdesc);
	CompSpillRowCursorInit(&r->rc, cxt);

	MemoryContextSwitchTo(oldcxt);

	return r;
}

/*
 * Position the reader at the start of run; with consume, the run's extents
 * are given back as the reader moves past them, and the run cannot be read
 * again.  The decompression buffer is made the size of the run's largest
 * frame stored compressed, and a run without any gets none: the merge
 * counts each input's by its run (CompSpillRunDecompressMemory).
 */
void
CompSpillReaderOpen(CompSpillRunReader *r, CompSpillRun *run, bool consume)
{
	if (run->max_compressed_raw != r->dbuf_cap)
	{
		if (r->dbuf != NULL)
			pfree(r->dbuf);
		r->dbuf = NULL;
		r->dbuf_cap = 0;
		if (run->max_compressed_raw > 0)
			CompSpillGrowBuffer(r->cxt, &r->dbuf, &r->dbuf_cap,
								run->max_compressed_raw, 0, false);
	}
	r->run = run;
	r->consume = consume;
	r->pos = 0;
	r->frame = 0;
	r->blk.nrows = r->blk.row = 0;
	r->rc.left = 0;
	r->rbuf_len = 0;
	r->rbuf_off = 0;
	r->plain_end = 0;
	r->grp_run = NULL;
	r->grp_n = 0;
}

/*
 * Return the last of the n (at least one) frame references, in order of
 * their first rows, whose first row is at most row; the first if none is.
 */
int64
CompSpillFrameRefFind(const CompSpillFrameRef *refs, int64 n, int64 row)
{
	int64		lo = 0;
	int64		hi = n - 1;

	while (lo < hi)
	{
		int64		mid = (lo + hi + 1) / 2;

		if (refs[mid].first_row <= row)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/*
 * Position the reader at the frame of an indexed run that holds the given
 * row of the run, without consuming it, and set *first and *end to the
 * rows the frame holds, [*first, *end).  The run may still be growing:
 * only its first nframes frames are read (CompSpillRunSync must have made
 * them readable), and row must lie in them.  The read window is kept when
 * the run is the same: bytes of a run below its length do not change.
 *
 * The index has an entry for every index_stride-th frame; the frames after
 * an entry are found by their headers, one after the other, and kept (the
 * group), so that reading a group's frames in any order reads each header
 * about once.  Reading backward row by row, say, loads frame after frame
 * of one group before the next.
 */
void
CompSpillReaderSeekRow(CompSpillRunReader *r, CompSpillRun *run,
					   int64 nframes, int64 row, int64 *first, int64 *end)
{
	int64		lo;
	int64		base;
	CompSpillFrameRef start;

	Assert(run->index != NULL && run->index_n > 0 && row >= 0);
	if (r->run != run)
	{
		r->rbuf_len = 0;
		r->rbuf_off = 0;
		r->plain_end = 0;
	}
	r->run = run;
	r->consume = false;

	lo = CompSpillFrameRefFind(run->index, run->index_n, row);
	base = lo * run->index_stride;
	start = run->index[lo];

	/* frames before the floor were given back: look from the floor on */
	if (run->floor_frame > base && run->floor.first_row <= row)
	{
		base = run->floor_frame;
		start = run->floor;
	}

	if (r->grp_run != run || r->grp_stride != run->index_stride ||
		r->grp_frame != base || r->grp_n == 0)
	{
		if (r->grp_cap < run->index_stride + 1)
		{
			if (r->grp != NULL)
				pfree(r->grp);
			r->grp_cap = run->index_stride + 1;
			r->grp = MemoryContextAlloc(r->cxt,
										sizeof(CompSpillFrameRef) * r->grp_cap);
		}
		r->grp_run = run;
		r->grp_stride = run->index_stride;
		r->grp_frame = base;
		r->grp[0] = start;
		r->grp_n = 1;
	}

	/* find the frames after the entry until the one after row's is known */
	while (r->grp[r->grp_n - 1].first_row <= row)
	{
		CompSpillFrameRef *last = &r->grp[r->grp_n - 1];
		CompSpillFrameHeader hdr;

		if (r->grp_frame + r->grp_n - 1 >= nframes || r->grp_n > run->index_stride)
			elog(ERROR, "compspill run has no row " INT64_FORMAT " in its first " INT64_FORMAT " frames",
				 row, nframes);
		compspill_read_frame_header(r, (off_t) last->offset, &hdr);
		r->grp[r->grp_n].offset = last->offset +
			COMPSPILL_FRAME_HEADER_SIZE + hdr.stored_len;
		r->grp[r->grp_n].first_row = last->first_row + hdr.nrows;
		r->grp_n++;
	}

	/* of the known frames (the last is the one after row's) */
	lo = CompSpillFrameRefFind(r->grp, r->grp_n - 1, row);
	*first = r->grp[lo].first_row;
	*end = r->grp[lo + 1].first_row;
	r->pos = (off_t) r->grp[lo].offset;
	r->frame = base + lo;
	r->blk.nrows = r->blk.row = 0;
	r->rc.left = 0;
}

/*
 * Return the next row of a run of column frames as pointers into the
 * decoded block, valid until the next call; return false at the end of the
 * run.  (A run of row frames is read with CompSpillReaderNextTuple.)
 */
bool
CompSpillReaderNext(CompSpillRunReader *r, Datum **values, bool **isnull)
{
	Assert(!r->run->rows);
	if (unlikely(!CompSpillDecodeNextRow(&r->blk)))
	{
		if (!compspill_load_frame(r) || !CompSpillDecodeNextRow(&r->blk))
			return false;
	}

	*values = r->blk.values;
	*isnull = r->blk.isnull;
	return true;
}

/*
 * Return the next row of a run of row frames as a minimal tuple in the
 * reader's buffer, valid until the next call; NULL at the end of the run.
 */
MinimalTuple
CompSpillReaderNextTuple(CompSpillRunReader *r)
{
	MinimalTuple tup;

	Assert(r->run->rows);
	tup = CompSpillRowCursorNext(&r->rc);
	if (unlikely(tup == NULL))
	{
		if (!compspill_load_frame(r))
			return NULL;
		tup = CompSpillRowCursorNext(&r->rc);
	}
	return tup;
}

/* Return the memory the reader holds: its buffers and decoded block */
int64
CompSpillReaderHeld(CompSpillRunReader *r)
{
	return MemoryContextMemAllocated(r->cxt, true);
}

/*
 * Return the part of what the reader holds that grows with its frames:
 * the read buffer, which holds a frame, and the arrays a column frame's
 * decoding makes (its fixed-width columns, dictionaries and codes); not
 * the decompression buffer (CompSpillReaderDecompressHeld), nor what one
 * row and the columns' cursors take.
 */
int64
CompSpillReaderFrameHeld(CompSpillRunReader *r)
{
	return (int64) r->rbuf_cap + (int64) r->blk.fixed_cap;
}

/*
 * Return the memory a decompression buffer for blocks of up to raw bytes
 * takes: none for raw 0, nothing being stored compressed.
 */
static int64
compspill_dbuf_memory(Size raw)
{
	if (raw == 0)
		return 0;
	return (int64) MAXALIGN(raw) + COMPSPILL_CHUNK_BLOCK_OVERHEAD;
}

/*
 * Return the memory a reader's decompression buffer takes for run: none
 * when no frame of the run is stored compressed (CompSpillReaderOpen).
 */
int64
CompSpillRunDecompressMemory(const CompSpillRun *run)
{
	return compspill_dbuf_memory(run->max_compressed_raw);
}

/*
 * Return the most memory a reader's decompression buffer may take for any
 * run written so far or from frames no larger: none when no frame has been
 * stored compressed.
 */
int64
CompSpillReaderDecompressBound(CompSpillSpiller *sp)
{
	return compspill_dbuf_memory(sp->max_compressed_raw);
}

/*
 * Return the memory the reader's decompression buffer holds, allocation
 * overhead included: a run's, not every reader's (CompSpillReaderOpen).
 */
int64
CompSpillReaderDecompressHeld(CompSpillRunReader *r)
{
	if (r->dbuf == NULL)
		return 0;
	return (int64) GetMemoryChunkSpace(r->dbuf) + COMPSPILL_CHUNK_BLOCK_OVERHEAD;
}

/*
 * Return what the reader's read buffer and its row buffer may still grow
 * by to hold the largest frames and row written so far.  The decompression
 * buffer is sized to each run as it is opened: the merge counts it per run
 * (CompSpillRunDecompressMemory).
 */
int64
CompSpillReaderGrowth(CompSpillRunReader *r)
{
	CompSpillSpiller *sp = r->sp;
	Size		rbuf = sp->max_stored + COMPSPILL_FRAME_HEADER_SIZE;
	int64		growth = 0;

	/* a read under direct I/O covers whole pages from a page's start */
	if (CompSpillFileAligned(sp->file))
		rbuf = COMPSPILL_ALIGN_UP(rbuf) + 2 * COMPSPILL_ALIGN;
	if (rbuf > r->rbuf_cap)
		growth += (int64) (CompSpillGrowSize(r->rbuf_cap, rbuf) - r->rbuf_cap);
	if (MAXALIGN(sp->max_row) > r->rc.tup_cap)
		growth += (int64) (MAXALIGN(CompSpillGrowSize(r->rc.tup_cap,
													  sp->max_row)) -
						   r->rc.tup_cap);
	return growth;
}

/* Release the reader, its buffers and its decoded block */
void
CompSpillReaderFree(CompSpillRunReader *r)
{
	MemoryContextDelete(r->cxt);
}

/*
 * Grow the read buffer so that it holds at least need bytes, a multiple of
 * the page, keeping its first keep bytes, and count only its whole pages as
 * the window's capacity.  Under buffered I/O the buffer is not aligned and
 * its size is not rounded to the page (CompSpillGrowBuffer), but every read
 * into the window must be whole pages: CompSpillFileRead takes nothing
 * else, and only a window of whole pages can carry its last pages over to
 * the next refill.  What the buffer holds beyond its last whole page is
 * allocated, and counted as the reader's memory, all the same.
 */
static void
compspill_grow_window(CompSpillRunReader *r, Size need, Size keep)
{
	bool		aligned = CompSpillFileAligned(r->sp->file);

	Assert(!aligned || (need % COMPSPILL_ALIGN) == 0);
	CompSpillGrowBuffer(r->cxt, &r->rbuf, &r->rbuf_cap, need, keep, aligned);
	if (aligned)
		r->rbuf_cap = COMPSPILL_ALIGN_DOWN(r->rbuf_cap);
	Assert(r->rbuf_cap >= need);
}

/* The length of a read covering len bytes: whole pages under direct I/O */
static inline Size
compspill_io_len(bool aligned, Size len)
{
	return aligned ? COMPSPILL_ALIGN_UP(len) : len;
}

/*
 * Make the file bytes [pos, pos + len) available in the read window and
 * return a pointer to them.  A refill reads as much as the buffer holds, up
 * to the end of the run, so consecutive small frames come from one read;
 * the whole pages at the window's end that the new range starts in are
 * moved down rather than read again, so that each page of a run read
 * forward is read once; the read fails if the file ends before pos + len.
 */
const char *
compspill_read_window(CompSpillRunReader *r, off_t pos, Size len)
{
	off_t		start;
	off_t		whole;
	Size		span;
	Size		keep = 0;
	Size		want;
	Size		need;
	Size		got;
	bool		aligned;

	/*
	 * Frames below plain_end were decrypted in place: going back to one
	 * reads it from the file again.
	 */
	if (unlikely(pos < r->plain_end))
	{
		r->rbuf_len = 0;
		r->rbuf_off = 0;
		r->plain_end = 0;
	}

	if (likely(pos >= r->rbuf_off &&
			   (Size) (pos - r->rbuf_off) + len <= r->rbuf_len))
		return r->rbuf + (pos - r->rbuf_off);

	/*
	 * Under direct I/O, reads are of whole pages; buffered, they start
	 * where the bytes asked for do and end where the buffer or the run
	 * does, so that no byte is read twice.
	 */
	aligned = CompSpillFileAligned(r->sp->file);
	start = aligned ? (off_t) COMPSPILL_ALIGN_DOWN(pos) : pos;
	span = (Size) (pos - start) + len;

	/*
	 * Read as far as the buffer allows but no further than the run's end,
	 * always covering the whole span asked for.
	 */
	want = Max(r->rbuf_cap, compspill_io_len(aligned, span));
	if (r->run->len > start)
		want = Min(want, compspill_io_len(aligned,
										  (Size) (r->run->len - start)));
	want = Max(want, compspill_io_len(aligned, span));

	/*
	 * If the new range starts inside the window, what it holds from there
	 * can be moved down instead of being read again: all of it buffered
	 * (it lies below the run's length, so it is final), its whole pages
	 * under direct I/O (a window that ends inside a page, at the end of a
	 * run still being written, keeps those only).
	 */
	whole = r->rbuf_off + (off_t) (aligned ? COMPSPILL_ALIGN_DOWN(r->rbuf_len) :
								   r->rbuf_len);
	if (start >= r->rbuf_off && start < whole)
		keep = (Size) (whole - start);

	if (keep > 0 && start > r->rbuf_off)
		memmove(r->rbuf, r->rbuf + (start - r->rbuf_off), keep);

	/* a frame bigger than the buffer: grow it */
	compspill_grow_window(r, want, keep);

	Assert(keep < want);
	need = span > keep ? span - keep : 0;
	got = CompSpillFileRead(r->sp->file, &r->run->extents,
							start + (off_t) keep, r->rbuf + keep,
							want - keep, need);

	/*
	 * Past the run's end lies zero padding, or, in a run still being
	 * written, bytes that may not be final: they are not kept.
	 */
	r->rbuf_off = start;
	r->rbuf_len = Min(keep + got, (Size) Max(r->run->len - start, 0));

	/* nothing below the window is read again */
	if (r->consume)
		CompSpillFileRelease(r->sp->file, &r->run->extents, start);

	return r->rbuf + (pos - start);
}
