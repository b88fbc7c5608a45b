/*-------------------------------------------------------------------------
 *
 * buffer.h
 *	  The page every I/O buffer, offset and length is aligned to, the one
 *	  growth policy of compspill's buffers, and its memory contexts' sizes.
 *
 * Words used throughout the code: a frame is the unit on disk (header,
 * CRC, payload), a block the codec's group of rows in column streams that
 * a column frame carries (a row frame carries rows instead), a page the
 * 4kB alignment unit, an extent the spill file's unit of space.
 *
 * IDENTIFICATION
 *	  src/base/buffer.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPSPILL_BUFFER_H
#define COMPSPILL_BUFFER_H

/* I/O alignment for direct I/O: buffers, file offsets and lengths */
#define COMPSPILL_ALIGN			4096
#define COMPSPILL_ALIGN_UP(x)	TYPEALIGN(COMPSPILL_ALIGN, (x))
#define COMPSPILL_ALIGN_DOWN(x) TYPEALIGN_DOWN(COMPSPILL_ALIGN, (x))

/*
 * The one growth policy of every buffer compspill keeps (write and read
 * buffers, the codec's streams and arenas), for a buffer of cap bytes that
 * must hold need: a first buffer (cap 0) is of exactly need bytes, since
 * most are sized once to what they will hold (a merge input's buffers to
 * the largest frame written); a buffer that has to grow gets room for need
 * bytes and a quarter more, so that a slowly growing need does not
 * reallocate every time, but never more than a megabyte more, so that a
 * huge value costs what it needs and not twice that.
 */
static inline Size
CompSpillGrowSize(Size cap, Size need)
{
	if (cap == 0)
		return need;
	return need + Min(need / 4, (Size) 1024 * 1024);
}

/*
 * The sizes of compspill's memory contexts: PostgreSQL's small and default
 * sizes, but with a minimum size equal to the first block, never 0.  aset.c
 * keeps freed contexts whose minimum is 0 and whose first block is 1kB or
 * 8kB on two free lists, and hands one back to the next context created
 * with that minimum and first block, with the chunk limit it was made with:
 * a context made with 8MB blocks (ALLOCSET_START_SMALL_SIZES, plans and
 * PL/pgSQL functions) rounds pieces of up to 8kB to powers of two, where one
 * made with 8kB blocks gives every piece over 1kB a block of its own size.
 * What a spill's contexts hold decides how many rows its runs take and how
 * large their blocks are: with the free lists it would depend on what the
 * backend ran before.  A context with a minimum of its first block is
 * always made afresh, with the same first block.  A run reader's blocks
 * are no larger than its first: everything but the smallest pieces is a
 * block of its own size.
 */
#define COMPSPILL_SMALL_CONTEXT_SIZES	1024, 1024, 8 * 1024
#define COMPSPILL_DEFAULT_CONTEXT_SIZES \
	8 * 1024, 8 * 1024, ALLOCSET_DEFAULT_MAXSIZE
#define COMPSPILL_READER_CONTEXT_SIZES	1024, 1024, 1024

#endif							/* COMPSPILL_BUFFER_H */
