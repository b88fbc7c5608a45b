/*-------------------------------------------------------------------------
 *
 * pgstubs.h
 *	  The backend functions compspill's standalone tests stub.
 *
 * The fuzzer, the codec measuring tool and the unit tests link one to three
 * of compspill's source files outside the server; pgstubs.c gives them the
 * few backend functions those files call.
 *
 * IDENTIFICATION
 *	  test/common/pgstubs.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PGSTUBS_H
#define PGSTUBS_H

#include <setjmp.h>

/*
 * Where an ERROR (ereport or elog at ERROR and above) jumps, or NULL: then
 * the message is printed and the program aborts, since no test expects it.
 */
extern sigjmp_buf *pgstubs_error_jmp;

/*
 * Call the memory-context reset callbacks registered since the last call,
 * then free every chunk palloc and friends handed out and did not get back.
 */
extern void pgstubs_free_all(void);

#endif							/* PGSTUBS_H */
