/* CPU of one Web Push message as pushd makes it: the body encrypted for a
 * subscription (RFC 8291: an ephemeral P-256 key, ECDH, HKDF, AES-128-GCM)
 * and the VAPID header signed (RFC 8292: ES256), against a floor measured
 * in the same run: the same payload sealed with AES-256-GCM alone
 * (seal_encrypt, what postern does for a session), no key agreement and
 * no signature. Built and run by bench/webpush.py:
 *   webpush_cpu [rounds]     prints one JSON line */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <openssl/evp.h>

#include "buf.h"
#include "seal.h"
#include "vapid.h"
#include "webpush.h"

#define PAYLOAD "{\"v\":1,\"from\":{\"name\":\"Erin Example\",\"email\":" \
	"\"erin@example.test\"},\"subject\":\"Invoice 7\",\"folder\":\"Inbox\"," \
	"\"role\":\"inbox\",\"mailboxId\":\"m1\",\"emailId\":\"e1\"," \
	"\"threadId\":\"t1\",\"count\":1,\"unread\":5}"
#define ENDPOINT "https://push.example.test/p/abcdefghijklmnop"

static double cpu_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 2000, i, bad = 0;
	EVP_PKEY *vapid = vapid_key_new(), *ua = vapid_key_new();
	unsigned char p256dh[VAPID_POINT_LEN], auth[WEBPUSH_AUTH_LEN];
	unsigned char key[SEAL_KEY_LEN];
	struct buf out;
	double t0, enc, sig, floor;

	if (!vapid || !ua || vapid_point(ua, p256dh) == -1 ||
	    seal_random(auth, sizeof(auth)) == -1 ||
	    seal_random(key, sizeof(key)) == -1)
		return 1;
	buf_init(&out, 8192);
	t0 = cpu_us();
	for (i = 0; i < rounds; i++, buf_reset(&out))
		bad |= webpush_encrypt(p256dh, sizeof(p256dh), auth, sizeof(auth),
		    PAYLOAD, sizeof(PAYLOAD) - 1, &out);
	enc = (cpu_us() - t0) / rounds;
	t0 = cpu_us();
	for (i = 0; i < rounds; i++, buf_reset(&out))
		bad |= webpush_vapid(vapid, ENDPOINT, "mailto:postmaster@example.test",
		    (long long)time(NULL), WEBPUSH_VAPID_LIFETIME, &out);
	sig = (cpu_us() - t0) / rounds;
	t0 = cpu_us();
	for (i = 0; i < rounds; i++, buf_reset(&out))
		bad |= seal_encrypt(key, NULL, 0, PAYLOAD, sizeof(PAYLOAD) - 1, &out);
	floor = (cpu_us() - t0) / rounds;
	printf("{\"rounds\": %d, \"encrypt_us\": %.1f, \"vapid_us\": %.1f, "
	    "\"floor_us\": %.2f}\n", rounds, enc, sig, floor);
	buf_free(&out);
	EVP_PKEY_free(vapid);
	EVP_PKEY_free(ua);
	return bad ? 1 : 0;
}
