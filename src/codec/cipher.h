/*-------------------------------------------------------------------------
 *
 * cipher.h
 *	  compspill.encryption: AES-256-GCM of each frame's payload with a
 *	  per-backend ephemeral key (cipher.c).
 *
 * Bytes only.  Its callers are the spill layer's frames
 * (spill/runwriter.c writes them, spill/frame.c reads them back).
 *
 * IDENTIFICATION
 *	  src/codec/cipher.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef COMPSPILL_CIPHER_H
#define COMPSPILL_CIPHER_H

/* cipher.c */
typedef struct CompSpillCipher CompSpillCipher;

#define COMPSPILL_CIPHER_TAG_SIZE	16

extern CompSpillCipher *CompSpillCipherCreate(void);
extern Size CompSpillCipherMemory(void);
extern uint64 CompSpillCipherRunSerial(void);
extern const char *CompSpillCipherLastError(void);
extern void CompSpillEncrypt(CompSpillCipher *c, uint64 serial, int64 frame,
							 const void *aad, Size aadlen, char *payload,
							 Size len);
extern bool CompSpillDecrypt(CompSpillCipher *c, uint64 serial, int64 frame,
							 const void *aad, Size aadlen, char *payload,
							 Size len);

#endif							/* COMPSPILL_CIPHER_H */
