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
 * The file is divided into extents of a fixed size (a multiple of the 4kB
 * page, chosen per operation).  A stream of bytes, one run, is written and
 * read at logical offsets that start at zero; CompSpillExtents maps them to
 * the extents the stream occupies, in order.  One stream is written at a
 * time.  Writers ask for contiguous space in an aligned write buffer
 * (CompSpillFileReserve), build their data straight into it (the run layer
 * compresses frames directly there, so a frame is never copied between the
 * compressor and the kernel), and then commit the bytes they used.  When
 * the buffer is full, its largest page-aligned prefix goes out, extent by
 * extent, and the short tail moves to the front of the buffer, so every
 * write has an aligned offset, address and length.  Ending a stream writes
 * its tail, zero-padded to the page under direct I/O (the padding is never
 * read as data because runs know their length); buffered, only the bytes
 * committed go out, and the next stream still begins on the next page.
 *
 * Space is reused as logtape.c reuses it: a reader that consumes a stream
 * (an intermediate merge reading its inputs) gives back each extent it has
 * read past, and the next extent a writer needs is the lowest free one, or
 * a new one at the end of the file.  A merge pass thus writes into the space
 * its inputs leave behind, and the file holds about one copy of the data
 * whatever the number of passes: that is what temp_file_limit and
 * pg_stat_database.temp_bytes see.  Extents are rewritten only after they
 * were read for the last time, so data read back can be cached freely.
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
 *	  src/spill/spillfile.c
 *
 *-------------------------------------------------------------------------
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE				/* for O_DIRECT in <fcntl.h> */
#endif

#include "postgres.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#ifdef __linux__
#include <sys/sysmacros.h>
#endif
#include <unistd.h>

#include "commands/tablespace.h"
#include "common/hashfn.h"
#include "executor/instrument.h"
#include "port/pg_bitutils.h"
#include "portability/instr_time.h"
#include "storage/bufmgr.h"
#include "storage/fd.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/wait_event.h"

#include "base/buffer.h"
#include "base/spillstats.h"
#include "shared/stats.h"
#include "spill/spillfile.h"

/* A range of consecutive extents of the spill file */
struct CompSpillExtentRange
{
	int32		first;			/* extent number */
	int32		count;
};

/* An extent held by more than one stream, and by how many */
typedef struct CompSpillSharedExtent
{
	int32		extent;
	int32		holders;
} CompSpillSharedExtent;

/* Largest amount for one FileWrite or FileRead (their length is an int) */
#define COMPSPILL_MAX_IO		((Size) 1 << 30)

struct CompSpillFile
{
	File		vfd;			/* fd.c virtual file descriptor */
	bool		dio;			/* O_DIRECT wanted and not refused */
	bool		aligned;		/* buffers page-aligned (direct I/O asked) */
	CompSpillStats *stats;		/* the operation's figures */
	CompSpillSpaceClaim *claim; /* the file's share of max_temp_space */
	MemoryContext cxt;			/* where the buffers live */
	Size		extent_size;	/* a multiple of COMPSPILL_ALIGN */

	/* extents: how many the file has, and the free ones as a bitmap */
	int32		nextents;
	uint64	   *freemap;		/* bit e set: extent e is free */
	int32		freemap_words;
	int32		free_lo;		/* no free extent in the words below */
	int32		nfree;

	/*
	 * A stream begins where the last one ended, in that stream's last
	 * extent if it has room (tail_extent, -1 if none, from byte tail_used
	 * on), so that a run's last extent is not mostly empty.  An extent that
	 * several streams hold is in shared, with the number of its holders
	 * (two or more); it is free once the last gives it back.
	 */
	int32		tail_extent;
	Size		tail_used;
	CompSpillSharedExtent *shared;
	int			nshared;
	int			shared_cap;

	/* the stream being written */
	CompSpillExtents *cur;
	char	   *buf;			/* aligned write buffer */
	Size		bufsize;		/* its size, a multiple of COMPSPILL_ALIGN */
	Size		nominal_size;	/* size to shrink back to after growth */
	Size		buffered;		/* committed bytes in buf */
	off_t		buf_offset;		/* logical offset of buf[0], aligned */
	off_t		written_upto;	/* the stream's bytes below this logical
								 * offset are on disk and counted: a
								 * partial page flushed and written again
								 * is counted once */

	/* the block device under the file and its statistics */
	int8		device_stat;	/* 0 not looked for, 1 found, -1 none */
	uint64		device;			/* its key, once found */
	char		device_path[64];	/* /sys/dev/block/MAJ:MIN/stat, or ""
									 * once it failed */

#ifdef USE_ASSERT_CHECKING
	Size		reserved;		/* length of the open reservation */
#endif

};

static void compspill_disable_dio(CompSpillFile *file, int saved_errno);
static void compspill_prepare_io(CompSpillFile *file);
static void compspill_append_extent(CompSpillFile *file,
									CompSpillExtents *ext, int32 e);
static int	compspill_file_io(CompSpillFile *file, bool write, char *buf,
							  Size amount, off_t offset, Size seen);
static void compspill_write(CompSpillFile *file, char *data, Size len,
							off_t offset, Size seen);

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

/*
 * Return the memory the buffer buf, allocated by CompSpillGrowBuffer
 * (aligned to the page when aligned is true), takes in its context.
 */
Size
CompSpillBufferSpace(char *buf, bool aligned)
{
	return GetMemoryChunkSpace(aligned ? ((char **) buf)[-1] : buf);
}

/*
 * Grow the buffer *buf of *cap bytes, allocated in cxt (aligned to the page
 * when aligned is true), so that it holds at least need bytes, keeping its
 * first keep bytes; return whether it grew.
 *
 * It grows by CompSpillGrowSize (base/buffer.h), the policy of every buffer
 * compspill keeps: doubling instead would make a merge input that once met
 * a frame a little larger than the others cost half again what it needs.
 * The old buffer is
 * freed before the new one is allocated when nothing has to be kept, so
 * the two are never held together for nothing.  What the buffers hold is
 * measured on the memory contexts, so growing here is what charges it.
 */
bool
CompSpillGrowBuffer(MemoryContext cxt, char **buf, Size *cap, Size need,
					Size keep, bool aligned)
{
	Size		newcap;
	char	   *newbuf;
	MemoryContext oldcxt;

	if (need <= *cap)
		return false;

	newcap = CompSpillGrowSize(*cap, need);
	if (aligned)
		newcap = COMPSPILL_ALIGN_UP(newcap);
	Assert(keep <= *cap);

	if (keep == 0 && *buf != NULL)
	{
		if (aligned)
			CompSpillFreeAligned(*buf);
		else
			pfree(*buf);
		*buf = NULL;
		*cap = 0;
	}

	oldcxt = MemoryContextSwitchTo(cxt);
	if (aligned)
		newbuf = CompSpillAllocAligned(newcap);
	else
		newbuf = palloc_extended(newcap, MCXT_ALLOC_HUGE);
	MemoryContextSwitchTo(oldcxt);

	if (*buf != NULL)
	{
		if (keep > 0)
			memcpy(newbuf, *buf, keep);
		if (aligned)
			CompSpillFreeAligned(*buf);
		else
			pfree(*buf);
	}
	*buf = newbuf;
	*cap = newcap;
	return true;
}

/* Allocate an I/O buffer of the file in CurrentMemoryContext */
static char *
compspill_alloc_buf(CompSpillFile *file, Size size)
{
	if (file->aligned)
		return CompSpillAllocAligned(size);
	return palloc_extended(size, MCXT_ALLOC_HUGE);
}

/* Free an I/O buffer of the file */
static void
compspill_free_buf(CompSpillFile *file, char *buf)
{
	if (buf == NULL)
		return;
	if (file->aligned)
		CompSpillFreeAligned(buf);
	else
		pfree(buf);
}

/*
 * Open the operation's temp file, with extents of extent_size bytes and a
 * write buffer of about write_size bytes.
 */
CompSpillFile *
CompSpillFileCreate(bool dio, Size write_size, Size extent_size,
					CompSpillStats *stats)
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
	file->aligned = file->dio;

	file->extent_size = COMPSPILL_ALIGN_UP(Max(extent_size, COMPSPILL_ALIGN));

	file->freemap_words = 8;
	file->freemap = palloc0(sizeof(uint64) * file->freemap_words);
	file->tail_extent = -1;

	file->nominal_size = COMPSPILL_ALIGN_UP(Max(write_size, COMPSPILL_ALIGN));
	file->bufsize = 0;
	file->buf = NULL;
	file->claim = CompSpillSpaceClaimCreate();

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
	CompSpillSpaceDone(file->claim);
	compspill_free_buf(file, file->buf);
	pfree(file->freemap);
	pfree(file);
}

/* Return the memory the write buffer takes, alignment slack included */
Size
CompSpillFileBufferSize(CompSpillFile *file)
{
	if (file->buf == NULL)
		return 0;
	return file->bufsize + (file->aligned ? COMPSPILL_ALIGN : 0);
}

/*
 * Must the file's I/O buffers be aligned to the page?  Only direct I/O
 * needs it; buffered I/O saves the alignment slack of every buffer.
 */
bool
CompSpillFileAligned(CompSpillFile *file)
{
	return file->aligned;
}

/* Return the size of the file's extents */
Size
CompSpillFileExtentSize(CompSpillFile *file)
{
	return file->extent_size;
}

/* Return the bytes written to the file so far, all passes */
int64
CompSpillFileBytesWritten(CompSpillFile *file)
{
	return file->stats->bytes_written;
}

/*
 * Return the most memory the extent maps of streams holding bytes bytes in
 * all can take when they are written into space scattered over the file: a
 * range per extent, in arrays that grow by a quarter at a time (see
 * compspill_stream_extent), so up to a quarter more than they use.
 */
int64
CompSpillFileMapReserve(CompSpillFile *file, int64 bytes)
{
	int64		ranges = bytes / file->extent_size + 1;

	return (ranges + ranges / 4) * (int64) sizeof(CompSpillExtentRange);
}

/*
 * Return how many bytes more the file can take before it passes a limit
 * on temp space, and set *limit to the limit that leaves least (NONE when
 * none applies: then PG_INT64_MAX).  The limits:
 *
 * - temp_file_limit, less what the backend holds in temp files.  fd.c's
 *   count of them is private to it, so what is counted is compspill's own
 *   files in the backend (its claims on compspill.max_temp_space, which
 *   need shared_preload_libraries; without it, this file alone): temp
 *   files of native nodes in the same query (a hash join's batches, a
 *   tuplestore) are not seen, and can still make a spill fail;
 * - compspill.max_temp_space, less what compspill's files in the cluster
 *   hold (shared_preload_libraries only, as the cap itself);
 * - the free space of the file system the file lives on (statvfs on its
 *   directory, the temp tablespace's pgsql_tmp: f_bavail, what a process
 *   without privileges may use).  Others write there too, so this is a
 *   snapshot.
 */
int64
CompSpillFileRoom(CompSpillFile *file, CompSpillRoomLimit *limit)
{
	int64		room = PG_INT64_MAX;
	int64		size = (int64) file->nextents * (int64) file->extent_size;
	int64		backend;
	int64		cluster;
	bool		counted = CompSpillSpaceHeld(&backend, &cluster);
	char		dir[MAXPGPATH];
	struct statvfs fs;

	*limit = COMPSPILL_ROOM_NONE;
	if (temp_file_limit >= 0)
	{
		int64		left = (int64) temp_file_limit * 1024 -
			(counted ? Max(backend, size) : size);

		if (left < room)
		{
			room = left;
			*limit = COMPSPILL_ROOM_TEMP_FILE_LIMIT;
		}
	}
	if (counted && compspill_max_temp_space >= 0)
	{
		int64		left = (int64) compspill_max_temp_space * 1024 - cluster;

		if (left < room)
		{
			room = left;
			*limit = COMPSPILL_ROOM_MAX_TEMP_SPACE;
		}
	}

	snprintf(dir, sizeof(dir), "%s", FilePathName(file->vfd));
	get_parent_directory(dir);
	if (statvfs(dir, &fs) == 0)
	{
		int64		left = (int64) Min((uint64) fs.f_bavail * fs.f_frsize,
									   (uint64) PG_INT64_MAX);

		if (left < room)
		{
			room = left;
			*limit = COMPSPILL_ROOM_FILE_SYSTEM;
		}
	}

	return Max(room, 0);
}

/*
 * Return a key for the block device under the file and the file system on
 * it (Linux: the device number with the file system's id, so that a loop
 * device set up again over another image is another device), or 0 where
 * there is none: another system, or a file system with no block device of
 * its own (tmpfs, overlay, NFS).
 */
uint64
CompSpillFileDevice(CompSpillFile *file)
{
#ifdef __linux__
	if (file->device_stat == 0)
	{
		int			fd = FileGetRawDesc(file->vfd);
		struct stat st;
		struct statvfs vfs;

		file->device_stat = -1;
		if (fstat(fd, &st) == 0 && major(st.st_dev) != 0 &&
			fstatvfs(fd, &vfs) == 0)
		{
			snprintf(file->device_path, sizeof(file->device_path),
					 "/sys/dev/block/%u:%u/stat",
					 major(st.st_dev), minor(st.st_dev));
			file->device = hash_combine64((uint64) st.st_dev,
										  (uint64) vfs.f_fsid);
			if (file->device == 0)
				file->device = 1;
			file->device_stat = 1;
		}
	}
	return file->device_stat > 0 ? file->device : 0;
#else
	return 0;
#endif
}

/*
 * Return the bytes the block device under the file has written since it
 * started, from the kernel's statistics (Linux: the sectors written, in
 * 512-byte units, of /sys/dev/block/MAJ:MIN/stat, for the device of the
 * file system the file is on), or -1 where there are none (another system;
 * a file system with no block device of its own: tmpfs, overlay, NFS).
 * Every process's writes to the device count: codec = auto reads it only
 * while the device is holding the spill back, to see its pace.  The
 * statistics file is read with plain open/read/close: nothing in between
 * can raise an error.
 */
int64
CompSpillFileDeviceWritten(CompSpillFile *file)
{
#ifdef __linux__
	char		text[256];
	unsigned long long sectors;
	int			fd;
	ssize_t		len;

	/* no device, or its statistics failed once */
	if (CompSpillFileDevice(file) == 0 || file->device_path[0] == '\0')
		return -1;

	fd = open(file->device_path, O_RDONLY | PG_BINARY, 0);
	if (fd < 0)
	{
		file->device_path[0] = '\0';
		return -1;
	}
	len = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (len <= 0)
		return -1;
	text[len] = '\0';

	/* reads: I/Os, merges, sectors, ticks; writes: I/Os, merges, sectors */
	if (sscanf(text, "%*u %*u %*u %*u %*u %*u %llu", &sectors) != 1)
	{
		file->device_path[0] = '\0';
		return -1;
	}
	return (int64) Min(sectors, (unsigned long long) (PG_INT64_MAX / 512)) * 512;
#else
	return -1;
#endif
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
	file->stats->dio_fallback = true;

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
 * Blocks of BLCKSZ that a byte count passes from before to after: what
 * BufFile would have counted for the same temp file I/O, one block per
 * BLCKSZ started, so the sum over a file is its bytes rounded up.
 */
static inline int64
compspill_temp_blocks(int64 before, int64 after)
{
	return (after + BLCKSZ - 1) / BLCKSZ - (before + BLCKSZ - 1) / BLCKSZ;
}

/*
 * Do one FileWrite (write) or FileRead of amount bytes at offset, with
 * O_DIRECT set first when it is wanted.  The bytes moved and the time spent
 * go to the spill's figures (for a write, all but its first seen bytes:
 * those rewrite a partial page written and counted before), and to the executor's buffer usage as temp
 * blocks written or read (and, with track_io_timing, temp I/O time), as
 * BufFile counts them: EXPLAIN (BUFFERS), pg_stat_statements and
 * auto_explain then see compspill's spills as they see native's.
 *
 * Under direct I/O, EINVAL means one of two things: the file system
 * refuses O_DIRECT, or the buffer, offset or length is not aligned.  The
 * second is a bug here, so alignment is checked first and fails with an
 * internal error; an EINVAL that remains is the file system's refusal, and
 * the I/O is done again once, buffered, the file staying buffered for
 * good (a NOTICE says so, and EXPLAIN shows direct I/O=fallback).
 * Return what FileWrite/FileRead returned, errno as it left it.
 *
 * The refusal is tested by 006_direct_io, with a preloaded shim that fails
 * direct writes with EINVAL (ext4, xfs and tmpfs since Linux 6.6 all take
 * O_DIRECT).  The misalignment is not: it cannot be caused from SQL or
 * from outside the server, since every caller aligns.
 */
static int
compspill_file_io(CompSpillFile *file, bool write, char *buf, Size amount,
				  off_t offset, Size seen)
{
	bool		retried = false;

	if (file->dio &&
		(((uintptr_t) buf | (uintptr_t) offset | (uintptr_t) amount) &
		 (COMPSPILL_ALIGN - 1)) != 0)
		elog(ERROR, "misaligned direct %s of temporary file \"%s\": buffer %p, offset %lld, length %zu",
			 write ? "write" : "read", FilePathName(file->vfd), buf,
			 (long long) offset, amount);

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

		if (rc < 0 && saved_errno == EINVAL && file->dio && !retried)
		{
			/* aligned, so the file system refuses direct I/O: go buffered */
			compspill_disable_dio(file, saved_errno);
			retried = true;
			continue;
		}

		if (rc > 0 && write)
		{
			int64		fresh = rc - (int64) Min(seen, (Size) rc);

			pgBufferUsage.temp_blks_written +=
				compspill_temp_blocks(file->stats->bytes_written,
									  file->stats->bytes_written + fresh);
			file->stats->bytes_written += fresh;
			if (track_io_timing)
				INSTR_TIME_ACCUM_DIFF(pgBufferUsage.temp_blk_write_time,
									  end, start);
		}
		else if (rc > 0)
		{
			pgBufferUsage.temp_blks_read +=
				compspill_temp_blocks(file->stats->bytes_read,
									  file->stats->bytes_read + rc);
			file->stats->bytes_read += rc;
			if (track_io_timing)
				INSTR_TIME_ACCUM_DIFF(pgBufferUsage.temp_blk_read_time,
									  end, start);
		}

		errno = saved_errno;
		return rc;
	}
}

/*
 * Write len bytes at the file offset offset, in chunks FileWrite can take;
 * all three are aligned so that O_DIRECT accepts them (the length of a
 * buffered stream's tail need not be).  The first seen
 * bytes were written and counted before (see compspill_file_io).
 */
static void
compspill_write(CompSpillFile *file, char *data, Size len, off_t offset,
				Size seen)
{
	Size		done = 0;

	Assert(!file->aligned || ((uintptr_t) data % COMPSPILL_ALIGN) == 0);
	Assert(!file->aligned || (len % COMPSPILL_ALIGN) == 0);
	Assert((offset % COMPSPILL_ALIGN) == 0);

	while (done < len)
	{
		Size		amount = Min(len - done, COMPSPILL_MAX_IO);
		int			rc;

		rc = compspill_file_io(file, true, data + done, amount,
							   offset + (off_t) done,
							   seen > done ? seen - done : 0);
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

	if (offset + (off_t) len > file->stats->file_size)
		file->stats->file_size = offset + (off_t) len;
}

/*
 * Put extent e on the free list, a bitmap: a bit per extent of the file,
 * which is far smaller than a list of extent numbers once many are free.
 */
static void
compspill_free_extent(CompSpillFile *file, int32 e)
{
	int32		word = e / 64;

	if (word >= file->freemap_words)
	{
		int32		newwords = Max(file->freemap_words * 2, word + 1);

		file->freemap = repalloc(file->freemap, sizeof(uint64) * newwords);
		memset(file->freemap + file->freemap_words, 0,
			   sizeof(uint64) * (newwords - file->freemap_words));
		file->freemap_words = newwords;
	}
	Assert((file->freemap[word] & (UINT64CONST(1) << (e % 64))) == 0);
	file->freemap[word] |= UINT64CONST(1) << (e % 64);
	file->free_lo = Min(file->free_lo, word);
	file->nfree++;
}

/*
 * Take the lowest free extent, as logtape.c does with its blocks, so that
 * the file stays compact; or a new one at the end of the file.
 */
static int32
compspill_take_extent(CompSpillFile *file)
{
	int32		word;
	int			bit;

	if (file->nfree == 0)
	{
		if (file->nextents == PG_INT32_MAX)
			elog(ERROR, "compspill temporary file has too many extents");
		/* the file grows: within compspill.max_temp_space */
		CompSpillSpaceGrow(file->claim, file->extent_size);
		return file->nextents++;
	}

	for (word = file->free_lo; file->freemap[word] == 0; word++)
		Assert(word + 1 < file->freemap_words);
	bit = pg_rightmost_one_pos64(file->freemap[word]);
	file->freemap[word] &= ~(UINT64CONST(1) << bit);
	file->free_lo = word;
	file->nfree--;
	return word * 64 + bit;
}

/*
 * Return the index of extent e in the file's shared extents, or -1.
 */
static int
compspill_shared_find(CompSpillFile *file, int32 e)
{
	for (int i = 0; i < file->nshared; i++)
	{
		if (file->shared[i].extent == e)
			return i;
	}
	return -1;
}

/*
 * Count one more holder of extent e, which another stream holds already.
 */
static void
compspill_share_extent(CompSpillFile *file, int32 e)
{
	int			i = compspill_shared_find(file, e);

	if (i >= 0)
	{
		file->shared[i].holders++;
		return;
	}
	if (file->nshared >= file->shared_cap)
	{
		file->shared_cap = Max(file->shared_cap * 2, 8);
		if (file->shared == NULL)
			file->shared = MemoryContextAlloc(file->cxt,
											  sizeof(CompSpillSharedExtent) *
											  file->shared_cap);
		else
			file->shared = repalloc(file->shared,
									sizeof(CompSpillSharedExtent) *
									file->shared_cap);
	}
	file->shared[file->nshared].extent = e;
	file->shared[file->nshared].holders = 2;
	file->nshared++;
}

/*
 * A stream gives extent e back: it is free once no other stream holds it.
 */
static void
compspill_give_back_extent(CompSpillFile *file, int32 e)
{
	int			i = compspill_shared_find(file, e);

	if (i >= 0)
	{
		if (--file->shared[i].holders == 1)
			file->shared[i] = file->shared[--file->nshared];
		return;
	}
	compspill_free_extent(file, e);
	if (e == file->tail_extent)
		file->tail_extent = -1;
}

/*
 * Return the file extent that is the stream's idx'th.  Lookups go forward
 * (readers and the writer move forward), so a cursor makes them cheap.
 */
static int32
compspill_extent_at(CompSpillExtents *ext, int64 idx)
{
	Assert(idx < ext->n);
	if (idx < ext->at_base)
	{
		ext->at = 0;
		ext->at_base = 0;
	}
	while (idx >= ext->at_base + ext->ranges[ext->at].count)
	{
		ext->at_base += ext->ranges[ext->at].count;
		ext->at++;
	}
	return ext->ranges[ext->at].first + (int32) (idx - ext->at_base);
}

/*
 * Return the extent that holds the idx'th extent of the stream being
 * written, taking a new one when the stream reaches it for the first time.
 */
static int32
compspill_stream_extent(CompSpillFile *file, int64 idx)
{
	CompSpillExtents *ext = file->cur;
	int32		e;

	if (idx < ext->n)
		return compspill_extent_at(ext, idx);

	Assert(idx == ext->n);
	e = compspill_take_extent(file);
	compspill_append_extent(file, ext, e);
	return e;
}

/*
 * Add extent e at the end of the extents of stream ext.
 */
static void
compspill_append_extent(CompSpillFile *file, CompSpillExtents *ext, int32 e)
{
	CompSpillExtentRange *last;

	last = ext->nranges > 0 ? &ext->ranges[ext->nranges - 1] : NULL;
	if (last != NULL && last->first + last->count == e)
		last->count++;
	else
	{
		if (ext->nranges >= ext->cap)
		{
			/*
			 * Double a small map; grow a large one by a quarter, which
			 * CompSpillFileMapReserve allows for: at the smallest work_mem
			 * a spill of gigabytes has maps of hundreds of kB, and doubling
			 * would hold up to twice what they use.
			 */
			ext->cap = ext->cap < 64 ? Max(ext->cap * 2, 4) :
				ext->cap + ext->cap / 4;
			if (ext->ranges == NULL)
				ext->ranges = MemoryContextAlloc(file->cxt,
												 sizeof(CompSpillExtentRange) * ext->cap);
			else
				ext->ranges = repalloc(ext->ranges,
									   sizeof(CompSpillExtentRange) * ext->cap);
		}
		ext->ranges[ext->nranges].first = e;
		ext->ranges[ext->nranges].count = 1;
		ext->nranges++;
	}
	ext->n++;
}

/*
 * Write len buffered bytes of the current stream, which start at its
 * logical offset loff, into the stream's extents, taking new extents as
 * the stream grows.  Consecutive extents that are adjacent in the file go
 * out in one write.
 */
static void
compspill_write_stream(CompSpillFile *file, char *data, Size len, off_t loff)
{
	Size		esize = file->extent_size;
	Size		done = 0;
	Size		seen;

	while (done < len)
	{
		off_t		lpos = (off_t) file->cur->start + loff + (off_t) done;
		int64		idx = lpos / (off_t) esize;
		Size		within = (Size) (lpos % (off_t) esize);
		Size		amount = Min(len - done, esize - within);
		off_t		phys;
		int32		e;

		e = compspill_stream_extent(file, idx);
		phys = (off_t) e * (off_t) esize + (off_t) within;

		/* extend the write over following extents adjacent in the file */
		while (done + amount < len &&
			   compspill_stream_extent(file, idx + 1) == e + 1)
		{
			idx++;
			e++;
			amount += Min(len - done - amount, esize);
		}

		/* the part a flush wrote before, counted then (a partial page) */
		lpos -= (off_t) file->cur->start;
		if (file->written_upto > lpos)
			seen = Min((Size) (file->written_upto - lpos), amount);
		else
			seen = 0;
		compspill_write(file, data + done, amount, phys, seen);
		done += amount;
	}
	file->written_upto = Max(file->written_upto, loff + (off_t) len);
}

/*
 * Start writing a new stream; its extents are recorded in *ext, which must
 * stay in place until CompSpillFileEndStream.
 */
void
CompSpillFileBeginStream(CompSpillFile *file, CompSpillExtents *ext)
{
	Assert(file->cur == NULL);
	Assert(file->buffered == 0);

	memset(ext, 0, sizeof(CompSpillExtents));
	file->cur = ext;
	file->buf_offset = 0;
	file->written_upto = 0;

	/* begin where the last stream ended, if its last extent has room */
	if (file->tail_extent >= 0)
	{
		compspill_share_extent(file, file->tail_extent);
		compspill_append_extent(file, ext, file->tail_extent);
		ext->start = file->tail_used;
	}

	if (unlikely(file->buf == NULL))
	{
		MemoryContext oldcxt = MemoryContextSwitchTo(file->cxt);

		file->bufsize = file->nominal_size;
		file->buf = compspill_alloc_buf(file, file->bufsize);
		MemoryContextSwitchTo(oldcxt);
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

	Assert(file->cur != NULL);

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
		compspill_write_stream(file, file->buf, flushable, file->buf_offset);
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
		newbuf = compspill_alloc_buf(file, newsize);
		MemoryContextSwitchTo(oldcxt);
		if (tail > 0)
			memcpy(newbuf, file->buf, tail);
		compspill_free_buf(file, file->buf);
		file->buf = newbuf;
		file->bufsize = newsize;
	}

#ifdef USE_ASSERT_CHECKING
	file->reserved = len;
#endif
	return file->buf + file->buffered;
}

/*
 * Mark len bytes of the reserved space as written; return the stream's
 * logical offset at which they start.
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
 * The length to write of the partial page that ends what is buffered: the
 * bytes committed, zero-padded to the page where the I/O must be aligned.
 * Buffered, the padding would only add to the bytes written: the last page
 * of a stream is read back only as far as the stream goes.
 */
static Size
compspill_pad_tail(CompSpillFile *file)
{
	Size		padded = COMPSPILL_ALIGN_UP(file->buffered);

	if (!file->aligned)
		return file->buffered;
	Assert(padded <= file->bufsize);
	if (padded > file->buffered)
		memset(file->buf + file->buffered, 0, padded - file->buffered);
	return padded;
}

/*
 * Write out what is buffered of the current stream (see
 * compspill_pad_tail) and finish the stream; return its length in bytes.
 */
off_t
CompSpillFileEndStream(CompSpillFile *file)
{
	off_t		len = file->buf_offset + (off_t) file->buffered;

	Assert(file->cur != NULL);

	if (file->buffered > 0)
		compspill_write_stream(file, file->buf, compspill_pad_tail(file),
							   file->buf_offset);

	/* the next stream begins after this one's last page, if there is room */
	if (file->cur->n > 0)
	{
		CompSpillExtents *ext = file->cur;
		Size		esize = file->extent_size;
		off_t		end = (off_t) ext->start + COMPSPILL_ALIGN_UP(len);
		Size		used = (Size) (end - (ext->n - 1) * (off_t) esize);

		if (used < esize)
		{
			file->tail_extent = compspill_extent_at(ext, ext->n - 1);
			file->tail_used = used;
		}
		else
			file->tail_extent = -1;
	}

	file->buffered = 0;
	file->buf_offset = 0;
	file->cur = NULL;
#ifdef USE_ASSERT_CHECKING
	file->reserved = 0;
#endif
	return len;
}

/*
 * Return the bytes committed to the current stream so far.
 */
off_t
CompSpillFileStreamLength(CompSpillFile *file)
{
	Assert(file->cur != NULL);
	return file->buf_offset + (off_t) file->buffered;
}

/*
 * Write out everything committed to the current stream so far, the partial
 * last page as compspill_pad_tail says, so that a reader can read every
 * committed byte while the stream goes on growing (a store read back as it
 * is written).
 * The partial page stays buffered and is written again, completed, later;
 * the committed bytes in it do not change, and only what the later write
 * adds past this one counts as written (bytes_written, temp blocks).
 * Return the stream's length.
 */
off_t
CompSpillFileFlush(CompSpillFile *file)
{
	Size		flushable = COMPSPILL_ALIGN_DOWN(file->buffered);
	off_t		len = file->buf_offset + (off_t) file->buffered;

	Assert(file->cur != NULL);

	if (file->buffered == 0)
		return len;

	compspill_write_stream(file, file->buf, compspill_pad_tail(file),
						   file->buf_offset);

	/* full pages are done with; the partial one moves to the front */
	if (flushable > 0)
	{
		Size		tail = file->buffered - flushable;

		if (tail > 0)
			memmove(file->buf, file->buf + flushable, tail);
		file->buf_offset += flushable;
		file->buffered = tail;
	}
	return len;
}

/*
 * Free the write buffer, for a phase that only reads; the next stream
 * allocates it again.
 */
void
CompSpillFileEndWrites(CompSpillFile *file)
{
	Assert(file->cur == NULL);
	compspill_free_buf(file, file->buf);
	file->buf = NULL;
	file->bufsize = 0;
}

/*
 * Give back the extents of a stream that lie wholly below its logical
 * offset upto (all of them when upto is past the end): their data has been
 * read for the last time.  Once all are given back, the list is freed.
 */
void
CompSpillFileRelease(CompSpillFile *file, CompSpillExtents *ext, off_t upto)
{
	int64		below;

	/* upto may say "all": keep the sum with start from overflowing */
	upto = Min(upto, PG_INT64_MAX - (off_t) ext->start);
	below = ((off_t) ext->start + upto) / (off_t) file->extent_size;
	while (ext->nfreed < ext->n && ext->nfreed < below)
	{
		int32		e = compspill_extent_at(ext, ext->nfreed);

		/* only a stream's first and last extents can be shared */
		if (ext->nfreed == 0 || ext->nfreed == ext->n - 1)
			compspill_give_back_extent(file, e);
		else
			compspill_free_extent(file, e);
		ext->nfreed++;
	}

	if (ext->nfreed >= ext->n && ext->ranges != NULL)
	{
		pfree(ext->ranges);
		ext->ranges = NULL;
		ext->nranges = ext->cap = 0;
		ext->at = 0;
		ext->at_base = 0;
	}
}

/*
 * Read up to len bytes of a stream at its logical offset offset into buf;
 * fail if fewer than need bytes arrive.  Return the bytes read.
 */
Size
CompSpillFileRead(CompSpillFile *file, CompSpillExtents *ext,
				  off_t offset, char *buf, Size len, Size need)
{
	Size		esize = file->extent_size;
	Size		done = 0;

	Assert(!file->aligned || (offset % COMPSPILL_ALIGN) == 0);
	Assert(!file->aligned || ((uintptr_t) buf % COMPSPILL_ALIGN) == 0);
	Assert(!file->aligned || (len % COMPSPILL_ALIGN) == 0);
	Assert(need <= len);

	while (done < len)
	{
		off_t		pos = (off_t) ext->start + offset + (off_t) done;
		int64		idx = pos / (off_t) esize;
		Size		within = (Size) (pos % (off_t) esize);
		Size		amount = Min(len - done, esize - within);
		off_t		phys;
		int32		e;
		int			rc;

		if (idx >= ext->n || idx < ext->nfreed)
			break;				/* past the stream's end */
		e = compspill_extent_at(ext, idx);
		phys = (off_t) e * (off_t) esize + (off_t) within;

		/* extend the read over following extents adjacent in the file */
		while (done + amount < len && idx + 1 < ext->n &&
			   amount < COMPSPILL_MAX_IO &&
			   compspill_extent_at(ext, idx + 1) == e + 1)
		{
			idx++;
			e++;
			amount = Min(len - done, amount + esize);
		}

		rc = compspill_file_io(file, false, buf + done, amount, phys, 0);
		if (rc < 0)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not read from temporary file \"%s\": %m",
							FilePathName(file->vfd))));
		done += rc;
		if ((Size) rc < amount)
			break;				/* end of file */
	}

	if (done < need)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("could not read compspill temporary file \"%s\" at offset %lld: read only %zu of %zu bytes",
						FilePathName(file->vfd), (long long) offset,
						done, need)));

	return Min(done, len);
}
