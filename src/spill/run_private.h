/*-------------------------------------------------------------------------
 *
 * run_private.h
 *	  The spill layer's shared internals: the spill object, the run reader,
 *	  and the functions the layer's files call in one another.
 *
 * Private to the files of src/spill/: nothing above the spill layer
 * includes it (test/include-graph.py --check fails if a file outside its
 * folder does).  The layers above see spill/run.h only, where both
 * structs are opaque.
 *
 * IDENTIFICATION
 *	  src/spill/run_private.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPSPILL_RUN_PRIVATE_H
#define COMPSPILL_RUN_PRIVATE_H

#include "port/pg_crc32c.h"
#include "portability/instr_time.h"

#include "base/settings.h"
#include "base/spillstats.h"
#include "codec/autocodec.h"
#include "codec/blockcodec.h"
#include "codec/cipher.h"
#include "codec/compress.h"
#include "codec/rowframe.h"
#include "shared/activity.h"
#include "spill/run.h"
#include "spill/spillfile.h"

/* The read buffer is never smaller than this */
#define COMPSPILL_MIN_READ_BUFFER	((Size) 4 * 1024)

/* The spill object of one operation (spiller.c's banner) */
struct CompSpillSpiller
{
	MemoryContext cxt;			/* owns everything of the spill */
	TupleDesc	tupdesc;
	CompSpillSettings set;
	CompSpillStats *stats;
	CompSpillFile *file;
	CompSpillCompressor *comp;
	CompSpillCipher *cipher;	/* NULL unless encrypting */

	/* the writer: encoder and scratch live in writecxt */
	MemoryContext writecxt;
	Size		block_size;
	CompSpillEncoder *enc;
	CompSpillRowWriter rows;	/* row frames' rows, once rows_ready */
	bool		rows_ready;
	char	   *scratch;		/* encoded block before compression */
	Size		scratch_cap;

	/* the run being written, or NULL */
	CompSpillRun *run;

	/* what compspill_activity shows of the spill */
	CompSpillActivity *activity;
	CompSpillPhase phase;
	int			pass;
	int			npasses;

	/* the largest frame written so far: raw and stored bytes */
	Size		max_raw;
	Size		max_stored;
	Size		max_compressed_raw; /* of frames stored compressed */
	bool		zstd_frames;	/* some frame was stored with zstd */
	bool		light_codec;	/* lz4 where zstd would be chosen */
	Size		max_row;		/* the largest row put in a row frame */
	int64		kind_turn;		/* frame_kind = alternate: runs asked for */

	/* what the frames written so far hold, for sizing readers */
	int64		frames_written; /* frames, all passes */
	int64		raw_written;	/* their encoded bytes */
	int64		rows_formed;	/* rows of the runs of level 0 finished */

	/* codec = auto: the costs measured so far, and the I/O already fed */
	CompSpillAutoCodec *ac;		/* its state, in sp's chunk (spiller.c) */
	int64		ac_written;
	instr_time	ac_write_time;
	instr_time	ac_write_wall;	/* when the last write was fed, or the
								 * spill began */
	int64		dev_mark;		/* the device's bytes written when a stall
								 * was seen, or -1 (codecchoice.c) */
	instr_time	dev_mark_time;	/* and when */
	int64		dev_base;		/* the device's bytes written when the
								 * spill's first write was seen, or -1 */
	bool		dev_base_read;	/* dev_base was read */
	bool		recall_tried;	/* the device's remembered pace looked up */
	int64		ac_read;
	instr_time	ac_read_time;

	/*
	 * Spill CPU: when the pending block's first row was put by
	 * CompSpillRunPutMinimal (rows put back to back), so that its encoding
	 * is timed from there; otherwise only the block's finishing is.
	 */
	bool		block_timed;
	instr_time	block_start;

	/*
	 * codec = auto: the bytes of the minimal tuples put in the pending
	 * block, and how many, for what column frames save over row frames
	 */
	int64		block_in;
	int64		block_in_rows;

	/* codec = auto: the input the plan expects, for the room it needs */
	double		expected_rows;	/* 0: not known, no room policy */
	int			expected_width;
	int64		room_frames;	/* frames since the last look at the room */
};

/* A reader of runs (runreader.c) */
struct CompSpillRunReader
{
	CompSpillSpiller *sp;
	MemoryContext cxt;			/* owns the reader and all its buffers */

	/* window of the run: rbuf[0 .. rbuf_len) holds bytes at rbuf_off */
	char	   *rbuf;			/* aligned under direct I/O */
	Size		rbuf_cap;		/* whole pages under direct I/O */
	Size		rbuf_len;
	off_t		rbuf_off;		/* aligned under direct I/O */

	char	   *dbuf;			/* decompressed block */
	Size		dbuf_cap;

	/*
	 * The run's frames are decompressed in place: the window is no buffer
	 * of its own but the tail of dbuf, where each frame is read so that it
	 * ends far enough past the block it decompresses to (compspill_read_tail
	 * in runreader.c); rbuf points into dbuf, and rbuf_cap is 0.
	 */
	bool		in_place;

	/* the run being read */
	CompSpillRun *run;
	bool		consume;		/* give extents back as they are passed */
	off_t		pos;			/* next frame */
	int64		frame;			/* its number in the run */

	/* bytes of the window below this were decrypted in place */
	off_t		plain_end;

	/* current block, read row by row */
	CompSpillDecodedBlock blk;

	/* current row frame, read row by row */
	CompSpillRowCursor rc;

	/*
	 * An indexed run's frames between two of its index entries, as the
	 * reader has found them by their headers (CompSpillReaderSeekRow):
	 * grp[i] is frame grp_frame + i, for i < grp_n, contiguous from the
	 * entry's frame.  For grp_run with index stride grp_stride.
	 */
	CompSpillRun *grp_run;
	int64		grp_stride;
	int64		grp_frame;
	CompSpillFrameRef *grp;
	int64		grp_n;
	int64		grp_cap;
};

/* runwriter.c */
extern void compspill_free_writer(CompSpillSpiller *sp);

/*
 * frame.c; CompSpillFrameHeader is spill/frame.h's, not included here so
 * that frame.c's include of this header makes no circle
 */
struct CompSpillFrameHeader;
extern pg_crc32c compspill_frame_crc(const struct CompSpillFrameHeader *hdr,
									 const char *payload);
extern bool compspill_load_frame(CompSpillRunReader *r);
extern void compspill_read_frame_header(CompSpillRunReader *r, off_t pos,
										struct CompSpillFrameHeader *hdr_out);

/* runreader.c */
extern const char *compspill_read_window(CompSpillRunReader *r, off_t pos,
										 Size len);

/* codecchoice.c */
extern CompSpillCodec compspill_frame_codec(CompSpillSpiller *sp);
extern bool compspill_io_is_cheap(CompSpillSpiller *sp, CompSpillCodec codec);
extern void compspill_feed_io(CompSpillSpiller *sp);
extern void compspill_remember_device(CompSpillSpiller *sp);

/* spillsizing.c */
extern Size compspill_largest_block(const CompSpillSettings *set);
extern Size compspill_zstd_dict_size(const CompSpillSettings *set);
extern void compspill_average_frame(CompSpillSpiller *sp, Size *raw,
									Size *stored);

#endif							/* COMPSPILL_RUN_PRIVATE_H */
