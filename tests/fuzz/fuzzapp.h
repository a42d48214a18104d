/* fuzzapp.h: a struct app for fuzz targets that need the state database
 * (sessions, rate limits, push tokens): opened once per process over a
 * fresh temporary directory, closed and removed at exit. The upstream is
 * the discard port on loopback, which no target contacts. */
#ifndef POSTERN_FUZZ_APP_H
#define POSTERN_FUZZ_APP_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>

#include "app.h"
#include "cfg.h"
#include "log.h"

static struct app *fuzzapp_app;
static char fuzzapp_dir[64];

static void fuzzapp_close(void)
{
	char path[128];

	app_close(fuzzapp_app);
	curl_global_cleanup();
	snprintf(path, sizeof(path), "%s/state.db", fuzzapp_dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/secret", fuzzapp_dir);
	unlink(path);
	rmdir(fuzzapp_dir);
}

static void fuzzapp_set(struct cfg *c, const char *key, const char *value)
{
	char err[256];

	if (cfg_set(c, key, value, err, sizeof(err)) != 0) {
		fprintf(stderr, "fuzzapp: %s\n", err);
		abort();
	}
}

/* Opens a (zeroed, long-lived) app the first time; aborts on failure. */
static void fuzzapp_open(struct app *a)
{
	char path[128], err[512] = "";
	const char *tmp = getenv("TMPDIR");

	if (fuzzapp_app)
		return;
	log_init("fuzz", LOG_ERR);
	snprintf(fuzzapp_dir, sizeof(fuzzapp_dir), "%s/postern-fuzz-XXXXXX",
	    tmp && *tmp && strlen(tmp) < 32 ? tmp : "/tmp");
	if (mkdtemp(fuzzapp_dir) == NULL)
		abort();
	cfg_defaults(&a->cfg);
	fuzzapp_set(&a->cfg, "upstream", "http://127.0.0.1:9");
	snprintf(path, sizeof(path), "%s/state.db", fuzzapp_dir);
	fuzzapp_set(&a->cfg, "state_db", path);
	snprintf(path, sizeof(path), "%s/secret", fuzzapp_dir);
	fuzzapp_set(&a->cfg, "secret_file", path);
	fuzzapp_set(&a->cfg, "trusted_proxies", "127.0.0.1, ::1");
	fuzzapp_set(&a->cfg, "api_budget", "100000");
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK ||
	    app_open_cfg(a, err, sizeof(err)) != 0) {
		fprintf(stderr, "fuzzapp: %s\n", err);
		abort();
	}
	fuzzapp_app = a;
	atexit(fuzzapp_close);
}

#endif
