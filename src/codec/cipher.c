/*-------------------------------------------------------------------------
 *
 * cipher.c
 *	  compspill.encryption = aes-256-gcm: authenticated encryption of each
 *	  frame's payload, after compression, with a key that lives only in the
 *	  backend's memory.
 *
 * The key
 * -------
 *
 * A backend draws a 256-bit key from pg_strong_random the first time it
 * encrypts a spill, and keeps it in its own memory for the rest of its
 * life.  It is never written anywhere: not to the spill file, not to the
 * log, not to shared memory.  Spill files are private to the backend that
 * writes them (a parallel worker's sort spills to its own file and sends
 * rows, not files, to the leader), so no other process ever needs the key;
 * once the backend exits, what it left on disk or in backups cannot be
 * read by anyone.
 *
 * The nonce
 * ---------
 *
 * GCM must never see one nonce twice under one key.  Every run a backend
 * writes gets a serial number from a 64-bit counter that only goes up, and
 * every frame of a run its index in the run, so the 96-bit nonce (serial,
 * frame index) is unique for the backend's key.  Neither is stored in the
 * file: the reader knows which run it reads and which frame of it it
 * expects, and derives the nonce itself.  A frame swapped with another
 * one, moved to another place, or replayed from an earlier run that used
 * the same extent therefore fails authentication like a tampered one.  The
 * frame header (sizes, codec, row count) is the additional authenticated
 * data, so it cannot be altered either; its CRC is still checked first, to
 * tell a torn write from an attack.
 *
 * The payload (compressed or not) is encrypted in place in the spill
 * file's write buffer and followed by the 16-byte tag; on read it is
 * authenticated and decrypted in place in the read window, before anything
 * is decompressed or decoded.  Everything goes through OpenSSL's EVP
 * interface; the cipher contexts are freed by a memory context callback, so
 * an error frees them too.  OpenSSL mallocs them, so what they hold is
 * counted apart (CompSpillCipherMemory).
 *
 * IDENTIFICATION
 *	  src/codec/cipher.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <openssl/err.h>
#include <openssl/evp.h>

#include "codec/cipher.h"

#define COMPSPILL_KEY_SIZE		32

/*
 * What OpenSSL mallocs for one AES-256-GCM EVP_CIPHER_CTX set up as
 * CompSpillCipherCreate does, outside every memory context: 1152 bytes
 * (OpenSSL 3.0, counted with CRYPTO_set_mem_functions and
 * malloc_usable_size over a second pair of contexts, after the first use
 * has loaded the provider, which is the backend's once and not a
 * spill's), rounded up.
 */
#define COMPSPILL_CIPHER_CTX_MEM	1280
#define COMPSPILL_NONCE_SIZE	12

/* EVP takes int lengths: longer payloads go through in pieces */
#define COMPSPILL_CIPHER_CHUNK	((Size) 1 << 30)

/* The contexts of one spill */
struct CompSpillCipher
{
	EVP_CIPHER_CTX *enc;
	EVP_CIPHER_CTX *dec;
	MemoryContextCallback cb;
};

/* the backend's key, drawn at first use */
static uint8 compspill_key[COMPSPILL_KEY_SIZE];
static bool compspill_key_ready = false;

/* serial numbers of the runs the backend writes */
static uint64 compspill_run_serial = 0;

/* Fail with OpenSSL's reason for the last error */
static void
compspill_cipher_error(const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_INTERNAL_ERROR),
			 errmsg("could not %s compspill block", what),
			 errdetail("OpenSSL: %s.", CompSpillCipherLastError())));
}

/*
 * Return OpenSSL's description of its last error, or a placeholder.
 */
const char *
CompSpillCipherLastError(void)
{
	unsigned long code = ERR_get_error();

	if (code == 0)
		return "no error reported";
	return ERR_reason_error_string(code) ? ERR_reason_error_string(code) :
		"unknown error";
}

/* Free a spill's cipher contexts: its memory context goes away */
static void
compspill_cipher_free(void *arg)
{
	CompSpillCipher *c = (CompSpillCipher *) arg;

	if (c->enc)
		EVP_CIPHER_CTX_free(c->enc);
	if (c->dec)
		EVP_CIPHER_CTX_free(c->dec);
	c->enc = c->dec = NULL;
}

/*
 * Make the cipher of a spill, in CurrentMemoryContext (the spill's),
 * drawing the backend's key if this is its first encrypted spill.
 */
CompSpillCipher *
CompSpillCipherCreate(void)
{
	CompSpillCipher *c;

	if (!compspill_key_ready)
	{
		if (!pg_strong_random(compspill_key, sizeof(compspill_key)))
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("could not generate a key for compspill encryption")));
		compspill_key_ready = true;
	}

	c = palloc0(sizeof(CompSpillCipher));
	c->cb.func = compspill_cipher_free;
	c->cb.arg = c;
	MemoryContextRegisterResetCallback(CurrentMemoryContext, &c->cb);

	c->enc = EVP_CIPHER_CTX_new();
	c->dec = EVP_CIPHER_CTX_new();
	if (c->enc == NULL || c->dec == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory"),
				 errdetail("Could not create an OpenSSL cipher context.")));
	if (EVP_EncryptInit_ex(c->enc, EVP_aes_256_gcm(), NULL, NULL, NULL) != 1 ||
		EVP_CIPHER_CTX_ctrl(c->enc, EVP_CTRL_GCM_SET_IVLEN,
							COMPSPILL_NONCE_SIZE, NULL) != 1 ||
		EVP_EncryptInit_ex(c->enc, NULL, NULL, compspill_key, NULL) != 1)
		compspill_cipher_error("set up encryption of");
	if (EVP_DecryptInit_ex(c->dec, EVP_aes_256_gcm(), NULL, NULL, NULL) != 1 ||
		EVP_CIPHER_CTX_ctrl(c->dec, EVP_CTRL_GCM_SET_IVLEN,
							COMPSPILL_NONCE_SIZE, NULL) != 1 ||
		EVP_DecryptInit_ex(c->dec, NULL, NULL, compspill_key, NULL) != 1)
		compspill_cipher_error("set up decryption of");
	return c;
}

/*
 * Return what a spill's cipher contexts hold outside memory contexts.
 */
Size
CompSpillCipherMemory(void)
{
	return 2 * COMPSPILL_CIPHER_CTX_MEM;
}

/*
 * Return a serial number for a new run, never returned before by this
 * backend.
 */
uint64
CompSpillCipherRunSerial(void)
{
	return ++compspill_run_serial;
}

/* Build the nonce of frame number frame of run serial */
static void
compspill_nonce(uint8 *nonce, uint64 serial, int64 frame)
{
	uint32		f;

	if (frame < 0 || frame > (int64) PG_UINT32_MAX)
		elog(ERROR, "compspill run has too many frames to encrypt");
	f = (uint32) frame;
	memcpy(nonce, &serial, sizeof(serial));
	memcpy(nonce + sizeof(serial), &f, sizeof(f));
}

/*
 * Run len bytes of buf through ctx in place, in pieces EVP can take.
 */
static bool
compspill_cipher_update(EVP_CIPHER_CTX *ctx, bool encrypt, char *buf,
						Size len)
{
	while (len > 0)
	{
		int			n = (int) Min(len, COMPSPILL_CIPHER_CHUNK);
		int			out;
		int			rc;

		if (encrypt)
			rc = EVP_EncryptUpdate(ctx, (unsigned char *) buf, &out,
								   (unsigned char *) buf, n);
		else
			rc = EVP_DecryptUpdate(ctx, (unsigned char *) buf, &out,
								   (unsigned char *) buf, n);
		if (rc != 1 || out != n)
			return false;
		buf += n;
		len -= n;
	}
	return true;
}

/*
 * Encrypt len bytes of payload in place, as frame number frame of run
 * serial, authenticating aad too, and write the tag right after them:
 * payload must have room for COMPSPILL_CIPHER_TAG_SIZE more bytes.
 */
void
CompSpillEncrypt(CompSpillCipher *c, uint64 serial, int64 frame,
				 const void *aad, Size aadlen, char *payload, Size len)
{
	uint8		nonce[COMPSPILL_NONCE_SIZE];
	int			out;

	compspill_nonce(nonce, serial, frame);
	if (EVP_EncryptInit_ex(c->enc, NULL, NULL, NULL, nonce) != 1 ||
		EVP_EncryptUpdate(c->enc, NULL, &out, aad, (int) aadlen) != 1 ||
		!compspill_cipher_update(c->enc, true, payload, len) ||
		EVP_EncryptFinal_ex(c->enc, (unsigned char *) payload + len, &out) != 1 ||
		EVP_CIPHER_CTX_ctrl(c->enc, EVP_CTRL_GCM_GET_TAG,
							COMPSPILL_CIPHER_TAG_SIZE, payload + len) != 1)
		compspill_cipher_error("encrypt");
}

/*
 * Authenticate and decrypt in place a payload of len bytes (the tag
 * included) that was encrypted as frame number frame of run serial with
 * aad; return false if it is not what was written there.
 */
bool
CompSpillDecrypt(CompSpillCipher *c, uint64 serial, int64 frame,
				 const void *aad, Size aadlen, char *payload, Size len)
{
	uint8		nonce[COMPSPILL_NONCE_SIZE];
	Size		textlen;
	int			out;

	if (len < COMPSPILL_CIPHER_TAG_SIZE)
		return false;
	textlen = len - COMPSPILL_CIPHER_TAG_SIZE;

	compspill_nonce(nonce, serial, frame);
	if (EVP_DecryptInit_ex(c->dec, NULL, NULL, NULL, nonce) != 1 ||
		EVP_DecryptUpdate(c->dec, NULL, &out, aad, (int) aadlen) != 1 ||
		!compspill_cipher_update(c->dec, false, payload, textlen) ||
		EVP_CIPHER_CTX_ctrl(c->dec, EVP_CTRL_GCM_SET_TAG,
							COMPSPILL_CIPHER_TAG_SIZE,
							payload + textlen) != 1)
		compspill_cipher_error("decrypt");

	/* the tag is checked here: a mismatch is not an OpenSSL failure */
	if (EVP_DecryptFinal_ex(c->dec, (unsigned char *) payload + textlen,
							&out) != 1)
	{
		ERR_clear_error();
		return false;
	}
	return true;
}
