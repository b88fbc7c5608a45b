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
 * Memory-context reset callbacks (the compressor's zstd contexts, the
 * cipher's OpenSSL contexts) are kept on one list and called, last
 * registered first, by pgstubs_free_all before it frees the chunks, as a
 * reset of the one context would.
 *
 * Errors: errstart records the level; errfinish jumps to
 * pgstubs_error_jmp for an ERROR when a test has set it, and otherwise
 * prints what it can and aborts.
 *
 * pg_strong_random reads /dev/urandom, so that linking this file needs no
 * library beyond libc.
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

/* reset callbacks registered since the last pgstubs_free_all, newest first */
static MemoryContextCallback *reset_callbacks = NULL;

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

/* Call the reset callbacks, then free every live chunk */
void
pgstubs_free_all(void)
{
	while (reset_callbacks != NULL)
	{
		MemoryContextCallback *cb = reset_callbacks;

		reset_callbacks = cb->next;
		cb->func(cb->arg);
	}
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

/*
 * Register cb to be called by the next pgstubs_free_all.  Weak, so that a
 * test that watches the callback itself (test/unit/compress_test.c) can
 * define its own.
 */
__attribute__((weak)) void
MemoryContextRegisterResetCallback(MemoryContext context,
								   MemoryContextCallback *cb)
{
	(void) context;
	cb->next = reset_callbacks;
	reset_callbacks = cb;
}

/* Fill buf with len bytes from /dev/urandom */
bool
pg_strong_random(void *buf, size_t len)
{
	FILE	   *f = fopen("/dev/urandom", "rb");
	bool		ok;

	if (f == NULL)
		return false;
	ok = fread(buf, 1, len, f) == len;
	fclose(f);
	return ok;
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

static uint64
stub_popcount(const char *buf, int bytes)
{
	uint64		count = 0;

	for (int i = 0; i < bytes; i++)
		count += __builtin_popcount((unsigned char) buf[i]);
	return count;
}

/*
 * 17 made pg_popcount an inline function: a table lookup for a few bytes,
 * else pg_popcount_optimized, a pointer where the server chooses an
 * implementation at run time (TRY_POPCNT_FAST in 17, TRY_POPCNT_X86_64 in
 * 18) and a function elsewhere.
 */
#if PG_VERSION_NUM < 170000
uint64
pg_popcount(const char *buf, int bytes)
{
	return stub_popcount(buf, bytes);
}
#else
const uint8 pg_number_of_ones[256] = {
#define STUB_ONES4(n) (n), (n) + 1, (n) + 1, (n) + 2
#define STUB_ONES16(n) STUB_ONES4(n), STUB_ONES4((n) + 1), STUB_ONES4((n) + 1), STUB_ONES4((n) + 2)
#define STUB_ONES64(n) STUB_ONES16(n), STUB_ONES16((n) + 1), STUB_ONES16((n) + 1), STUB_ONES16((n) + 2)
	STUB_ONES64(0), STUB_ONES64(1), STUB_ONES64(1), STUB_ONES64(2)
};
#if defined(TRY_POPCNT_FAST) || defined(TRY_POPCNT_X86_64)
uint64		(*pg_popcount_optimized) (const char *buf, int bytes) = stub_popcount;
#else
uint64
pg_popcount_optimized(const char *buf, int bytes)
{
	return stub_popcount(buf, bytes);
}
#endif
#endif

/* 16 dropped the errorType argument */
#if PG_VERSION_NUM >= 160000
void
ExceptionalCondition(const char *conditionName, const char *fileName,
					 int lineNumber)
{
	fprintf(stderr, "assertion failed: %s at %s:%d\n",
			conditionName, fileName, lineNumber);
	abort();
}
#else
void
ExceptionalCondition(const char *conditionName, const char *errorType,
					 const char *fileName, int lineNumber)
{
	fprintf(stderr, "assertion failed: %s (%s) at %s:%d\n",
			conditionName, errorType, fileName, lineNumber);
	abort();
}
#endif

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
