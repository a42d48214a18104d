#include "seal.h"

#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

int seal_random(void *out, size_t n)
{
	return RAND_bytes(out, (int)n) == 1 ? 0 : -1;
}

void seal_sha256(const void *p, size_t n, unsigned char out[SEAL_HASH_LEN])
{
	SHA256(p, n, out);
}

int seal_hmac(const void *key, size_t keylen, const void *p, size_t n,
    unsigned char out[SEAL_HASH_LEN])
{
	unsigned int len = SEAL_HASH_LEN;

	return HMAC(EVP_sha256(), key, (int)keylen, p, n, out, &len) ? 0 : -1;
}

int seal_hkdf(const void *ikm, size_t ikmlen, const void *salt, size_t saltlen,
    const void *info, size_t infolen, unsigned char *out, size_t n)
{
	EVP_PKEY_CTX *ctx;
	size_t len = n;
	int rc = -1;

	if ((ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, NULL)) == NULL)
		return -1;
	if (EVP_PKEY_derive_init(ctx) > 0 &&
	    EVP_PKEY_CTX_set_hkdf_md(ctx, EVP_sha256()) > 0 &&
	    EVP_PKEY_CTX_set1_hkdf_salt(ctx, salt, (int)saltlen) > 0 &&
	    EVP_PKEY_CTX_set1_hkdf_key(ctx, ikm, (int)ikmlen) > 0 &&
	    EVP_PKEY_CTX_add1_hkdf_info(ctx, info, (int)infolen) > 0 &&
	    EVP_PKEY_derive(ctx, out, &len) > 0 && len == n)
		rc = 0;
	EVP_PKEY_CTX_free(ctx);
	return rc;
}

/* Runs one GCM pass (enc 1 or 0) of n bytes from in to out. */
static int gcm(int enc, const unsigned char *key, const unsigned char *nonce,
    const void *aad, size_t aadlen, const unsigned char *in, size_t n,
    unsigned char *out, unsigned char *tag)
{
	EVP_CIPHER_CTX *ctx;
	int len, rc = -1;

	if ((ctx = EVP_CIPHER_CTX_new()) == NULL)
		return -1;
	if (EVP_CipherInit_ex(ctx, EVP_aes_256_gcm(), NULL, key, nonce, enc) != 1)
		goto out;
	if (aadlen && EVP_CipherUpdate(ctx, NULL, &len, aad, (int)aadlen) != 1)
		goto out;
	if (n && EVP_CipherUpdate(ctx, out, &len, in, (int)n) != 1)
		goto out;
	if (!enc && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG,
	    SEAL_TAG_LEN, tag) != 1)
		goto out;
	if (EVP_CipherFinal_ex(ctx, out + n, &len) != 1)
		goto out;
	if (enc && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG,
	    SEAL_TAG_LEN, tag) != 1)
		goto out;
	rc = 0;
out:
	EVP_CIPHER_CTX_free(ctx);
	return rc;
}

int seal_encrypt(const unsigned char key[SEAL_KEY_LEN], const void *aad,
    size_t aadlen, const void *p, size_t n, struct buf *out)
{
	size_t start = out->len;
	unsigned char *o;

	if (n > (size_t)1 << 30 ||
	    (o = buf_extend(out, n + SEAL_OVERHEAD)) == NULL)
		return -1;
	if (seal_random(o, SEAL_NONCE_LEN) == -1 ||
	    gcm(1, key, o, aad, aadlen, p, n, o + SEAL_NONCE_LEN,
	    o + SEAL_NONCE_LEN + n) == -1)
		goto fail;
	return 0;
fail:
	out->len = start;
	if (out->data)
		out->data[start] = '\0';
	return -1;
}

int seal_decrypt(const unsigned char key[SEAL_KEY_LEN], const void *aad,
    size_t aadlen, const void *p, size_t n, struct buf *out)
{
	const unsigned char *in = p;
	unsigned char tag[SEAL_TAG_LEN];
	size_t start = out->len, m;

	if (n < SEAL_OVERHEAD)
		return -1;
	m = n - SEAL_OVERHEAD;
	memcpy(tag, in + SEAL_NONCE_LEN + m, SEAL_TAG_LEN);
	if (buf_append(out, in + SEAL_NONCE_LEN, m) == -1)
		return -1;
	/* Decrypt in place over the copied ciphertext. */
	if (gcm(0, key, in, aad, aadlen, (unsigned char *)out->data + start, m,
	    (unsigned char *)out->data + start, tag) == -1) {
		OPENSSL_cleanse(out->data + start, m);
		out->len = start;
		out->data[start] = '\0';
		return -1;
	}
	return 0;
}

int seal_equal(const void *a, const void *b, size_t n)
{
	return CRYPTO_memcmp(a, b, n) == 0;
}

static const char b64url[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

size_t seal_b64url_encode(const void *p, size_t n, char *out)
{
	const unsigned char *s = p;
	size_t i, o = 0;
	unsigned long v;

	for (i = 0; i + 2 < n; i += 3) {
		v = (unsigned long)s[i] << 16 | (unsigned long)s[i + 1] << 8 | s[i + 2];
		out[o++] = b64url[v >> 18 & 63];
		out[o++] = b64url[v >> 12 & 63];
		out[o++] = b64url[v >> 6 & 63];
		out[o++] = b64url[v & 63];
	}
	if (n - i == 1) {
		v = (unsigned long)s[i] << 16;
		out[o++] = b64url[v >> 18 & 63];
		out[o++] = b64url[v >> 12 & 63];
	} else if (n - i == 2) {
		v = (unsigned long)s[i] << 16 | (unsigned long)s[i + 1] << 8;
		out[o++] = b64url[v >> 18 & 63];
		out[o++] = b64url[v >> 12 & 63];
		out[o++] = b64url[v >> 6 & 63];
	}
	out[o] = '\0';
	return o;
}

static int b64url_val(char c)
{
	const char *p;

	if (c == '\0' || (p = strchr(b64url, c)) == NULL)
		return -1;
	return (int)(p - b64url);
}

long seal_b64url_decode(const char *s, size_t n, unsigned char *out, size_t outlen)
{
	unsigned long v = 0;
	size_t i, o = 0;
	int bits = 0, d;

	if (n % 4 == 1)
		return -1;
	for (i = 0; i < n; i++) {
		if ((d = b64url_val(s[i])) < 0)
			return -1;
		v = (v << 6 | (unsigned long)d) & 0xffffff;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (o == outlen)
				return -1;
			out[o++] = (unsigned char)(v >> bits);
		}
	}
	/* The bits left over must be zero: otherwise two spellings would
	 * decode alike and an altered cookie would still open a session. */
	if (bits && (v & ((1UL << bits) - 1)))
		return -1;
	return (long)o;
}

void seal_hex(const unsigned char *p, size_t n, char *out)
{
	static const char hex[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = hex[p[i] >> 4];
		out[2 * i + 1] = hex[p[i] & 15];
	}
	out[2 * n] = '\0';
}

void seal_wipe(void *p, size_t n)
{
	OPENSSL_cleanse(p, n);
}
