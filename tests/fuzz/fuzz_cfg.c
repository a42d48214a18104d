/* Fuzz target for the configuration reader (shared/cfg.c).
 *
 * The input is a postern.conf, read from memory through cfg_load_file.
 * Whatever it says, the reader must either accept it, leaving a
 * configuration that passes cfg_check again and whose bounded values are
 * in bounds, or refuse it with a "name:line: what" message; and
 * cfg_free must release all of it (LeakSanitizer). Each line is also
 * given to the value parsers alone. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg.h"
#include "lines.h"

static void values(const char *s)
{
	long d;
	long long z;
	int b;

	if (cfg_parse_duration(s, &d) == 0 && d < 0)
		abort();
	if (cfg_parse_size(s, &z) == 0 && z < 0)
		abort();
	if (cfg_parse_bool(s, &b) == 0 && b != 0 && b != 1)
		abort();
}

static void accepted(const struct cfg *c)
{
	char err[512];

	if (cfg_check(c, err, sizeof(err)) != 0 || c->upstream == NULL ||
	    strncmp(c->upstream, "http", 4) ||
	    c->n_trusted_proxies < 0 || c->n_trusted_proxies > CFG_MAX_PROXIES ||
	    c->max_request < 0 || c->upload_max < 0 || c->session_idle < 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512] = "";
	struct lines l;
	struct cfg c;
	size_t i;
	FILE *f;
	int rc;

	if (size == 0 || lines_split(&l, data, size, 8) == -1)
		return 0;
	for (i = 0; i < l.n; i++)
		values(l.f[i]);
	lines_free(&l);
	if ((f = fmemopen((void *)(uintptr_t)data, size, "r")) == NULL)
		return 0;
	cfg_defaults(&c);
	rc = cfg_load_file(&c, f, "fuzz.conf", err, sizeof(err));
	fclose(f);
	if (rc == 0)
		accepted(&c);
	else if (err[0] == '\0')
		abort();
	cfg_free(&c);
	return 0;
}

#define FUZZ_CORPUS "cfg"
#include "replay.h"
