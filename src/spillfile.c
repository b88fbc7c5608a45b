/*-------------------------------------------------------------------------
 *
 * spillfile.c
 *	  The temp file of one spilling operation: aligned, coalesced writes
 *	  and optional direct I/O.
 *
 * Every operation that spills gets exactly one PostgreSQL temporary file,
 * opened with OpenTemporaryFile() and accessed only through FileWrite() and
 * FileRead().  That keeps what fd.c does for temp files: temp_tablespaces,
 * temp_file_limit, pg_stat_database's temp_files and temp_bytes,
 * log_temp_files, removal at close or at transaction abort through the
 * resource owner, and cleanup of pgsql_tmp after a crash.  All runs of the
 * operation live at offsets inside that file.
 *
 * The file is append-only.  Writers ask for contiguous space in an aligned
 * write buffer (CompSpillFileReserve), build their data straight into it
 * (the run layer compresses blocks directly there, so a block is never
 * copied between the compressor and the kernel), and then commit the bytes
 * they used.  When the buffer is full, its largest COMPSPILL_ALIGN-aligned
 * prefix goes out in one write and the short tail moves to the front of the
 * buffer, so every write has an aligned offset, address and length.  A
 * flush writes the tail zero-padded to the alignment and continues at the
 * next aligned offset; the padding is never read as data because runs know
 * where they start and end.  As a consequence each aligned block of the
 * file is written exactly once, and data read back can be cached freely.
 *
 * Direct I/O: when asked for, O_DIRECT is set with fcntl() on the kernel
 * descriptor behind the virtual file before every read and write, since
 * fd.c may close the descriptor at any time and reopen it later with its
 * original flags.  Buffers, offsets and lengths are always aligned, which
 * is what O_DIRECT requires.  Where the kernel or the filesystem refuses
 * (tmpfs, some network filesystems), O_DIRECT is cleared, one NOTICE is
 * raised, and the operation continues with buffered I/O.
 *
 * Nothing here needs cleanup on error: the resource owner closes and
 * deletes the temp file at abort and the buffers belong to the memory
 * context that was current at creation.
 *
 * IDENTIFICATION
 *	  src/spillfile.c
 *
 *-------------------------------------------------------------------------
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE				/* for O_DIRECT in <fcntl.h> */
#endif

#include "postgres.h"

#include <fcntl.h>

#include "commands/tablespace.h"
#include "portability/instr_time.h"
#include "storage/fd.h"
#include "utils/memutils.h"
#include "utils/wait_event.h"

#include "compspill.h"

/* Largest amount for one FileWrite or FileRead (their length is an int) */
#define COMPSPILL_MAX_IO		((Size) 1 << 30)

struct CompSpillFile
{
	File		vfd;			/* fd.c virtual file descriptor */
	bool		dio;			/* O_DIRECT wanted and not refused */
	CompSpillStats *stats;		/* the operation's figures */
	MemoryContext cxt;			/* where the buffers live */

	char	   *buf;			/* aligned write buffer */
	Size		bufsize;		/* its size, a multiple of COMPSPILL_ALIGN */
	Size		nominal_size;	/* size to shrink back to after growth */
	Size		buffered;		/* committed bytes in buf */
	off_t		buf_offset;		/* file offset of buf[0], aligned */
#ifdef USE_ASSERT_CHECKING
	Size		reserved;		/* length of the open reservation */
#endif
};

static void compspill_disable_dio(CompSpillFile *file, int saved_errno);
static void compspill_prepare_io(CompSpillFile *file);
static int	compspill_file_io(CompSpillFile *file, bool write, char *buf,
							  Size amount, off_t offset);
static void compspill_write(CompSpillFile *file, char *data, Size len,
							off_t offset);

/* Allocate size bytes aligned to COMPSPILL_ALIGN in CurrentMemoryContext */
char *
CompSpillAllocAligned(Size size)
{
	char	   *raw;
	char	   *aligned;

	/*
	 * palloc results are MAXALIGNed, so rounding up raw + sizeof(char *)
	 * advances by at most COMPSPILL_ALIGN bytes; the original pointer is kept
	 * in the word just below the aligned one.
	 */
	raw = palloc_extended(size + COMPSPILL_ALIGN, MCXT_ALLOC_HUGE);
	aligned = (char *) COMPSPILL_ALIGN_UP(raw + sizeof(char *));
	((char **) aligned)[-1] = raw;

	return aligned;
}

/* Free memory returned by CompSpillAllocAligned */
void
CompSpillFreeAligned(char *ptr)
{
	if (ptr != NULL)
		pfree(((char **) ptr)[-1]);
}

/* Open the operation's temp file and its write buffer */
CompSpillFile *
CompSpillFileCreate(bool dio, Size write_size, CompSpillStats *stats)
{
	CompSpillFile *file;

	PrepareTempTablespaces();

	file = palloc0(sizeof(CompSpillFile));
	file->stats = stats;
	file->cxt = CurrentMemoryContext;
#ifdef O_DIRECT
	file->dio = dio;
#else
	file->dio = false;
#endif
	stats->dio_active = file->dio;

	file->nominal_size = COMPSPILL_ALIGN_UP(Max(write_size, COMPSPILL_ALIGN));
	file->bufsize = file->nominal_size;
	file->buf = CompSpillAllocAligned(file->bufsize);
	file->buffered = 0;
	file->buf_offset = 0;

	/* open the file last, so that nothing above can leak it */
	file->vfd = OpenTemporaryFile(false);

	return file;
}

/* Return the file's path, for messages */
const char *
CompSpillFileName(CompSpillFile *file)
{
	return FilePathName(file->vfd);
}

/* Close and delete the temp file and free the buffers */
void
CompSpillFileClose(CompSpillFile *file)
{
	FileClose(file->vfd);
	CompSpillFreeAligned(file->buf);
	pfree(file);
}

/*
 * Switch the file to buffered I/O for good, telling the user once why.
 */
static void
compspill_disable_dio(CompSpillFile *file, int saved_errno)
{
#ifdef O_DIRECT
	int			fd = FileGetRawDesc(file->vfd);

	if (fd >= 0)
	{
		int			flags = fcntl(fd, F_GETFL);

		if (flags >= 0 && (flags & O_DIRECT) != 0)
			(void) fcntl(fd, F_SETFL, flags & ~O_DIRECT);
	}
#endif

	file->dio = false;
	file->stats->dio_active = false;

	errno = saved_errno;
	ereport(NOTICE,
			(errmsg("direct I/O is not available for temporary file \"%s\", using buffered I/O",
					FilePathName(file->vfd)),
			 errdetail("The file system refused O_DIRECT: %m.")));
}

/* Make sure the file's descriptor carries O_DIRECT when direct I/O is on */
static void
compspill_prepare_io(CompSpillFile *file)
{
#ifdef O_DIRECT
	int			fd;
	int			flags;

	if (!file->dio)
		return;

	/*
	 * fd.c may have closed the kernel descriptor to stay under its limit;
	 * FileSize() reopens it (with the flags it was created with, which do
	 * not include O_DIRECT).  If reopening fails, the FileRead/FileWrite
	 * that follows fails the same way and reports it.
	 */
	fd = FileGetRawDesc(file->vfd);
	if (fd < 0)
	{
		if (FileSize(file->vfd) < 0)
			return;
		fd = FileGetRawDesc(file->vfd);
		if (fd < 0)
			return;
	}

	flags = fcntl(fd, F_GETFL);
	if (flags < 0)
	{
		compspill_disable_dio(file, errno);
		return;
	}
	if ((flags & O_DIRECT) == 0 && fcntl(fd, F_SETFL, flags | O_DIRECT) < 0)
		compspill_disable_dio(file, errno);
#endif
}

/*
 * Do one FileWrite (write) or FileRead of amount bytes at offset, with
 * O_DIRECT set first when it is wanted and the time spent added to the
 * figures.  Where the file system refuses direct I/O, switch to buffered
 * I/O and do it again.  Return what FileWrite/FileRead returned, errno as
 * it left it.
 */
static int
compspill_file_io(CompSpillFile *file, bool write, char *buf, Size amount,
				  off_t offset)
{
	for (;;)
	{
		instr_time	start;
		instr_time	end;
		int			rc;
		int			saved_errno;

		compspill_prepare_io(file);

		INSTR_TIME_SET_CURRENT(start);
		errno = 0;
		if (write)
			rc = FileWrite(file->vfd, buf, (int) amount, offset,
						   WAIT_EVENT_BUFFILE_WRITE);
		else
			rc = FileRead(file->vfd, buf, (int) amount, offset,
						  WAIT_EVENT_BUFFILE_READ);
		saved_errno = errno;
		INSTR_TIME_SET_CURRENT(end);
		if (write)
			INSTR_TIME_ACCUM_DIFF(file->stats->write_time, end, start);
		else
			INSTR_TIME_ACCUM_DIFF(file->stats->read_time, end, start);

		if (rc < 0 && saved_errno == EINVAL && file->dio)
		{
			/* the file system refuses direct I/O: go on buffered */
			compspill_disable_dio(file, saved_errno);
			continue;
		}

		errno = saved_errno;
		return rc;
	}
}

/*
 * Write len bytes at offset, in chunks FileWrite can take; all three are
 * aligned so that O_DIRECT accepts them.
 */
static void
compspill_write(CompSpillFile *file, char *data, Size len, off_t offset)
{
	Size		done = 0;

	Assert(((uintptr_t) data % COMPSPILL_ALIGN) == 0);
	Assert((len % COMPSPILL_ALIGN) == 0);
	Assert((offset % COMPSPILL_ALIGN) == 0);

	while (done < len)
	{
		Size		amount = Min(len - done, COMPSPILL_MAX_IO);
		int			rc;

		rc = compspill_file_io(file, true, data + done, amount,
							   offset + (off_t) done);
		if (rc <= 0)
		{
			if (rc == 0 || errno == 0)
				errno = ENOSPC;
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not write to temporary file \"%s\": %m",
							FilePathName(file->vfd))));
		}

		done += rc;
		file->stats->bytes_written += rc;

		/*
		 * A short write on a local file means the disk filled up.  Under
		 * direct I/O the remainder could not even be retried at its
		 * unaligned position, so report it as such straight away.
		 */
		if (file->dio && (done % COMPSPILL_ALIGN) != 0)
		{
			errno = ENOSPC;
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not write to temporary file \"%s\": %m",
							FilePathName(file->vfd))));
		}
	}
}

/*
 * Return space for len contiguous bytes at the current write position,
 * writing out full aligned pages or growing the buffer to make room.
 */
char *
CompSpillFileReserve(CompSpillFile *file, Size len)
{
	Size		tail;
	Size		flushable;

	if (unlikely(file->buf == NULL))
	{
		/* writing again after CompSpillFileEndWrites */
		MemoryContext oldcxt = MemoryContextSwitchTo(file->cxt);

		file->bufsize = file->nominal_size;
		file->buf = CompSpillAllocAligned(file->bufsize);
		MemoryContextSwitchTo(oldcxt);
	}

	if (likely(file->buffered + len <= file->bufsize))
	{
#ifdef USE_ASSERT_CHECKING
		file->reserved = len;
#endif
		return file->buf + file->buffered;
	}

	/* write out every complete aligned page, keep the partial one */
	flushable = COMPSPILL_ALIGN_DOWN(file->buffered);
	if (flushable > 0)
	{
		compspill_write(file, file->buf, flushable, file->buf_offset);
		tail = file->buffered - flushable;
		if (tail > 0)
			memmove(file->buf, file->buf + flushable, tail);
		file->buf_offset += flushable;
		file->buffered = tail;
	}
	tail = file->buffered;

	if (tail + len > file->bufsize ||
		(file->bufsize > file->nominal_size &&
		 tail + len <= file->nominal_size))
	{
		/* grow for an oversized request, or shrink back after one */
		Size		newsize;
		char	   *newbuf;
		MemoryContext oldcxt;

		newsize = Max(file->nominal_size, COMPSPILL_ALIGN_UP(tail + len));
		oldcxt = MemoryContextSwitchTo(file->cxt);
		newbuf = CompSpillAllocAligned(newsize);
		MemoryContextSwitchTo(oldcxt);
		if (tail > 0)
			memcpy(newbuf, file->buf, tail);
		CompSpillFreeAligned(file->buf);
		file->buf = newbuf;
		file->bufsize = newsize;
	}

#ifdef USE_ASSERT_CHECKING
	file->reserved = len;
#endif
	return file->buf + file->buffered;
}

/*
 * Mark len bytes of the reserved space as written; return the file offset
 * at which they start.
 */
off_t
CompSpillFileCommit(CompSpillFile *file, Size len)
{
	off_t		offset = file->buf_offset + (off_t) file->buffered;

#ifdef USE_ASSERT_CHECKING
	Assert(len <= file->reserved || len == 0);
	file->reserved = 0;
#endif
	Assert(file->buffered + len <= file->bufsize);

	file->buffered += len;
	return offset;
}

/*
 * Write out everything buffered, zero-padded to the alignment; writing
 * continues at the next aligned offset.
 */
void
CompSpillFileFlush(CompSpillFile *file)
{
	Size		padded;

	if (file->buffered == 0)
		return;

	padded = COMPSPILL_ALIGN_UP(file->buffered);
	Assert(padded <= file->bufsize);
	if (padded > file->buffered)
		memset(file->buf + file->buffered, 0, padded - file->buffered);

	compspill_write(file, file->buf, padded, file->buf_offset);
	file->buf_offset += padded;
	file->buffered = 0;
#ifdef USE_ASSERT_CHECKING
	file->reserved = 0;
#endif
}

/*
 * Write out everything buffered and free the write buffer, for a phase
 * that only reads; a later reservation allocates it again.
 */
void
CompSpillFileEndWrites(CompSpillFile *file)
{
	CompSpillFileFlush(file);
	CompSpillFreeAligned(file->buf);
	file->buf = NULL;
	file->bufsize = 0;
}

/*
 * Read up to len bytes at offset into buf, stopping early only at end of
 * file; fail if fewer than need bytes arrive.  Return the bytes read.
 */
Size
CompSpillFileRead(CompSpillFile *file, off_t offset, char *buf, Size len,
				  Size need)
{
	Size		done = 0;

	Assert((offset % COMPSPILL_ALIGN) == 0);
	Assert(((uintptr_t) buf % COMPSPILL_ALIGN) == 0);
	Assert((len % COMPSPILL_ALIGN) == 0);
	Assert(need <= len);

	while (done < len)
	{
		Size		amount = Min(len - done, COMPSPILL_MAX_IO);
		int			rc;

		/*
		 * The file only ever grows by whole aligned pages, so a short read
		 * ends at an aligned offset; if it did not, this is the end of the
		 * file anyway, and another direct read there would be refused.
		 */
		if (file->dio && (done % COMPSPILL_ALIGN) != 0)
			break;

		rc = compspill_file_io(file, false, buf + done, amount,
							   offset + (off_t) done);
		if (rc < 0)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not read from temporary file \"%s\": %m",
							FilePathName(file->vfd))));
		if (rc == 0)
			break;				/* end of file */

		done += rc;
		file->stats->bytes_read += rc;
	}

	if (done < need)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("could not read compspill temporary file \"%s\" at offset %lld: read only %zu of %zu bytes",
						FilePathName(file->vfd), (long long) offset,
						done, need)));

	return done;
}
