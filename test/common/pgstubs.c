/*-------------------------------------------------------------------------
 *
 * pgstubs.c
 *	  Backend functions for compspill's standalone tests.
 *
 * Memory: palloc and friends are malloc with a header that links every
 * live chunk into one list, so that a test can free all of them at once
 * (pgstubs_free_all) after each iteration, as a memory context reset would.
 * The header is 16 bytes, so user data stays MAXALIGNed.
 *
 * Errors: errstart records the level; errfinish jumps to
 * pgstubs_error_jmp for an ERROR when a test has set it, and otherwise
 * prints what it can and aborts.
 *
 * IDENTIFICATION
 *	  test/common/pgstubs.c
 *
 *-------------------------------------------------------------------------
 */
#define _GNU_SOURCE
#include "postgres.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "port/pg_bitutils.h"
#include "utils/expandeddatum.h"

#include "pgstubs.h"

/* use libc's printf family, not libpgport's, which is not linked in */
#undef fprintf
#undef vfprintf
#undef fputc

MemoryContext CurrentMemoryContext = NULL;
sigjmp_buf *pgstubs_error_jmp = NULL;

static int	error_level = 0;

typedef struct TrackedChunk
{
	struct TrackedChunk *prev;
	struct TrackedChunk *next;
} TrackedChunk;

static TrackedChunk tracked = {&tracked, &tracked};

/* Link chunk c into the list of live chunks */
static void *
tracked_link(TrackedChunk *c)
{
	if (c == NULL)
		abort();
	c->next = tracked.next;
	c->prev = &tracked;
	tracked.next->prev = c;
	tracked.next = c;
	return c + 1;
}

/* Take chunk c out of the list of live chunks */
static void
tracked_unlink(TrackedChunk *c)
{
	c->prev->next = c->next;
	c->next->prev = c->prev;
}

/* Allocate size bytes, zeroed if asked */
static void *
tracked_alloc(Size size, bool zero)
{
	return tracked_link(zero ? calloc(1, sizeof(TrackedChunk) + size) :
						malloc(sizeof(TrackedChunk) + size));
}

void
pgstubs_free_all(void)
{
	while (tracked.next != &tracked)
	{
		TrackedChunk *c = tracked.next;

		tracked_unlink(c);
		free(c);
	}
}

void *
palloc(Size size)
{
	return tracked_alloc(size, false);
}

void *
palloc0(Size size)
{
	return tracked_alloc(size, true);
}

void *
palloc_extended(Size size, int flags)
{
	return tracked_alloc(size, (flags & MCXT_ALLOC_ZERO) != 0);
}

void
pfree(void *pointer)
{
	TrackedChunk *c = (TrackedChunk *) pointer - 1;

	tracked_unlink(c);
	free(c);
}

void *
MemoryContextAlloc(MemoryContext context, Size size)
{
	(void) context;
	return tracked_alloc(size, false);
}

void *
MemoryContextAllocZero(MemoryContext context, Size size)
{
	(void) context;
	return tracked_alloc(size, true);
}

void *
MemoryContextAllocHuge(MemoryContext context, Size size)
{
	(void) context;
	return tracked_alloc(size, false);
}

void *
repalloc_huge(void *pointer, Size size)
{
	TrackedChunk *c = (TrackedChunk *) pointer - 1;

	tracked_unlink(c);
	return tracked_link(realloc(c, sizeof(TrackedChunk) + size));
}

/* errdetail strings are malloc'd and not tracked; callers free them */
char *
psprintf(const char *fmt,...)
{
	va_list		ap;
	char	   *result;

	va_start(ap, fmt);
	if (vasprintf(&result, fmt, ap) < 0)
		abort();
	va_end(ap);
	return result;
}

uint64
pg_popcount(const char *buf, int bytes)
{
	uint64		count = 0;

	for (int i = 0; i < bytes; i++)
		count += __builtin_popcount((unsigned char) buf[i]);
	return count;
}

void
ExceptionalCondition(const char *conditionName, const char *errorType,
					 const char *fileName, int lineNumber)
{
	fprintf(stderr, "assertion failed: %s (%s) at %s:%d\n",
			conditionName, errorType, fileName, lineNumber);
	abort();
}

bool
errstart_cold(int elevel, const char *domain)
{
	(void) domain;
	error_level = elevel;
	return true;
}

bool
errstart(int elevel, const char *domain)
{
	(void) domain;
	error_level = elevel;
	return true;
}

void
errfinish(const char *filename, int lineno, const char *funcname)
{
	if (error_level < ERROR)
		return;
	if (pgstubs_error_jmp != NULL)
		siglongjmp(*pgstubs_error_jmp, 1);
	fprintf(stderr, "ereport reached at %s:%d (%s)\n",
			filename, lineno, funcname);
	abort();
}

int
errcode(int sqlerrcode)
{
	(void) sqlerrcode;
	return 0;
}

/* Print a message nobody expects (no error jump is set) */
static void
pgstubs_print(const char *fmt, va_list ap)
{
	if (pgstubs_error_jmp != NULL)
		return;
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

int
errmsg(const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	pgstubs_print(fmt, ap);
	va_end(ap);
	return 0;
}

int
errmsg_internal(const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	pgstubs_print(fmt, ap);
	va_end(ap);
	return 0;
}

int
errdetail(const char *fmt,...)
{
	(void) fmt;
	return 0;
}

/* the tests make no expanded objects */
ExpandedObjectHeader *
DatumGetEOHP(Datum d)
{
	(void) d;
	abort();
}

Size
EOH_get_flat_size(ExpandedObjectHeader *eohptr)
{
	(void) eohptr;
	abort();
}

void
EOH_flatten_into(ExpandedObjectHeader *eohptr, void *result,
				 Size allocated_size)
{
	(void) eohptr;
	(void) result;
	(void) allocated_size;
	abort();
}
