/*
 * test/t/refuse_dio.c
 *	  LD_PRELOAD shim for 006_direct_io.pl: a file system that accepts
 *	  O_DIRECT on the descriptor but refuses direct writes with EINVAL, as
 *	  some network and FUSE file systems do.  Every pwrite/pwritev on a
 *	  descriptor that carries O_DIRECT fails with EINVAL; all other I/O goes
 *	  through.  Nothing in PostgreSQL but compspill's spill files opens
 *	  with O_DIRECT unless debug_io_direct is set.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static int
refused(int fd)
{
	int			flags = fcntl(fd, F_GETFL);

	return flags >= 0 && (flags & O_DIRECT) != 0;
}

ssize_t
pwrite(int fd, const void *buf, size_t count, off_t offset)
{
	static ssize_t (*real) (int, const void *, size_t, off_t);

	if (refused(fd))
	{
		errno = EINVAL;
		return -1;
	}
	if (real == NULL)
		real = (ssize_t (*) (int, const void *, size_t, off_t))
			dlsym(RTLD_NEXT, "pwrite");
	return real(fd, buf, count, offset);
}

ssize_t
pwritev(int fd, const struct iovec *iov, int iovcnt, off_t offset)
{
	static ssize_t (*real) (int, const struct iovec *, int, off_t);

	if (refused(fd))
	{
		errno = EINVAL;
		return -1;
	}
	if (real == NULL)
		real = (ssize_t (*) (int, const struct iovec *, int, off_t))
			dlsym(RTLD_NEXT, "pwritev");
	return real(fd, iov, iovcnt, offset);
}
