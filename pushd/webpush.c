#include "webpush.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <json-c/json.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>

#include "seal.h"
#include "vapid.h"

#define KEY_LEN 16      /* AES-128 */
#define NONCE_LEN 12
#define TAG_LEN 16
#define SECRET_LEN 32   /* an ECDH secret on P-256, and the IKM */
#define COORD_LEN 32    /* r and s of an ES256 signature */
#define CONTACT_MAX 256 /* a mailto: or https: contact, far above any real one */

/* The browser's public key from its p256dh, or NULL when it is not an
 * uncompressed point on P-256. OpenSSL checks the curve equation while
 * decoding; the 0x04 is ours, as it would take the hybrid form 0x06/0x07
 * of the same 65 bytes. */
static EVP_PKEY *peer_key(const unsigned char *pt, size_t n)
{
	char group[] = "prime256v1";
	unsigned char point[WEBPUSH_P256DH_LEN];
	OSSL_PARAM params[3];
	EVP_PKEY_CTX *ctx;
	EVP_PKEY *key = NULL;

	if (n != WEBPUSH_P256DH_LEN || pt[0] != 0x04)
		return NULL;
	memcpy(point, pt, n);
	params[0] = OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME,
	    group, 0);
	params[1] = OSSL_PARAM_construct_octet_string(OSSL_PKEY_PARAM_PUB_KEY,
	    point, n);
	params[2] = OSSL_PARAM_construct_end();
	ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
	if (ctx == NULL || EVP_PKEY_fromdata_init(ctx) != 1 ||
	    EVP_PKEY_fromdata(ctx, &key, EVP_PKEY_PUBLIC_KEY, params) != 1)
		key = NULL;
	EVP_PKEY_CTX_free(ctx);
	return key;
}

/* The ECDH secret (the x coordinate) of our key and theirs: 0 or -1. */
static int ecdh(EVP_PKEY *ours, EVP_PKEY *theirs,
    unsigned char out[SECRET_LEN])
{
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_pkey(NULL, ours, NULL);
	size_t n = SECRET_LEN;
	int ok;

	ok = ctx != NULL && EVP_PKEY_derive_init(ctx) == 1 &&
	    EVP_PKEY_derive_set_peer(ctx, theirs) == 1 &&
	    EVP_PKEY_derive(ctx, out, &n) == 1 && n == SECRET_LEN;
	EVP_PKEY_CTX_free(ctx);
	return ok ? 0 : -1;
}

/* RFC 8291 section 3.3: IKM = HKDF(auth, ecdh, "WebPush: info\0" |
 * ua_public | as_public, 32); section 3.4: the content key and nonce from
 * IKM and the salt with RFC 8188's infos. The NULs that end the infos are
 * part of them, hence sizeof, not strlen. 0 or -1. */
static int derive(const unsigned char secret[SECRET_LEN],
    const unsigned char *auth, const unsigned char *ua_pub,
    const unsigned char *as_pub, const unsigned char *salt,
    unsigned char cek[KEY_LEN], unsigned char nonce[NONCE_LEN])
{
	static const char info[] = "WebPush: info";
	static const char cek_info[] = "Content-Encoding: aes128gcm";
	static const char nonce_info[] = "Content-Encoding: nonce";
	unsigned char key_info[sizeof(info) + 2 * WEBPUSH_P256DH_LEN];
	unsigned char ikm[SECRET_LEN];
	int rc;

	memcpy(key_info, info, sizeof(info));
	memcpy(key_info + sizeof(info), ua_pub, WEBPUSH_P256DH_LEN);
	memcpy(key_info + sizeof(info) + WEBPUSH_P256DH_LEN, as_pub,
	    WEBPUSH_P256DH_LEN);
	rc = seal_hkdf(secret, SECRET_LEN, auth, WEBPUSH_AUTH_LEN, key_info,
	    sizeof(key_info), ikm, sizeof(ikm)) == 0 &&
	    seal_hkdf(ikm, sizeof(ikm), salt, WEBPUSH_SALT_LEN, cek_info,
	    sizeof(cek_info), cek, KEY_LEN) == 0 &&
	    seal_hkdf(ikm, sizeof(ikm), salt, WEBPUSH_SALT_LEN, nonce_info,
	    sizeof(nonce_info), nonce, NONCE_LEN) == 0 ? 0 : -1;
	seal_wipe(ikm, sizeof(ikm));
	return rc;
}

/* The only record (sequence 0, so the nonce as derived): p, then the 0x02
 * that marks the last record (RFC 8188 section 2), no padding, sealed with
 * AES-128-GCM into out as ciphertext | tag (n + 17 bytes). 0 or -1. */
static int seal_record(const unsigned char cek[KEY_LEN],
    const unsigned char nonce[NONCE_LEN], const void *p, size_t n,
    unsigned char *out)
{
	static const unsigned char last = 0x02;
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	int a = 0, b = 0, c = 0, ok;

	ok = ctx != NULL &&
	    EVP_EncryptInit_ex(ctx, EVP_aes_128_gcm(), NULL, cek, nonce) == 1 &&
	    (n == 0 || EVP_EncryptUpdate(ctx, out, &a, p, (int)n) == 1) &&
	    EVP_EncryptUpdate(ctx, out + a, &b, &last, 1) == 1 &&
	    EVP_EncryptFinal_ex(ctx, out + a + b, &c) == 1 &&
	    (size_t)(a + b + c) == n + 1 &&
	    EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, TAG_LEN,
	    out + n + 1) == 1;
	EVP_CIPHER_CTX_free(ctx);
	return ok ? 0 : -1;
}

/* RFC 8188 section 2.1: salt | rs (32-bit, network order) | idlen |
 * keyid, the keyid being our public point (RFC 8291 section 4). */
static void put_header(unsigned char *h, const unsigned char *salt,
    const unsigned char *as_pub)
{
	memcpy(h, salt, WEBPUSH_SALT_LEN);
	h[16] = WEBPUSH_RECORD_SIZE >> 24 & 0xff;
	h[17] = WEBPUSH_RECORD_SIZE >> 16 & 0xff;
	h[18] = WEBPUSH_RECORD_SIZE >> 8 & 0xff;
	h[19] = WEBPUSH_RECORD_SIZE & 0xff;
	h[20] = WEBPUSH_P256DH_LEN;
	memcpy(h + 21, as_pub, WEBPUSH_P256DH_LEN);
}

int webpush_encrypt_with(EVP_PKEY *as_key,
    const unsigned char salt[WEBPUSH_SALT_LEN], const unsigned char *p256dh,
    size_t p256dhlen, const unsigned char *auth, size_t authlen,
    const void *p, size_t n, struct buf *out)
{
	/* At most 86 + 3993 + 1 + 16: exactly one record of 4096. */
	unsigned char body[WEBPUSH_HEADER_LEN + WEBPUSH_MAX_PLAINTEXT + 1 +
	    TAG_LEN];
	unsigned char as_pub[WEBPUSH_P256DH_LEN], secret[SECRET_LEN];
	unsigned char cek[KEY_LEN], nonce[NONCE_LEN];
	EVP_PKEY *ua_key = NULL;
	int rc = -1;

	if (authlen != WEBPUSH_AUTH_LEN || n > WEBPUSH_MAX_PLAINTEXT ||
	    vapid_point(as_key, as_pub) == -1 ||
	    (ua_key = peer_key(p256dh, p256dhlen)) == NULL)
		goto out;
	if (ecdh(as_key, ua_key, secret) == -1 ||
	    derive(secret, auth, p256dh, as_pub, salt, cek, nonce) == -1)
		goto out;
	put_header(body, salt, as_pub);
	if (seal_record(cek, nonce, p, n, body + WEBPUSH_HEADER_LEN) == -1)
		goto out;
	rc = buf_append(out, body, WEBPUSH_HEADER_LEN + n + 1 + TAG_LEN);
out:
	EVP_PKEY_free(ua_key);
	seal_wipe(secret, sizeof(secret));
	seal_wipe(cek, sizeof(cek));
	seal_wipe(nonce, sizeof(nonce));
	return rc;
}

int webpush_encrypt(const unsigned char *p256dh, size_t p256dhlen,
    const unsigned char *auth, size_t authlen, const void *p, size_t n,
    struct buf *out)
{
	unsigned char salt[WEBPUSH_SALT_LEN];
	EVP_PKEY *as_key;
	int rc = -1;

	/* RFC 8291 section 3.1: a new key pair and salt for every message. */
	if ((as_key = vapid_key_new()) == NULL)
		return -1;
	if (seal_random(salt, sizeof(salt)) == 0)
		rc = webpush_encrypt_with(as_key, salt, p256dh, p256dhlen, auth,
		    authlen, p, n, out);
	EVP_PKEY_free(as_key);
	return rc;
}

/* A part of a parsed URL into out (size n): 1 when there, 0 when absent,
 * -1 when it does not fit. */
static int url_get(CURLU *h, CURLUPart part, char *out, size_t n)
{
	char *v = NULL;
	int rc = 0;

	if (curl_url_get(h, part, &v, 0) == CURLUE_OK) {
		rc = strlen(v) < n ? 1 : -1;
		if (rc == 1)
			memcpy(out, v, strlen(v) + 1);
	}
	curl_free(v);
	return rc;
}

int webpush_origin(const char *endpoint, char *out, size_t n)
{
	CURLU *h = curl_url();
	char host[256], port[8], cred[2];
	int rc = -1, k, has_port;

	/* RFC 8030 section 8: push is https only. libcurl 7.88 reads
	 * "https:///x" as host x; a browser serializes an endpoint as
	 * "https://" and the host, so nothing else passes. */
	if (h == NULL || strncmp(endpoint, "https://", 8) != 0 ||
	    endpoint[8] == '/' ||
	    curl_url_set(h, CURLUPART_URL, endpoint, 0) != CURLUE_OK)
		goto out;
	/* Credentials in a push endpoint are nothing a push service hands
	 * out. libcurl reports a user, "" at least, for any userinfo. */
	if (url_get(h, CURLUPART_USER, cred, sizeof(cred)) != 0 ||
	    url_get(h, CURLUPART_HOST, host, sizeof(host)) != 1 ||
	    (has_port = url_get(h, CURLUPART_PORT, port, sizeof(port))) == -1)
		goto out;
	/* RFC 6454 section 6.2: the default port is left out. */
	if (has_port && strcmp(port, "443") == 0)
		has_port = 0;
	k = snprintf(out, n, "https://%s%s%s", host, has_port ? ":" : "",
	    has_port ? port : "");
	rc = k > 0 && (size_t)k < n ? 0 : -1;
out:
	curl_url_cleanup(h);
	return rc;
}

/* Appends base64url of p (n bytes): 0 or -1. */
static int put_b64(struct buf *b, const void *p, size_t n)
{
	char *s = malloc(4 * ((n + 2) / 3) + 1);
	int rc = -1;

	if (s != NULL)
		rc = buf_append(b, s, seal_b64url_encode(p, n, s));
	free(s);
	return rc;
}

/* Appends base64url of the claims {"aud", "exp", "sub"}: 0 or -1. */
static int put_claims(struct buf *b, const char *aud, long long exp,
    const char *sub)
{
	json_object *o = json_object_new_object();
	const char *s;
	int rc = -1;

	if (o == NULL ||
	    json_object_object_add(o, "aud", json_object_new_string(aud)) ||
	    json_object_object_add(o, "exp", json_object_new_int64(exp)) ||
	    json_object_object_add(o, "sub", json_object_new_string(sub)))
		goto out;
	s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE);
	if (s != NULL)
		rc = put_b64(b, s, strlen(s));
out:
	json_object_put(o);
	return rc;
}

/* ES256 (RFC 7518 section 3.4) of p: JWS wants r | s, 32 bytes each, not
 * the DER that OpenSSL gives. 0 or -1. */
static int es256(EVP_PKEY *key, const void *p, size_t n,
    unsigned char sig[2 * COORD_LEN])
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned char der[128];   /* 72 at most on P-256 */
	const unsigned char *q = der;
	size_t len = sizeof(der);
	ECDSA_SIG *s = NULL;
	const BIGNUM *r, *ss;
	int rc = -1;

	if (ctx == NULL || EVP_DigestSignInit_ex(ctx, NULL, "SHA256", NULL,
	    NULL, key, NULL) != 1 || EVP_DigestSign(ctx, der, &len, p, n) != 1)
		goto out;
	if ((s = d2i_ECDSA_SIG(NULL, &q, (long)len)) == NULL)
		goto out;
	ECDSA_SIG_get0(s, &r, &ss);
	if (BN_bn2binpad(r, sig, COORD_LEN) == COORD_LEN &&
	    BN_bn2binpad(ss, sig + COORD_LEN, COORD_LEN) == COORD_LEN)
		rc = 0;
out:
	ECDSA_SIG_free(s);
	EVP_MD_CTX_free(ctx);
	return rc;
}

/* RFC 8292 section 2.1: a mailto: or https: URI, and nothing a header or
 * a log line would choke on. */
static int contact_ok(const char *sub)
{
	size_t i, n = sub ? strlen(sub) : 0;

	if (n == 0 || n > CONTACT_MAX || (strncmp(sub, "mailto:", 7) != 0 &&
	    strncmp(sub, "https://", 8) != 0))
		return 0;
	for (i = 0; i < n; i++)
		if ((unsigned char)sub[i] <= ' ' || sub[i] == 0x7f)
			return 0;
	return 1;
}

int webpush_vapid(EVP_PKEY *key, const char *endpoint, const char *sub,
    long long now, long lifetime, struct buf *out)
{
	static const char header[] = "{\"typ\":\"JWT\",\"alg\":\"ES256\"}";
	char aud[WEBPUSH_ORIGIN_MAX];
	unsigned char pub[WEBPUSH_P256DH_LEN], sig[2 * COORD_LEN];
	struct buf v;
	size_t start;
	int rc = -1;

	buf_init(&v, 4096);
	if (lifetime <= 0 || lifetime > WEBPUSH_VAPID_MAX_LIFETIME ||
	    !contact_ok(sub) || vapid_point(key, pub) == -1 ||
	    webpush_origin(endpoint, aud, sizeof(aud)) == -1)
		goto out;
	if (buf_puts(&v, "vapid t=") == -1)
		goto out;
	start = v.len;
	if (put_b64(&v, header, sizeof(header) - 1) == -1 ||
	    buf_putc(&v, '.') == -1 ||
	    put_claims(&v, aud, now + lifetime, sub) == -1 ||
	    es256(key, v.data + start, v.len - start, sig) == -1)
		goto out;
	if (buf_putc(&v, '.') == -1 || put_b64(&v, sig, sizeof(sig)) == -1 ||
	    buf_puts(&v, ", k=") == -1 || put_b64(&v, pub, sizeof(pub)) == -1)
		goto out;
	rc = buf_append(out, v.data, v.len);
out:
	buf_free(&v);
	return rc;
}
