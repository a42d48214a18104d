#include "seal.h"

#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

/* OpenSSL 3 looks an algorithm up by name on every implicit use, which
 * cost a quarter of a relay request: each is fetched once per process and
 * kept. They are algorithm handles, not request state. */
static EVP_MD *seal_md;
static EVP_CIPHER *seal_cipher;

static const EVP_MD *sha256(void)
{
	if (seal_md == NULL)
		seal_md = EVP_MD_fetch(NULL, "SHA256", NULL);
	return seal_md;
}

static const EVP_CIPHER *aes_gcm(void)
{
	if (seal_cipher == NULL)
		seal_cipher = EVP_CIPHER_fetch(NULL, "AES-256-GCM", NULL);
	return seal_cipher;
}

int seal_random(void *out, size_t n)
{
	return RAND_bytes(out, (int)n) == 1 ? 0 : -1;
}

/* SHA-256 over up to three pieces: 0 or -1. */
static int digest3(const void *a, size_t an, const void *b, size_t bn,
    const void *c, size_t cn, unsigned char out[SEAL_HASH_LEN])
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	int ok;

	ok = ctx && sha256() && EVP_DigestInit_ex(ctx, sha256(), NULL) == 1 &&
	    EVP_DigestUpdate(ctx, a, an) == 1 &&
	    (bn == 0 || EVP_DigestUpdate(ctx, b, bn) == 1) &&
	    (cn == 0 || EVP_DigestUpdate(ctx, c, cn) == 1) &&
	    EVP_DigestFinal_ex(ctx, out, NULL) == 1;
	EVP_MD_CTX_free(ctx);
	return ok ? 0 : -1;
}

void seal_sha256(const void *p, size_t n, unsigned char out[SEAL_HASH_LEN])
{
	if (digest3(p, n, NULL, 0, NULL, 0, out) == -1)
		memset(out, 0, SEAL_HASH_LEN);
}

/* HMAC-SHA256 (RFC 2104) with the message in two pieces. */
static int hmac2(const void *key, size_t keylen, const void *p, size_t n,
    const void *q, size_t qn, unsigned char out[SEAL_HASH_LEN])
{
	unsigned char k[64], pad[64], inner[SEAL_HASH_LEN];
	size_t i;
	int rc = -1;

	memset(k, 0, sizeof(k));
	if (keylen > sizeof(k)) {
		if (digest3(key, keylen, NULL, 0, NULL, 0, k) == -1)
			goto out;
	} else if (keylen)
		memcpy(k, key, keylen);
	for (i = 0; i < sizeof(pad); i++)
		pad[i] = k[i] ^ 0x36;
	if (digest3(pad, sizeof(pad), p, n, q, qn, inner) == -1)
		goto out;
	for (i = 0; i < sizeof(pad); i++)
		pad[i] = k[i] ^ 0x5c;
	rc = digest3(pad, sizeof(pad), inner, sizeof(inner), NULL, 0, out);
out:
	seal_wipe(k, sizeof(k));
	seal_wipe(pad, sizeof(pad));
	seal_wipe(inner, sizeof(inner));
	return rc;
}

int seal_hmac(const void *key, size_t keylen, const void *p, size_t n,
    unsigned char out[SEAL_HASH_LEN])
{
	return hmac2(key, keylen, p, n, NULL, 0, out);
}

/* HKDF-SHA256 (RFC 5869): extract, then expand block by block. */
int seal_hkdf(const void *ikm, size_t ikmlen, const void *salt, size_t saltlen,
    const void *info, size_t infolen, unsigned char *out, size_t n)
{
	unsigned char prk[SEAL_HASH_LEN], t[SEAL_HASH_LEN + 1 + 1024];
	unsigned char block[SEAL_HASH_LEN];
	size_t done = 0, tlen = 0, k;
	unsigned char i = 0;
	int rc = -1;

	if (n > 255 * SEAL_HASH_LEN || infolen > 1024)
		return -1;
	if (hmac2(salt, saltlen, ikm, ikmlen, NULL, 0, prk) == -1)
		goto out;
	while (done < n) {
		/* T(i) = HMAC(PRK, T(i-1) | info | i) */
		memcpy(t + tlen, info, infolen);
		t[tlen + infolen] = ++i;
		if (hmac2(prk, sizeof(prk), t, tlen + infolen + 1, NULL, 0,
		    block) == -1)
			goto out;
		k = n - done < SEAL_HASH_LEN ? n - done : SEAL_HASH_LEN;
		memcpy(out + done, block, k);
		done += k;
		memcpy(t, block, SEAL_HASH_LEN);
		tlen = SEAL_HASH_LEN;
	}
	rc = 0;
out:
	seal_wipe(prk, sizeof(prk));
	seal_wipe(t, sizeof(t));
	seal_wipe(block, sizeof(block));
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
	if (aes_gcm() == NULL ||
	    EVP_CipherInit_ex(ctx, aes_gcm(), NULL, key, nonce, enc) != 1)
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
