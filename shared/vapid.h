/* vapid: the server's VAPID key pair (RFC 8292), a P-256 key in a PEM
 * file beside the secret, made once by postern-admin init. pushd signs
 * with it; the responders serve its public half to the app, which hands
 * it to the browser's push service when it subscribes. */
#ifndef POSTERN_VAPID_H
#define POSTERN_VAPID_H

#include <stddef.h>

#include <openssl/evp.h>

#define VAPID_POINT_LEN 65     /* uncompressed P-256 point: 0x04 | x | y */
#define VAPID_PUBLIC_B64_LEN 87 /* base64url of 65 bytes, unpadded */

/* Whether key is an EC key on P-256, the only curve Web Push knows. */
int vapid_is_p256(EVP_PKEY *key);
/* The uncompressed public point of a P-256 key: 0 or -1. */
int vapid_point(EVP_PKEY *key, unsigned char out[VAPID_POINT_LEN]);
/* That point in base64url (VAPID_PUBLIC_B64_LEN + 1 bytes): 0 or -1. */
int vapid_public_b64(EVP_PKEY *key, char out[VAPID_PUBLIC_B64_LEN + 1]);

/* A new P-256 key pair, or NULL; the caller frees it. */
EVP_PKEY *vapid_key_new(void);
/* The P-256 private key of a PEM file, or NULL; the caller frees it. */
EVP_PKEY *vapid_key_read(const char *path);
/* Writes key as PEM to a new file, mode 0600, never over an existing one:
 * 0 or -1 (nothing is left behind then). */
int vapid_key_write(EVP_PKEY *key, const char *path);

#endif
