/* lines.h: a fuzz input as NUL-terminated fields. The bytes are copied
 * (so that ASan sees the exact end) and cut at every '\n' into at most
 * max fields; fields past the input are "". Free with lines_free. */
#ifndef POSTERN_FUZZ_LINES_H
#define POSTERN_FUZZ_LINES_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct lines {
	char *copy;
	const char **f;
	size_t n;
};

static int lines_split(struct lines *l, const uint8_t *data, size_t size,
    size_t max)
{
	size_t i, k = 0;
	char *p;

	l->copy = malloc(size + 1);
	l->f = malloc(max * sizeof(*l->f));
	l->n = max;
	if (l->copy == NULL || l->f == NULL) {
		free(l->copy);
		free(l->f);
		return -1;
	}
	memcpy(l->copy, data, size);
	l->copy[size] = '\0';
	for (i = 0; i < max; i++)
		l->f[i] = "";
	for (p = l->copy; k < max; k++) {
		l->f[k] = p;
		if ((p = memchr(p, '\n', size - (size_t)(p - l->copy))) == NULL)
			break;
		*p++ = '\0';
	}
	return 0;
}

static void lines_free(struct lines *l)
{
	free(l->copy);
	free(l->f);
}

#endif
