/*-------------------------------------------------------------------------
 *
 * spillfile.h
 *	  The spill file: one PostgreSQL temp file per operation, its extents,
 *	  aligned and coalesced writes, O_DIRECT (spillfile.c).
 *
 * Knows fd.c only.  Its callers are the spill layer's other files (the
 * spill object of spill/spiller.c owns the file), whose runs embed their
 * extent lists; the layers above know files only through them.
 *
 * IDENTIFICATION
 *	  src/spill/spillfile.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPSPILL_SPILLFILE_H
#define COMPSPILL_SPILLFILE_H

#include "base/spillstats.h"

/* spillfile.c */
typedef struct CompSpillFile CompSpillFile;

/* A range of consecutive extents of the spill file; private to spillfile.c */
typedef struct CompSpillExtentRange CompSpillExtentRange;

/*
 * The extents of the file one stream (a run) occupies, in stream order, as
 * ranges of consecutive extents: a run written at the end of the file is
 * one range, whatever its size.  Its fields are spillfile.c's alone; it is
 * declared here only so that a run can hold it by value, without an
 * allocation of its own.
 */
typedef struct CompSpillExtents
{
	CompSpillExtentRange *ranges;
	int			nranges;
	int			cap;
	int64		n;				/* extents taken */
	int64		nfreed;			/* leading extents given back */
	Size		start;			/* where in its first extent the stream
								 * starts (page-aligned): it may begin in
								 * the last extent of the stream before */
	/* lookup cursor: ranges[at] holds extents from index at_base on */
	int			at;
	int64		at_base;
} CompSpillExtents;

extern char *CompSpillAllocAligned(Size size);
extern void CompSpillFreeAligned(char *ptr);
extern Size CompSpillBufferSpace(char *buf, bool aligned);
extern bool CompSpillGrowBuffer(MemoryContext cxt, char **buf, Size *cap,
								Size need, Size keep, bool aligned);
extern CompSpillFile *CompSpillFileCreate(bool dio, Size write_size,
										  Size extent_size,
										  CompSpillStats *stats);
extern Size CompSpillFileExtentSize(CompSpillFile *file);
extern int64 CompSpillFileBytesWritten(CompSpillFile *file);
extern uint64 CompSpillFileDevice(CompSpillFile *file);
extern int64 CompSpillFileDeviceWritten(CompSpillFile *file);
extern int64 CompSpillFileMapReserve(CompSpillFile *file, int64 bytes);
extern Size CompSpillFileBufferSize(CompSpillFile *file);
extern bool CompSpillFileAligned(CompSpillFile *file);
extern void CompSpillFileBeginStream(CompSpillFile *file,
									 CompSpillExtents *ext);
extern char *CompSpillFileReserve(CompSpillFile *file, Size len);
extern off_t CompSpillFileCommit(CompSpillFile *file, Size len);
extern off_t CompSpillFileEndStream(CompSpillFile *file);
extern off_t CompSpillFileStreamLength(CompSpillFile *file);
extern off_t CompSpillFileFlush(CompSpillFile *file);
extern void CompSpillFileEndWrites(CompSpillFile *file);
extern void CompSpillFileRelease(CompSpillFile *file, CompSpillExtents *ext,
								 off_t upto);
extern Size CompSpillFileRead(CompSpillFile *file, CompSpillExtents *ext,
							  off_t offset, char *buf, Size len, Size need);
extern const char *CompSpillFileName(CompSpillFile *file);
extern int64 CompSpillFileRoom(CompSpillFile *file, CompSpillRoomLimit *limit);
extern void CompSpillFileClose(CompSpillFile *file);

#endif							/* COMPSPILL_SPILLFILE_H */
