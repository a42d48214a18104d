/* Fuzz target for blob labelling (shared/dispo.c): the content type a
 * mail server gives and the filename a sender chose.
 *
 * The input's first line is a type, the rest a filename. A cleaned type
 * is bounded with its media type lower-cased, and cleaning it again
 * changes nothing; a cleaned name is non-empty valid UTF-8 within DISPO_NAME_MAX bytes with
 * no control character, quote, slash or backslash, and cleaning it again
 * changes nothing; the header built from it holds no CR, LF or NUL. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "dispo.h"

/* Valid UTF-8 without C0/C1 controls, DEL, '"', '/', '\\'. */
static int clean_bytes(const unsigned char *s)
{
	size_t k, i;
	unsigned cp;

	while (*s) {
		if (*s < 0x80) {
			if (*s < 0x20 || *s == 0x7f || strchr("\"/\\", *s))
				return 0;
			s++;
			continue;
		}
		k = *s >= 0xf0 ? 3 : *s >= 0xe0 ? 2 : *s >= 0xc0 ? 1 : 0;
		if (k == 0 || *s > 0xf4 || *s == 0xc0 || *s == 0xc1)
			return 0;
		cp = *s & (0x3f >> k);
		for (i = 1; i <= k; i++) {
			if ((s[i] & 0xc0) != 0x80)
				return 0;
			cp = cp << 6 | (s[i] & 0x3f);
		}
		if ((k == 2 && cp < 0x800) || (k == 3 && cp < 0x10000) ||
		    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) ||
		    (cp >= 0x80 && cp < 0xa0))
			return 0;
		s += k + 1;
	}
	return 1;
}

static void type(const char *t)
{
	char a[DISPO_TYPE_MAX], b[DISPO_TYPE_MAX];
	size_t i, n;

	dispo_type(t, a);
	n = strnlen(a, sizeof(a));
	if (n == 0 || n >= sizeof(a))
		abort();
	/* The media type is lower-cased; a charset keeps its case. */
	for (i = 0; i < n; i++)
		if ((i < strcspn(a, ";") && a[i] >= 'A' && a[i] <= 'Z') ||
		    a[i] < 0x20)
			abort();
	dispo_type(a, b);
	if (strcmp(a, b))
		abort();
	dispo_inline_ok(a);
}

static void name(const char *s)
{
	char a[DISPO_NAME_MAX + 1], b[DISPO_NAME_MAX + 1];
	struct buf h;
	size_t n;

	dispo_clean_name(s, a);
	n = strnlen(a, sizeof(a));
	if (n == 0 || n > DISPO_NAME_MAX || !clean_bytes((unsigned char *)a))
		abort();
	dispo_clean_name(a, b);
	if (strcmp(a, b))
		abort();
	buf_init(&h, 4096);
	if (dispo_header(&h, s[0] & 1, a) != 0 ||
	    strpbrk(buf_str(&h), "\r\n") != NULL || strlen(buf_str(&h)) != h.len)
		abort();
	buf_free(&h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s, *nl;

	if ((s = malloc(size + 1)) == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	if ((nl = strchr(s, '\n')) != NULL)
		*nl = '\0';
	type(s);
	name(nl ? nl + 1 : s);
	free(s);
	return 0;
}

#define FUZZ_CORPUS "dispo"
#include "replay.h"
