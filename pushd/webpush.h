/* webpush: the cryptography of a Web Push message: the body encrypted
 * for one subscription (RFC 8291 over RFC 8188's aes128gcm) and the VAPID
 * Authorization header that signs it for its push service (RFC 8292).
 * No network and no files (the key is vapid.h's); sending is the
 * caller's. */
#ifndef POSTERN_WEBPUSH_H
#define POSTERN_WEBPUSH_H

#include <stddef.h>

#include <openssl/evp.h>

#include "buf.h"

#define WEBPUSH_P256DH_LEN 65   /* uncompressed P-256 point: 0x04 | x | y */
#define WEBPUSH_AUTH_LEN 16
#define WEBPUSH_SALT_LEN 16
#define WEBPUSH_RECORD_SIZE 4096
/* salt 16 | rs 4 | idlen 1 | keyid 65 */
#define WEBPUSH_HEADER_LEN (WEBPUSH_SALT_LEN + 4 + 1 + WEBPUSH_P256DH_LEN)
/* RFC 8291 section 4: 4096 - 86 (header) - 16 (tag) - 1 (delimiter), so
 * that one record of 4096 holds it all. */
#define WEBPUSH_MAX_PLAINTEXT 3993
/* RFC 8292 section 2: exp no more than 24 hours ahead; 12 is the usual. */
#define WEBPUSH_VAPID_LIFETIME (12 * 3600)
#define WEBPUSH_VAPID_MAX_LIFETIME (24 * 3600)
#define WEBPUSH_ORIGIN_MAX 512

/* Appends the request body (header and one record) that carries p (n
 * bytes) to the subscription's p256dh and auth, with a fresh ephemeral key
 * and salt. 0, or -1 when a key is the wrong size or not on the curve, the
 * plaintext is over WEBPUSH_MAX_PLAINTEXT, or out is full (out then holds
 * what it held). */
int webpush_encrypt(const unsigned char *p256dh, size_t p256dhlen,
    const unsigned char *auth, size_t authlen, const void *p, size_t n,
    struct buf *out);
/* The same with the sender's ephemeral key (a P-256 key, borrowed) and the
 * salt given: for the RFC's example, and nothing else. */
int webpush_encrypt_with(EVP_PKEY *as_key,
    const unsigned char salt[WEBPUSH_SALT_LEN], const unsigned char *p256dh,
    size_t p256dhlen, const unsigned char *auth, size_t authlen,
    const void *p, size_t n, struct buf *out);

/* The origin (scheme://host[:port]) of an https endpoint into out (size
 * n): 0, or -1 when it is not https, has no host, carries credentials or
 * does not fit. */
int webpush_origin(const char *endpoint, char *out, size_t n);
/* Appends "vapid t=<JWT>, k=<public key>" for endpoint, signed with key (a
 * P-256 private key, borrowed), with exp = now + lifetime and sub the
 * operator's contact ("mailto:" or "https:"). -1 when the endpoint is
 * refused, lifetime is not in (0, 24 h], sub is neither, or signing
 * failed. */
int webpush_vapid(EVP_PKEY *key, const char *endpoint, const char *sub,
    long long now, long lifetime, struct buf *out);

#endif
