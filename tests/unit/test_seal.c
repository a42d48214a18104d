/* seal: known-answer tests for SHA-256, HMAC and HKDF; AES-256-GCM sealing
 * (round trip, every kind of tampering); base64url; seal_equal. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "buf.h"
#include "seal.h"

/* Hex of n bytes, for comparing against published vectors. */
static void hex(const unsigned char *p, size_t n, char *out)
{
	seal_hex(p, n, out);
}

static void sha256_abc(void **state)
{
	unsigned char h[SEAL_HASH_LEN];
	char x[2 * SEAL_HASH_LEN + 1];

	seal_sha256("abc", 3, h);
	hex(h, sizeof(h), x);
	assert_string_equal(x,
	    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	seal_sha256("", 0, h);
	hex(h, sizeof(h), x);
	assert_string_equal(x,
	    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

/* RFC 4231 test case 1. */
static void hmac_rfc4231_case1(void **state)
{
	unsigned char key[20], mac[SEAL_HASH_LEN];
	char x[2 * SEAL_HASH_LEN + 1];

	memset(key, 0x0b, sizeof(key));
	assert_int_equal(seal_hmac(key, sizeof(key), "Hi There", 8, mac), 0);
	hex(mac, sizeof(mac), x);
	assert_string_equal(x,
	    "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
}

/* RFC 4231 test case 2. */
static void hmac_rfc4231_case2(void **state)
{
	unsigned char mac[SEAL_HASH_LEN];
	char x[2 * SEAL_HASH_LEN + 1];
	const char *data = "what do ya want for nothing?";

	assert_int_equal(seal_hmac("Jefe", 4, data, strlen(data), mac), 0);
	hex(mac, sizeof(mac), x);
	assert_string_equal(x,
	    "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

/* RFC 5869 test case 1. */
static void hkdf_rfc5869_case1(void **state)
{
	unsigned char ikm[22], salt[13], info[10], okm[42];
	char x[2 * sizeof(okm) + 1];
	size_t i;

	memset(ikm, 0x0b, sizeof(ikm));
	for (i = 0; i < sizeof(salt); i++)
		salt[i] = (unsigned char)i;
	for (i = 0; i < sizeof(info); i++)
		info[i] = (unsigned char)(0xf0 + i);
	assert_int_equal(seal_hkdf(ikm, sizeof(ikm), salt, sizeof(salt), info,
	    sizeof(info), okm, sizeof(okm)), 0);
	hex(okm, sizeof(okm), x);
	assert_string_equal(x,
	    "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf"
	    "34007208d5b887185865");
}

static const unsigned char key1[SEAL_KEY_LEN] = {
	1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
	17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32,
};
static const char plain[] = "user@example.com\0correct horse battery staple";
#define PLAIN_LEN (sizeof(plain) - 1)
static const char aad[] = "abcdefghijklmnopqrstuv/creds";

/* Seals plain under key1 and aad into out. */
static void seal_one(struct buf *out)
{
	buf_init(out, 1 << 16);
	assert_int_equal(seal_encrypt(key1, aad, strlen(aad), plain, PLAIN_LEN,
	    out), 0);
	assert_int_equal(out->len, PLAIN_LEN + SEAL_OVERHEAD);
}

static void encrypt_decrypt_round_trip(void **state)
{
	struct buf sealed, opened;

	seal_one(&sealed);
	/* The ciphertext does not contain the plaintext. */
	assert_null(memmem(sealed.data, sealed.len, "correct horse", 13));
	buf_init(&opened, 1 << 16);
	assert_int_equal(seal_decrypt(key1, aad, strlen(aad), sealed.data,
	    sealed.len, &opened), 0);
	assert_int_equal(opened.len, PLAIN_LEN);
	assert_memory_equal(opened.data, plain, PLAIN_LEN);
	buf_free(&sealed);
	buf_free(&opened);
}

static void encrypt_appends_and_decrypt_appends(void **state)
{
	struct buf sealed, opened;
	size_t n;

	buf_init(&sealed, 1 << 16);
	assert_int_equal(buf_puts(&sealed, "prefix"), 0);
	assert_int_equal(seal_encrypt(key1, NULL, 0, "", 0, &sealed), 0);
	assert_int_equal(sealed.len, 6 + SEAL_OVERHEAD);
	assert_memory_equal(sealed.data, "prefix", 6);
	buf_init(&opened, 1 << 16);
	assert_int_equal(buf_puts(&opened, "x"), 0);
	n = sealed.len - 6;
	assert_int_equal(seal_decrypt(key1, NULL, 0, sealed.data + 6, n,
	    &opened), 0);
	assert_string_equal(buf_str(&opened), "x");
	buf_free(&sealed);
	buf_free(&opened);
}

static void decrypt_fails_on_any_flipped_byte(void **state)
{
	struct buf sealed, opened;
	size_t i;
	int bit;

	seal_one(&sealed);
	buf_init(&opened, 1 << 16);
	for (i = 0; i < sealed.len; i++)
		for (bit = 0; bit < 8; bit += 7) {
			sealed.data[i] ^= (char)(1 << bit);
			if (seal_decrypt(key1, aad, strlen(aad), sealed.data,
			    sealed.len, &opened) != -1)
				fail_msg("byte %zu bit %d flipped was accepted",
				    i, bit);
			sealed.data[i] ^= (char)(1 << bit);
			/* A failure leaves out as it was. */
			assert_int_equal(opened.len, 0);
		}
	assert_int_equal(seal_decrypt(key1, aad, strlen(aad), sealed.data,
	    sealed.len, &opened), 0);
	buf_free(&sealed);
	buf_free(&opened);
}

static void decrypt_fails_with_other_aad(void **state)
{
	static const char other[] = "abcdefghijklmnopqrstuv/doc";
	struct buf sealed, opened;

	seal_one(&sealed);
	buf_init(&opened, 1 << 16);
	assert_int_equal(seal_decrypt(key1, other, strlen(other), sealed.data,
	    sealed.len, &opened), -1);
	assert_int_equal(seal_decrypt(key1, aad, strlen(aad) - 1, sealed.data,
	    sealed.len, &opened), -1);
	assert_int_equal(seal_decrypt(key1, NULL, 0, sealed.data, sealed.len,
	    &opened), -1);
	assert_int_equal(opened.len, 0);
	buf_free(&sealed);
	buf_free(&opened);
}

static void decrypt_fails_with_wrong_key(void **state)
{
	unsigned char key2[SEAL_KEY_LEN];
	struct buf sealed, opened;

	memcpy(key2, key1, sizeof(key2));
	key2[31] ^= 0x80;
	seal_one(&sealed);
	buf_init(&opened, 1 << 16);
	assert_int_equal(seal_decrypt(key2, aad, strlen(aad), sealed.data,
	    sealed.len, &opened), -1);
	assert_int_equal(opened.len, 0);
	buf_free(&sealed);
	buf_free(&opened);
}

static void decrypt_fails_when_truncated(void **state)
{
	struct buf sealed, opened;
	size_t n;

	seal_one(&sealed);
	buf_init(&opened, 1 << 16);
	for (n = 0; n < sealed.len; n++)
		if (seal_decrypt(key1, aad, strlen(aad), sealed.data, n,
		    &opened) != -1)
			fail_msg("truncated to %zu bytes was accepted", n);
	assert_int_equal(seal_decrypt(key1, aad, strlen(aad), sealed.data,
	    SEAL_OVERHEAD - 1, &opened), -1);
	assert_int_equal(seal_decrypt(key1, aad, strlen(aad), sealed.data, 0,
	    &opened), -1);
	assert_int_equal(opened.len, 0);
	buf_free(&sealed);
	buf_free(&opened);
}

static void decrypt_fails_when_extended(void **state)
{
	struct buf sealed, opened;

	seal_one(&sealed);
	assert_int_equal(buf_putc(&sealed, 0), 0);
	buf_init(&opened, 1 << 16);
	assert_int_equal(seal_decrypt(key1, aad, strlen(aad), sealed.data,
	    sealed.len, &opened), -1);
	buf_free(&sealed);
	buf_free(&opened);
}

static void same_plaintext_seals_differently(void **state)
{
	struct buf a, b;

	seal_one(&a);
	seal_one(&b);
	assert_int_equal(a.len, b.len);
	/* Different nonces, so different ciphertexts too. */
	assert_memory_not_equal(a.data, b.data, SEAL_NONCE_LEN);
	assert_memory_not_equal(a.data + SEAL_NONCE_LEN,
	    b.data + SEAL_NONCE_LEN, a.len - SEAL_NONCE_LEN);
	buf_free(&a);
	buf_free(&b);
}

static void random_fills(void **state)
{
	unsigned char a[32], b[32], zero[32];

	memset(zero, 0, sizeof(zero));
	memset(a, 0, sizeof(a));
	memset(b, 0, sizeof(b));
	assert_int_equal(seal_random(a, sizeof(a)), 0);
	assert_int_equal(seal_random(b, sizeof(b)), 0);
	assert_memory_not_equal(a, zero, sizeof(a));
	assert_memory_not_equal(a, b, sizeof(a));
}

static void b64url_round_trip_0_to_40(void **state)
{
	unsigned char in[40], out[40];
	char enc[4 * 14 + 1];
	size_t n, m;
	long got;

	for (n = 0; n < sizeof(in); n++)
		in[n] = (unsigned char)(n * 37 + 251);
	for (n = 0; n <= sizeof(in); n++) {
		memset(enc, '!', sizeof(enc));
		m = seal_b64url_encode(in, n, enc);
		/* Unpadded: ceil(4n/3) characters, then a NUL. */
		assert_int_equal(m, (4 * n + 2) / 3);
		assert_int_equal(strlen(enc), m);
		assert_int_equal(strspn(enc, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
		    "abcdefghijklmnopqrstuvwxyz0123456789-_"), m);
		memset(out, 0, sizeof(out));
		got = seal_b64url_decode(enc, m, out, n);
		if (got != (long)n)
			fail_msg("length %zu decoded to %ld", n, got);
		assert_memory_equal(out, in, n);
	}
}

static void b64url_known_values(void **state)
{
	unsigned char out[8];
	char enc[16];

	/* 0xfb 0xff: standard base64 "+/8=", base64url "-_8". */
	seal_b64url_encode("\xfb\xff", 2, enc);
	assert_string_equal(enc, "-_8");
	seal_b64url_encode("foobar", 6, enc);
	assert_string_equal(enc, "Zm9vYmFy");
	seal_b64url_encode("fo", 2, enc);
	assert_string_equal(enc, "Zm8");
	assert_int_equal(seal_b64url_decode("-_8", 3, out, sizeof(out)), 2);
	assert_memory_equal(out, "\xfb\xff", 2);
}

static void b64url_decode_rejects_standard_alphabet(void **state)
{
	unsigned char out[16];

	assert_int_equal(seal_b64url_decode("+_8", 3, out, sizeof(out)), -1);
	assert_int_equal(seal_b64url_decode("-/8", 3, out, sizeof(out)), -1);
	assert_int_equal(seal_b64url_decode("Zm8=", 4, out, sizeof(out)), -1);
	assert_int_equal(seal_b64url_decode("Zg==", 4, out, sizeof(out)), -1);
	assert_int_equal(seal_b64url_decode("Zm 8", 4, out, sizeof(out)), -1);
	/* An embedded NUL is not a digit either. */
	assert_int_equal(seal_b64url_decode("Zm\0" "8", 4, out, sizeof(out)), -1);
}

static void b64url_decode_rejects_length_1_mod_4(void **state)
{
	unsigned char out[16];

	assert_int_equal(seal_b64url_decode("A", 1, out, sizeof(out)), -1);
	assert_int_equal(seal_b64url_decode("Zm9vY", 5, out, sizeof(out)), -1);
	assert_int_equal(seal_b64url_decode("Zm9vYmFyZ", 9, out, sizeof(out)), -1);
	assert_int_equal(seal_b64url_decode("", 0, out, sizeof(out)), 0);
}

static void b64url_decode_rejects_small_output(void **state)
{
	unsigned char out[6];

	memset(out, 0xee, sizeof(out));
	assert_int_equal(seal_b64url_decode("Zm9vYmFy", 8, out, 5), -1);
	/* Nothing past outlen was written. */
	assert_int_equal(out[5], 0xee);
	assert_int_equal(seal_b64url_decode("Zm9vYmFy", 8, out, 6), 6);
	assert_memory_equal(out, "foobar", 6);
	assert_int_equal(seal_b64url_decode("Zm8", 3, out, 1), -1);
	assert_int_equal(seal_b64url_decode("Zm8", 3, out, 0), -1);
}

/* Non-zero pad bits are refused (RFC 4648 section 3.5), so every value
 * has exactly one encoding. */
static void b64url_decode_rejects_nonzero_pad_bits(void **state)
{
	unsigned char out[8];

	assert_int_equal(seal_b64url_decode("Zm8", 3, out, sizeof(out)), 2);
	assert_int_equal(seal_b64url_decode("Zm9", 3, out, sizeof(out)), -1);
	assert_int_equal(seal_b64url_decode("Zg", 2, out, sizeof(out)), 1);
	assert_int_equal(seal_b64url_decode("Zh", 2, out, sizeof(out)), -1);
}

static void equal_compares_every_byte(void **state)
{
	unsigned char a[32], b[32];
	size_t i;

	memset(a, 0x5a, sizeof(a));
	memcpy(b, a, sizeof(b));
	assert_int_equal(seal_equal(a, b, sizeof(a)), 1);
	for (i = 0; i < sizeof(a); i++) {
		b[i] ^= 1;
		assert_int_equal(seal_equal(a, b, sizeof(a)), 0);
		b[i] ^= 1;
	}
	assert_int_equal(seal_equal(a, b, 0), 1);
}

static void hex_is_lower_case(void **state)
{
	char x[9];

	seal_hex((const unsigned char *)"\x00\x9f\xab\xff", 4, x);
	assert_string_equal(x, "009fabff");
}

static void wipe_zeroes(void **state)
{
	char s[8] = "secret!";

	seal_wipe(s, sizeof(s));
	assert_memory_equal(s, "\0\0\0\0\0\0\0\0", 8);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sha256_abc),
		cmocka_unit_test(hmac_rfc4231_case1),
		cmocka_unit_test(hmac_rfc4231_case2),
		cmocka_unit_test(hkdf_rfc5869_case1),
		cmocka_unit_test(encrypt_decrypt_round_trip),
		cmocka_unit_test(encrypt_appends_and_decrypt_appends),
		cmocka_unit_test(decrypt_fails_on_any_flipped_byte),
		cmocka_unit_test(decrypt_fails_with_other_aad),
		cmocka_unit_test(decrypt_fails_with_wrong_key),
		cmocka_unit_test(decrypt_fails_when_truncated),
		cmocka_unit_test(decrypt_fails_when_extended),
		cmocka_unit_test(same_plaintext_seals_differently),
		cmocka_unit_test(random_fills),
		cmocka_unit_test(b64url_round_trip_0_to_40),
		cmocka_unit_test(b64url_known_values),
		cmocka_unit_test(b64url_decode_rejects_standard_alphabet),
		cmocka_unit_test(b64url_decode_rejects_length_1_mod_4),
		cmocka_unit_test(b64url_decode_rejects_small_output),
		cmocka_unit_test(b64url_decode_rejects_nonzero_pad_bits),
		cmocka_unit_test(equal_compares_every_byte),
		cmocka_unit_test(hex_is_lower_case),
		cmocka_unit_test(wipe_zeroes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
