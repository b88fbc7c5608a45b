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
 * its rows is handed out.  A run whose frames are compressed with lz4 is
 * read without a window of its own: each frame is read into the tail of
 * the decompression buffer and decompressed in place, so that a merge
 * input holds about one block, not a block and a frame
 * (compspill_read_tail).  Rows are rebuilt one at a time and handed out as
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
#include "codec/cipher.h"
#include "codec/compress.h"
#include "codec/rowframe.h"
#include "spill/frame.h"
#include "spill/run.h"
#include "spill/run_private.h"
#include "spill/spillfile.h"

static void compspill_grow_window(CompSpillRunReader *r, Size need,
								  Size keep);
static int64 compspill_buffer_memory(Size size);
static const char *compspill_read_tail(CompSpillRunReader *r, off_t pos,
									   Size len);

/*
 * Return the size of the window CompSpillReaderCreate gives a reader of the
 * spill's runs.  Buffered, it holds exactly the largest frame written (its
 * header included): reads start where the frame does, and a window that
 * ends inside the next frame keeps those bytes.  Under direct I/O reads are
 * of whole pages, and a frame straddles at most two more pages than its
 * own; the window holds up to twice the average frame, and grows for
 * larger ones.
 */
static Size
compspill_window_size(CompSpillSpiller *sp)
{
	Size		avg_raw;
	Size		avg_stored;
	Size		rbuf;

	compspill_average_frame(sp, &avg_raw, &avg_stored);
	if (CompSpillFileAligned(sp->file))
	{
		rbuf = Min(sp->max_stored, 2 * avg_stored + COMPSPILL_FRAME_HEADER_SIZE);
		return COMPSPILL_ALIGN_UP(Max(rbuf, COMPSPILL_MIN_READ_BUFFER)) +
			2 * COMPSPILL_ALIGN;
	}
	return MAXALIGN(Max(sp->max_stored, avg_stored) +
					COMPSPILL_FRAME_HEADER_SIZE);
}

/*
 * Return whether a reader decompresses run's frames in place
 * (compspill_read_tail): under buffered I/O, whose reads start and end
 * anywhere, when some frame of the run is stored compressed and all such
 * frames are with lz4, which can.
 */
static bool
compspill_run_in_place(CompSpillSpiller *sp, const CompSpillRun *run)
{
	return !CompSpillFileAligned(sp->file) && run->max_compressed_raw > 0 &&
		!run->zstd_frames &&
		CompSpillInPlaceMargin(COMPSPILL_CODEC_LZ4,
							   run->max_compressed_raw) > 0;
}

/*
 * Return the size of the buffer that reads a run of frames of up to stored
 * bytes with blocks of up to raw bytes compressed, decompressing them in
 * place: a frame is read with the next frame's header, into the tail of
 * the buffer, so its payload ends that header, and its tag if encrypted,
 * before the buffer's end; that must lie lz4's margin past the block.
 */
static Size
compspill_in_place_size(CompSpillSpiller *sp, Size raw, Size stored)
{
	Size		after = COMPSPILL_FRAME_HEADER_SIZE +
		(sp->cipher ? COMPSPILL_CIPHER_TAG_SIZE : 0);

	return Max(raw + CompSpillInPlaceMargin(COMPSPILL_CODEC_LZ4, raw) + after,
			   2 * COMPSPILL_FRAME_HEADER_SIZE + stored);
}

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

	/* see COMPSPILL_READER_CONTEXT_SIZES: the same every time */
	cxt = AllocSetContextCreate(sp->cxt, "CompSpill run reader",
								COMPSPILL_READER_CONTEXT_SIZES);
	oldcxt = MemoryContextSwitchTo(cxt);

	r = palloc0(sizeof(CompSpillRunReader));
	r->sp = sp;
	r->cxt = cxt;

	compspill_grow_window(r, compspill_window_size(sp), 0);

	CompSpillDecodedBlockInit(&r->blk, sp->tupdesc);
	CompSpillRowCursorInit(&r->rc, cxt);

	MemoryContextSwitchTo(oldcxt);

	return r;
}

/*
 * Position the reader at the start of run; with consume, the run's extents
 * are given back as the reader moves past them, and the run cannot be read
 * again.  The buffers are made for the run: a run decompressed in place
 * gets one, for its largest block and frame, which holds the window too;
 * another gets a window, and a decompression buffer the size of its
 * largest block stored compressed, none if it has none.  The merge counts
 * each input's buffers by its run (CompSpillRunBufferMemory).
 */
void
CompSpillReaderOpen(CompSpillRunReader *r, CompSpillRun *run, bool consume)
{
	bool		in_place = compspill_run_in_place(r->sp, run);
	Size		dbuf = run->max_compressed_raw;

	if (in_place)
	{
		/* the window becomes dbuf's tail; a window of its own was palloc'd */
		dbuf = compspill_in_place_size(r->sp, run->max_compressed_raw,
									   run->max_stored);
		if (!r->in_place && r->rbuf != NULL)
			pfree(r->rbuf);
		r->rbuf = NULL;
		r->rbuf_cap = 0;
	}
	else if (r->in_place)
		r->rbuf = NULL;			/* it pointed into dbuf; one of its own below */

	if (dbuf != r->dbuf_cap)
	{
		if (r->dbuf != NULL)
			pfree(r->dbuf);
		r->dbuf = NULL;
		r->dbuf_cap = 0;
		if (dbuf > 0)
			CompSpillGrowBuffer(r->cxt, &r->dbuf, &r->dbuf_cap, dbuf, 0,
								false);
	}
	if (!in_place && r->rbuf == NULL)
		compspill_grow_window(r, compspill_window_size(r->sp), 0);
	r->in_place = in_place;
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
	Assert(!r->in_place);		/* only CompSpillReaderOpen reads in place */
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
 * Return the part of what the reader holds, its buffers apart, that grows
 * with its frames: the arrays a column frame's decoding makes (its
 * fixed-width columns, dictionaries and codes); not what one row and the
 * columns' cursors take.
 */
int64
CompSpillReaderFrameHeld(CompSpillRunReader *r)
{
	return (int64) r->blk.fixed_cap;
}

/*
 * Return the memory a palloc'd buffer of size bytes takes in a reader's
 * context, whose blocks are smaller: a block of its own.  None for size 0.
 */
static int64
compspill_buffer_memory(Size size)
{
	if (size == 0)
		return 0;
	return (int64) MAXALIGN(size) + COMPSPILL_CHUNK_BLOCK_OVERHEAD;
}

/*
 * Return the memory a reader's window takes once it holds the largest
 * frame written so far: as CompSpillReaderCreate makes it, grown for a
 * larger frame as compspill_grow_window grows it.
 */
static int64
compspill_window_memory(CompSpillSpiller *sp)
{
	bool		aligned = CompSpillFileAligned(sp->file);
	Size		window = compspill_window_size(sp);
	Size		need = sp->max_stored + COMPSPILL_FRAME_HEADER_SIZE;

	if (aligned)
		need = COMPSPILL_ALIGN_UP(need) + 2 * COMPSPILL_ALIGN;
	if (need > window)
	{
		window = CompSpillGrowSize(window, need);
		if (aligned)
			window = COMPSPILL_ALIGN_UP(window);
	}
	return compspill_buffer_memory(aligned ? window + COMPSPILL_ALIGN : window);
}

/*
 * Return the memory a reader's buffers take for run: the one buffer a run
 * decompressed in place needs, or a window and a decompression buffer for
 * the largest block stored compressed (none when there is none).  With
 * as_written false, for runs of frames like run's whatever codec stores
 * them: a window and a decompression buffer for its largest block.
 */
int64
CompSpillRunBufferMemory(CompSpillSpiller *sp, const CompSpillRun *run,
						 bool as_written)
{
	if (!as_written)
		return compspill_window_memory(sp) +
			compspill_buffer_memory(Max(run->max_compressed_raw,
										run->max_stored));
	if (compspill_run_in_place(sp, run))
		return compspill_buffer_memory(compspill_in_place_size(sp,
															   run->max_compressed_raw,
															   run->max_stored));
	return compspill_window_memory(sp) +
		compspill_buffer_memory(run->max_compressed_raw);
}

/*
 * Return the most memory a reader's buffers may take for any run written
 * so far or from frames no larger, whichever way it is read.
 */
int64
CompSpillReaderBufferBound(CompSpillSpiller *sp)
{
	int64		bound = compspill_window_memory(sp) +
		compspill_buffer_memory(sp->max_compressed_raw);

	if (!CompSpillFileAligned(sp->file) && sp->max_compressed_raw > 0)
		bound = Max(bound,
					compspill_buffer_memory(compspill_in_place_size(sp,
																	sp->max_compressed_raw,
																	sp->max_stored)));
	return bound;
}

/*
 * Return the memory the reader's buffers hold now, allocation overhead
 * included: its window, unless it lies in the decompression buffer, and
 * its decompression buffer, both sized to the run (CompSpillReaderOpen).
 */
int64
CompSpillReaderBufferHeld(CompSpillRunReader *r)
{
	int64		held = 0;

	if (r->dbuf != NULL)
		held += (int64) GetMemoryChunkSpace(r->dbuf) +
			COMPSPILL_CHUNK_BLOCK_OVERHEAD;
	if (!r->in_place && r->rbuf != NULL)
		held += (int64) CompSpillBufferSpace(r->rbuf,
											 CompSpillFileAligned(r->sp->file)) +
			COMPSPILL_CHUNK_BLOCK_OVERHEAD;
	return held;
}

/*
 * Return what the reader's row buffer may still grow by to hold the
 * largest row written so far.  The buffers are sized to each run as it is
 * opened: the merge counts them per run (CompSpillRunBufferMemory).
 */
int64
CompSpillReaderGrowth(CompSpillRunReader *r)
{
	CompSpillSpiller *sp = r->sp;

	if (MAXALIGN(sp->max_row) > r->rc.tup_cap)
		return (int64) (MAXALIGN(CompSpillGrowSize(r->rc.tup_cap,
												   sp->max_row)) -
						r->rc.tup_cap);
	return 0;
}

/* Release the reader, its buffers and its decoded block */
void
CompSpillReaderFree(CompSpillRunReader *r)
{
	MemoryContextDelete(r->cxt);
}

/*
 * Grow the read buffer so that it holds at least need bytes, keeping its
 * first keep bytes.  Under direct I/O need is a multiple of the page and
 * only the buffer's whole pages count as the window's capacity: every read
 * into it is of whole pages (CompSpillFileRead takes nothing else), and
 * only a window of whole pages can carry its last pages over to the next
 * refill; what the buffer holds beyond its last whole page is allocated,
 * and counted as the reader's memory, all the same.  Buffered, the buffer
 * is neither aligned nor rounded to the page (CompSpillGrowBuffer), and
 * reads start and end where the bytes asked for do.
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
 * Make the file bytes [pos, pos + len) available at the tail of the
 * decompression buffer of a reader that decompresses in place, with the
 * bytes after them up to the next frame's header, and return a pointer to
 * them.  The window ends where the buffer does, so a frame read whole ends
 * the next header before it, lz4's margin past the block it decompresses
 * to (compspill_in_place_size).  What the window held from pos on (the
 * header read with the frame before) is moved, not read again; below pos
 * it is left, the decompressed block lying over it (compspill_load_frame
 * sets plain_end past the frame).
 */
static const char *
compspill_read_tail(CompSpillRunReader *r, off_t pos, Size len)
{
	Size		want = len + COMPSPILL_FRAME_HEADER_SIZE;
	Size		keep = 0;
	Size		got;
	char	   *dst;

	if (r->run->len > pos)
		want = Min(want, (Size) (r->run->len - pos));
	want = Max(want, len);

	/* a frame larger than the run's largest: only a corrupt header says so */
	if (want > r->dbuf_cap)
	{
		r->rbuf_len = 0;
		CompSpillGrowBuffer(r->cxt, &r->dbuf, &r->dbuf_cap, want, 0, false);
	}

	dst = r->dbuf + r->dbuf_cap - want;
	if (pos >= r->rbuf_off && pos < r->rbuf_off + (off_t) r->rbuf_len)
	{
		keep = (Size) (r->rbuf_off + (off_t) r->rbuf_len - pos);
		memmove(dst, r->rbuf + (pos - r->rbuf_off), keep);
	}

	Assert(keep < len);
	got = CompSpillFileRead(r->sp->file, &r->run->extents,
							pos + (off_t) keep, dst + keep, want - keep,
							len - keep);
	r->rbuf = dst;
	r->rbuf_off = pos;
	r->rbuf_len = Min(keep + got, (Size) Max(r->run->len - pos, 0));

	if (r->consume)
		CompSpillFileRelease(r->sp->file, &r->run->extents, pos);

	return dst;
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

	if (r->in_place)
		return compspill_read_tail(r, pos, len);

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
