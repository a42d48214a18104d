/* seal: the cryptography postern does itself (libcurl does TLS): random
 * bytes, SHA-256, HMAC, HKDF, AES-256-GCM sealing, base64url and a
 * constant-time compare, all over OpenSSL's libcrypto. */
#ifndef POSTERN_SEAL_H
#define POSTERN_SEAL_H

#include <stddef.h>

#include "buf.h"

#define SEAL_KEY_LEN 32
#define SEAL_NONCE_LEN 12
#define SEAL_TAG_LEN 16
#define SEAL_OVERHEAD (SEAL_NONCE_LEN + SEAL_TAG_LEN)
#define SEAL_HASH_LEN 32

int seal_random(void *out, size_t n);
void seal_sha256(const void *p, size_t n, unsigned char out[SEAL_HASH_LEN]);
int seal_hmac(const void *key, size_t keylen, const void *p, size_t n,
    unsigned char out[SEAL_HASH_LEN]);
/* HKDF-SHA256 of ikm with salt and info into out (n bytes): 0 or -1. */
int seal_hkdf(const void *ikm, size_t ikmlen, const void *salt, size_t saltlen,
    const void *info, size_t infolen, unsigned char *out, size_t n);
/* AES-256-GCM: appends nonce | ciphertext | tag to out; aad is
 * authenticated, not stored. 0 or -1. */
int seal_encrypt(const unsigned char key[SEAL_KEY_LEN], const void *aad,
    size_t aadlen, const void *p, size_t n, struct buf *out);
/* Opens what seal_encrypt made; appends the plaintext to out. -1 when the
 * input is short, was altered, or the key or aad differ. */
int seal_decrypt(const unsigned char key[SEAL_KEY_LEN], const void *aad,
    size_t aadlen, const void *p, size_t n, struct buf *out);
/* 1 when equal, in time independent of the contents. */
int seal_equal(const void *a, const void *b, size_t n);
/* base64url without padding. encode writes 4*ceil(n/3) + 1 bytes at most
 * and returns the length; decode returns the length or -1 on a bad
 * character or when out (size outlen) is too small. */
size_t seal_b64url_encode(const void *p, size_t n, char *out);
long seal_b64url_decode(const char *s, size_t n, unsigned char *out, size_t outlen);
void seal_hex(const unsigned char *p, size_t n, char *out);
void seal_wipe(void *p, size_t n);

#endif
