#include "vapid.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <openssl/core_names.h>
#include <openssl/pem.h>

#include "seal.h"

int vapid_is_p256(EVP_PKEY *key)
{
	char group[32];
	size_t n;

	return key != NULL && EVP_PKEY_is_a(key, "EC") &&
	    EVP_PKEY_get_utf8_string_param(key, OSSL_PKEY_PARAM_GROUP_NAME,
	    group, sizeof(group), &n) == 1 && strcmp(group, "prime256v1") == 0;
}

int vapid_point(EVP_PKEY *key, unsigned char out[VAPID_POINT_LEN])
{
	size_t n = 0;

	if (!vapid_is_p256(key) || EVP_PKEY_get_octet_string_param(key,
	    OSSL_PKEY_PARAM_PUB_KEY, out, VAPID_POINT_LEN, &n) != 1)
		return -1;
	return n == VAPID_POINT_LEN && out[0] == 0x04 ? 0 : -1;
}

int vapid_public_b64(EVP_PKEY *key, char out[VAPID_PUBLIC_B64_LEN + 1])
{
	unsigned char pt[VAPID_POINT_LEN];

	if (vapid_point(key, pt) == -1)
		return -1;
	return seal_b64url_encode(pt, sizeof(pt), out) == VAPID_PUBLIC_B64_LEN ?
	    0 : -1;
}

EVP_PKEY *vapid_key_new(void)
{
	return EVP_EC_gen("prime256v1");
}

EVP_PKEY *vapid_key_read(const char *path)
{
	FILE *f = fopen(path, "re");
	EVP_PKEY *key;

	if (f == NULL)
		return NULL;
	key = PEM_read_PrivateKey(f, NULL, NULL, NULL);
	fclose(f);
	if (key != NULL && !vapid_is_p256(key)) {
		EVP_PKEY_free(key);
		key = NULL;
	}
	return key;
}

int vapid_key_write(EVP_PKEY *key, const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	FILE *f;
	int ok;

	if (fd == -1)
		return -1;
	if ((f = fdopen(fd, "w")) == NULL) {
		close(fd);
		unlink(path);
		return -1;
	}
	ok = vapid_is_p256(key) &&
	    PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL) == 1 &&
	    fflush(f) == 0 && fsync(fd) == 0;
	if (fclose(f) != 0)
		ok = 0;
	if (!ok)
		unlink(path);
	return ok ? 0 : -1;
}
