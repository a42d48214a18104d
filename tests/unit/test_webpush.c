/* webpush: RFC 8291 Appendix A byte for byte, a round trip opened by the
 * test's own decryption over OpenSSL, the inputs it refuses, and a VAPID
 * JWT checked the way a push service checks it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <json-c/json.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/kdf.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>

#include "seal.h"
#include "vapid.h"
#include "webpush.h"

/* RFC 8291 Appendix A, its line breaks removed. */
static const char rfc_plaintext[] = "When I grow up, I want to be a watermelon";
static const char rfc_as_private[] = "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw";
static const char rfc_as_public[] =
    "BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8w"
    "EqKK6PBru3jl7A8";
static const char rfc_ua_private[] = "q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94";
static const char rfc_ua_public[] =
    "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZ"
    "GH6SRpkNtoIAiw4";
static const char rfc_salt[] = "DGv6ra1nlYgDCS1FRnbzlw";
static const char rfc_auth[] = "BTBZMqHH6r4Tts7J_aSIgg";
static const char rfc_body[] =
    "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIg"
    "Dll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVB"
    "St2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN";

/* Decodes base64url into out, asserting it is valid; the length. */
static size_t b64(const char *s, unsigned char *out, size_t n)
{
	long k = seal_b64url_decode(s, strlen(s), out, n);

	assert_true(k >= 0);
	return (size_t)k;
}

/* A P-256 key from its private scalar and, when given, public point. */
static EVP_PKEY *key_from(const unsigned char *d, size_t dlen,
    const unsigned char *pub, size_t publen)
{
	char group[] = "prime256v1";
	unsigned char point[WEBPUSH_P256DH_LEN];
	OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
	OSSL_PARAM *params;
	BIGNUM *bn = d ? BN_bin2bn(d, (int)dlen, NULL) : NULL;
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
	EVP_PKEY *key = NULL;

	memcpy(point, pub, publen);
	assert_non_null(bld);
	assert_int_equal(OSSL_PARAM_BLD_push_utf8_string(bld,
	    OSSL_PKEY_PARAM_GROUP_NAME, group, 0), 1);
	assert_int_equal(OSSL_PARAM_BLD_push_octet_string(bld,
	    OSSL_PKEY_PARAM_PUB_KEY, point, publen), 1);
	if (bn)
		assert_int_equal(OSSL_PARAM_BLD_push_BN(bld,
		    OSSL_PKEY_PARAM_PRIV_KEY, bn), 1);
	params = OSSL_PARAM_BLD_to_param(bld);
	assert_non_null(params);
	assert_int_equal(EVP_PKEY_fromdata_init(ctx), 1);
	assert_int_equal(EVP_PKEY_fromdata(ctx, &key, bn ? EVP_PKEY_KEYPAIR :
	    EVP_PKEY_PUBLIC_KEY, params), 1);
	OSSL_PARAM_free(params);
	OSSL_PARAM_BLD_free(bld);
	BN_free(bn);
	EVP_PKEY_CTX_free(ctx);
	return key;
}

static void point_of(EVP_PKEY *key, unsigned char out[WEBPUSH_P256DH_LEN])
{
	size_t n = 0;

	assert_int_equal(EVP_PKEY_get_octet_string_param(key,
	    OSSL_PKEY_PARAM_PUB_KEY, out, WEBPUSH_P256DH_LEN, &n), 1);
	assert_int_equal(n, WEBPUSH_P256DH_LEN);
}

/* HKDF-SHA256 through OpenSSL's own KDF, not seal_hkdf: the decryption
 * below shares no code with what it checks. */
static void hkdf(const unsigned char *ikm, size_t ikmlen,
    const unsigned char *salt, size_t saltlen, const void *info,
    size_t infolen, unsigned char *out, size_t n)
{
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, NULL);

	assert_non_null(ctx);
	assert_int_equal(EVP_PKEY_derive_init(ctx), 1);
	assert_int_equal(EVP_PKEY_CTX_set_hkdf_md(ctx, EVP_sha256()), 1);
	assert_int_equal(EVP_PKEY_CTX_set1_hkdf_salt(ctx, salt, (int)saltlen), 1);
	assert_int_equal(EVP_PKEY_CTX_set1_hkdf_key(ctx, ikm, (int)ikmlen), 1);
	assert_int_equal(EVP_PKEY_CTX_add1_hkdf_info(ctx, info, (int)infolen), 1);
	assert_int_equal(EVP_PKEY_derive(ctx, out, &n), 1);
	EVP_PKEY_CTX_free(ctx);
}

/* The browser's side of RFC 8291: opens body with the subscription's key
 * and auth secret; the plaintext into out, its length, or -1 when the tag
 * does not verify. Asserts the header is what section 4 requires. */
static long decrypt(const unsigned char *body, size_t n, EVP_PKEY *ua,
    const unsigned char auth[WEBPUSH_AUTH_LEN], unsigned char *out)
{
	unsigned char ua_pub[WEBPUSH_P256DH_LEN], secret[32], ikm[32];
	unsigned char info[14 + 2 * WEBPUSH_P256DH_LEN], cek[16], nonce[12];
	const unsigned char *ct = body + WEBPUSH_HEADER_LEN;
	size_t len = sizeof(secret), ctlen = n - WEBPUSH_HEADER_LEN - 16;
	EVP_PKEY *as;
	EVP_PKEY_CTX *dctx;
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	int a = 0, b = 0, ok;

	assert_true(n >= WEBPUSH_HEADER_LEN + 17);
	assert_memory_equal(body + 16, "\x00\x00\x10\x00\x41", 5);
	assert_int_equal(body[21], 0x04);
	as = key_from(NULL, 0, body + 21, WEBPUSH_P256DH_LEN);
	dctx = EVP_PKEY_CTX_new(ua, NULL);
	assert_int_equal(EVP_PKEY_derive_init(dctx), 1);
	assert_int_equal(EVP_PKEY_derive_set_peer(dctx, as), 1);
	assert_int_equal(EVP_PKEY_derive(dctx, secret, &len), 1);
	point_of(ua, ua_pub);
	memcpy(info, "WebPush: info\0", 14);
	memcpy(info + 14, ua_pub, WEBPUSH_P256DH_LEN);
	memcpy(info + 14 + WEBPUSH_P256DH_LEN, body + 21, WEBPUSH_P256DH_LEN);
	hkdf(secret, 32, auth, WEBPUSH_AUTH_LEN, info, sizeof(info), ikm, 32);
	hkdf(ikm, 32, body, 16, "Content-Encoding: aes128gcm\0", 28, cek, 16);
	hkdf(ikm, 32, body, 16, "Content-Encoding: nonce\0", 24, nonce, 12);
	ok = EVP_DecryptInit_ex(c, EVP_aes_128_gcm(), NULL, cek, nonce) == 1 &&
	    EVP_DecryptUpdate(c, out, &a, ct, (int)ctlen) == 1 &&
	    EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_TAG, 16,
	    (void *)(uintptr_t)(ct + ctlen)) == 1 &&
	    EVP_DecryptFinal_ex(c, out + a, &b) == 1;
	EVP_CIPHER_CTX_free(c);
	EVP_PKEY_CTX_free(dctx);
	EVP_PKEY_free(as);
	if (!ok)
		return -1;
	/* One record, the last: no padding, then the 0x02 delimiter. */
	assert_int_equal(a + b, ctlen);
	assert_int_equal(out[ctlen - 1], 0x02);
	return (long)ctlen - 1;
}

static EVP_PKEY *rfc_as_key(void)
{
	unsigned char d[32], pub[WEBPUSH_P256DH_LEN];

	assert_int_equal(b64(rfc_as_private, d, sizeof(d)), 32);
	assert_int_equal(b64(rfc_as_public, pub, sizeof(pub)), 65);
	return key_from(d, 32, pub, 65);
}

static void test_rfc8291_vector(void **state)
{
	unsigned char salt[16], ua[65], auth[16], want[256], d[32], got[256];
	char enc[512];
	size_t wantlen = b64(rfc_body, want, sizeof(want));
	EVP_PKEY *as = rfc_as_key(), *uakey;
	struct buf out;

	assert_int_equal(b64(rfc_salt, salt, sizeof(salt)), 16);
	assert_int_equal(b64(rfc_ua_public, ua, sizeof(ua)), 65);
	assert_int_equal(b64(rfc_auth, auth, sizeof(auth)), 16);
	buf_init(&out, 1 << 16);
	assert_int_equal(webpush_encrypt_with(as, salt, ua, 65, auth, 16,
	    rfc_plaintext, strlen(rfc_plaintext), &out), 0);
	assert_int_equal(out.len, wantlen);
	assert_memory_equal(out.data, want, wantlen);
	seal_b64url_encode(out.data, out.len, enc);
	assert_string_equal(enc, rfc_body);
	/* The test's decryption opens the RFC's body with the RFC's keys. */
	assert_int_equal(b64(rfc_ua_private, d, sizeof(d)), 32);
	uakey = key_from(d, 32, ua, 65);
	assert_int_equal(decrypt(want, wantlen, uakey, auth, got),
	    strlen(rfc_plaintext));
	assert_memory_equal(got, rfc_plaintext, strlen(rfc_plaintext));
	EVP_PKEY_free(uakey);
	EVP_PKEY_free(as);
	buf_free(&out);
}

/* Encrypts n bytes to a fresh subscription and opens them again. */
static void round_trip(size_t n)
{
	static unsigned char p[WEBPUSH_MAX_PLAINTEXT], got[4096];
	unsigned char auth[16], ua_pub[65];
	EVP_PKEY *ua = vapid_key_new();
	struct buf one, two;

	assert_non_null(ua);
	point_of(ua, ua_pub);
	assert_int_equal(seal_random(auth, sizeof(auth)), 0);
	assert_int_equal(seal_random(p, n), 0);
	buf_init(&one, 1 << 16);
	buf_init(&two, 1 << 16);
	assert_int_equal(webpush_encrypt(ua_pub, 65, auth, 16, p, n, &one), 0);
	assert_int_equal(one.len, WEBPUSH_HEADER_LEN + n + 17);
	assert_true(one.len <= WEBPUSH_RECORD_SIZE);
	assert_int_equal(decrypt((unsigned char *)one.data, one.len, ua, auth,
	    got), n);
	assert_memory_equal(got, p, n);
	/* A new key and salt each time: the same message never repeats. */
	assert_int_equal(webpush_encrypt(ua_pub, 65, auth, 16, p, n, &two), 0);
	assert_memory_not_equal(one.data, two.data, WEBPUSH_SALT_LEN);
	assert_memory_not_equal(one.data + 21, two.data + 21, 65);
	/* A changed byte of the tag is refused. */
	one.data[one.len - 1] ^= 1;
	assert_int_equal(decrypt((unsigned char *)one.data, one.len, ua, auth,
	    got), -1);
	buf_free(&one);
	buf_free(&two);
	EVP_PKEY_free(ua);
}

static void test_round_trip(void **state)
{
	round_trip(0);
	round_trip(strlen(rfc_plaintext));
	round_trip(WEBPUSH_MAX_PLAINTEXT);
}

static void test_bad_inputs(void **state)
{
	static unsigned char big[WEBPUSH_MAX_PLAINTEXT + 1];
	unsigned char salt[16], ua[66], auth[17], bad[65];
	EVP_PKEY *as = rfc_as_key();
	struct buf out;

	b64(rfc_salt, salt, sizeof(salt));
	b64(rfc_ua_public, ua, sizeof(ua));
	b64(rfc_auth, auth, sizeof(auth));
	ua[65] = 0;
	auth[16] = 0;
	buf_init(&out, 1 << 16);
	/* p256dh: a byte short, a byte long, compressed, off the curve. */
	assert_int_equal(webpush_encrypt_with(as, salt, ua, 64, auth, 16,
	    "x", 1, &out), -1);
	assert_int_equal(webpush_encrypt_with(as, salt, ua, 66, auth, 16,
	    "x", 1, &out), -1);
	memcpy(bad, ua, 65);
	bad[0] = 0x02;
	assert_int_equal(webpush_encrypt_with(as, salt, bad, 65, auth, 16,
	    "x", 1, &out), -1);
	/* The hybrid form (0x06 even y, 0x07 odd) of the same point. */
	bad[0] = 0x06 | (ua[64] & 1);
	assert_int_equal(webpush_encrypt_with(as, salt, bad, 65, auth, 16,
	    "x", 1, &out), -1);
	bad[0] = 0x04;
	bad[64] ^= 1;
	assert_int_equal(webpush_encrypt_with(as, salt, bad, 65, auth, 16,
	    "x", 1, &out), -1);
	assert_int_equal(webpush_encrypt(bad, 65, auth, 16, "x", 1, &out), -1);
	/* auth: 15 and 17 bytes. */
	assert_int_equal(webpush_encrypt_with(as, salt, ua, 65, auth, 15,
	    "x", 1, &out), -1);
	assert_int_equal(webpush_encrypt_with(as, salt, ua, 65, auth, 17,
	    "x", 1, &out), -1);
	/* One byte over what one record of 4096 holds. */
	assert_int_equal(webpush_encrypt_with(as, salt, ua, 65, auth, 16,
	    big, sizeof(big), &out), -1);
	assert_int_equal(webpush_encrypt(ua, 65, auth, 16, big, sizeof(big),
	    &out), -1);
	assert_int_equal(out.len, 0);
	/* The good inputs beside them pass, so each refusal is its own. */
	assert_int_equal(webpush_encrypt_with(as, salt, ua, 65, auth, 16,
	    big, sizeof(big) - 1, &out), 0);
	assert_int_equal(out.len, WEBPUSH_RECORD_SIZE);
	buf_free(&out);
	EVP_PKEY_free(as);
}

static void test_origin(void **state)
{
	char o[WEBPUSH_ORIGIN_MAX];

	assert_int_equal(webpush_origin("https://push.example.net:8443/x/y",
	    o, sizeof(o)), 0);
	assert_string_equal(o, "https://push.example.net:8443");
	assert_int_equal(webpush_origin(
	    "https://fcm.googleapis.com/fcm/send/abc:def?x=1&y=2#frag",
	    o, sizeof(o)), 0);
	assert_string_equal(o, "https://fcm.googleapis.com");
	assert_int_equal(webpush_origin("https://push.example.net:443/x",
	    o, sizeof(o)), 0);
	assert_string_equal(o, "https://push.example.net");
	assert_int_equal(webpush_origin("http://push.example.net/x", o,
	    sizeof(o)), -1);
	assert_int_equal(webpush_origin("ftp://push.example.net/x", o,
	    sizeof(o)), -1);
	assert_int_equal(webpush_origin("https:///x", o, sizeof(o)), -1);
	assert_int_equal(webpush_origin("https://:8443/x", o, sizeof(o)), -1);
	assert_int_equal(webpush_origin("HTTPS://push.example.net/x", o,
	    sizeof(o)), -1);
	assert_int_equal(webpush_origin("https://", o, sizeof(o)), -1);
	assert_int_equal(webpush_origin("push.example.net/x", o, sizeof(o)),
	    -1);
	assert_int_equal(webpush_origin("", o, sizeof(o)), -1);
	assert_int_equal(webpush_origin("https://u@push.example.net/x", o,
	    sizeof(o)), -1);
	assert_int_equal(webpush_origin("https://:p@push.example.net/x", o,
	    sizeof(o)), -1);
	/* "https://push.example.net" is 24 bytes and its NUL. */
	assert_int_equal(webpush_origin("https://push.example.net/x", o, 24),
	    -1);
	assert_int_equal(webpush_origin("https://push.example.net/x", o, 25),
	    0);
}

/* Splits "vapid t=H.C.S, k=K" into its pieces (pointers into v, which is
 * cut at each separator). */
static void split_vapid(char *v, char **h, char **c, char **s, char **k)
{
	assert_int_equal(strncmp(v, "vapid t=", 8), 0);
	*h = v + 8;
	assert_non_null(*c = strchr(*h, '.'));
	*(*c)++ = '\0';
	assert_non_null(*s = strchr(*c, '.'));
	*(*s)++ = '\0';
	assert_non_null(*k = strstr(*s, ", k="));
	**k = '\0';
	*k += 4;
}

/* Verifies an ES256 signature (r | s) over p with the public point pub,
 * the way a push service does: 1 when it holds. */
static int es256_verify(const unsigned char *pub, const char *p, size_t n,
    const unsigned char sig[64])
{
	EVP_PKEY *key = key_from(NULL, 0, pub, 65);
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	ECDSA_SIG *s = ECDSA_SIG_new();
	unsigned char *der = NULL;
	int len, ok;

	assert_int_equal(ECDSA_SIG_set0(s, BN_bin2bn(sig, 32, NULL),
	    BN_bin2bn(sig + 32, 32, NULL)), 1);
	len = i2d_ECDSA_SIG(s, &der);
	assert_true(len > 0);
	assert_int_equal(EVP_DigestVerifyInit_ex(ctx, NULL, "SHA256", NULL,
	    NULL, key, NULL), 1);
	ok = EVP_DigestVerify(ctx, der, (size_t)len, (const unsigned char *)p,
	    n) == 1;
	OPENSSL_free(der);
	ECDSA_SIG_free(s);
	EVP_MD_CTX_free(ctx);
	EVP_PKEY_free(key);
	return ok;
}

/* Decodes a base64url JSON part and parses it. */
static json_object *json_part(const char *s)
{
	unsigned char raw[1024];
	size_t n = b64(s, raw, sizeof(raw) - 1);
	json_object *o;

	raw[n] = '\0';
	o = json_tokener_parse((char *)raw);
	assert_non_null(o);
	return o;
}

static const char *str_of(json_object *o, const char *k)
{
	json_object *v;

	assert_true(json_object_object_get_ex(o, k, &v));
	assert_true(json_object_is_type(v, json_type_string));
	return json_object_get_string(v);
}

static void test_vapid(void **state)
{
	unsigned char sig[64], pub[65], mine[65];
	char *h, *c, *s, *k, *v;
	EVP_PKEY *key = vapid_key_new();
	json_object *hdr, *claims, *exp;
	struct buf out;

	buf_init(&out, 1 << 16);
	assert_int_equal(webpush_vapid(key,
	    "https://push.example.net:8443/x/y?z=1", "mailto:ops@example.org",
	    1700000000, WEBPUSH_VAPID_LIFETIME, &out), 0);
	v = strdup(buf_str(&out));
	split_vapid(v, &h, &c, &s, &k);
	hdr = json_part(h);
	assert_string_equal(str_of(hdr, "typ"), "JWT");
	assert_string_equal(str_of(hdr, "alg"), "ES256");
	claims = json_part(c);
	assert_string_equal(str_of(claims, "aud"),
	    "https://push.example.net:8443");
	assert_string_equal(str_of(claims, "sub"), "mailto:ops@example.org");
	assert_true(json_object_object_get_ex(claims, "exp", &exp));
	assert_true(json_object_is_type(exp, json_type_int));
	assert_int_equal(json_object_get_int64(exp), 1700000000 + 43200);
	/* k is our public key; the signature verifies over "H.C" and over
	 * nothing else. */
	assert_int_equal(b64(k, pub, sizeof(pub)), 65);
	point_of(key, mine);
	assert_memory_equal(pub, mine, 65);
	assert_int_equal(b64(s, sig, sizeof(sig)), 64);
	c[-1] = '.';
	assert_true(es256_verify(pub, h, strlen(h), sig));
	h[strlen(h) - 1] ^= 1;
	assert_false(es256_verify(pub, h, strlen(h), sig));
	json_object_put(hdr);
	json_object_put(claims);
	free(v);
	buf_free(&out);
	EVP_PKEY_free(key);
}

static void test_vapid_refused(void **state)
{
	EVP_PKEY *key = vapid_key_new();
	const char *ep = "https://push.example.net/x";
	const char *sub = "https://example.org/contact";
	struct buf out;

	buf_init(&out, 1 << 16);
	assert_int_equal(webpush_vapid(key, ep, sub, 0, 0, &out), -1);
	assert_int_equal(webpush_vapid(key, ep, sub, 0, 86401, &out), -1);
	assert_int_equal(webpush_vapid(key, ep, "ops@example.org", 0, 60,
	    &out), -1);
	assert_int_equal(webpush_vapid(key, ep, "mailto:a b@example.org", 0,
	    60, &out), -1);
	assert_int_equal(webpush_vapid(key, "http://push.example.net/x", sub,
	    0, 60, &out), -1);
	assert_int_equal(webpush_vapid(key, "https:///x", sub, 0, 60, &out),
	    -1);
	assert_int_equal(webpush_vapid(NULL, ep, sub, 0, 60, &out), -1);
	assert_int_equal(out.len, 0);
	assert_int_equal(webpush_vapid(key, ep, sub, 0, 86400, &out), 0);
	buf_free(&out);
	EVP_PKEY_free(key);
}

static void test_key_file(void **state)
{
	char dir[] = "webpush-XXXXXX", path[64];
	unsigned char a[65], b[65];
	EVP_PKEY *key = vapid_key_new(), *back;
	struct stat st;
	FILE *f;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/vapid.pem", dir);
	assert_int_equal(vapid_key_write(key, path), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	/* Never over an existing key. */
	assert_int_equal(vapid_key_write(key, path), -1);
	assert_non_null(back = vapid_key_read(path));
	point_of(key, a);
	point_of(back, b);
	assert_memory_equal(a, b, 65);
	assert_null(vapid_key_read(dir));
	unlink(path);
	/* A key on another curve is refused, on reading and on writing. */
	EVP_PKEY_free(back);
	assert_non_null(back = EVP_EC_gen("secp384r1"));
	assert_int_equal(vapid_key_write(back, path), -1);
	assert_non_null(f = fopen(path, "w"));
	assert_int_equal(PEM_write_PrivateKey(f, back, NULL, NULL, 0, NULL,
	    NULL), 1);
	assert_int_equal(fclose(f), 0);
	assert_null(vapid_key_read(path));
	EVP_PKEY_free(back);
	EVP_PKEY_free(key);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rfc8291_vector),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_bad_inputs),
		cmocka_unit_test(test_origin),
		cmocka_unit_test(test_vapid),
		cmocka_unit_test(test_vapid_refused),
		cmocka_unit_test(test_key_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
