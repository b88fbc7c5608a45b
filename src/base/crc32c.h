/*-------------------------------------------------------------------------
 *
 * crc32c.h
 *	  CRC-32C of a frame's payload, three streams at a time where the
 *	  server's own routine takes one.
 *
 * IDENTIFICATION
 *	  src/base/crc32c.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPSPILL_CRC32C_H
#define COMPSPILL_CRC32C_H

#include "port/pg_crc32c.h"

extern pg_crc32c CompSpillCrc32c(pg_crc32c crc, const void *data, size_t len);

#endif							/* COMPSPILL_CRC32C_H */
