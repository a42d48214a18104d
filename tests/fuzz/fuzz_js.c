/* Fuzz target for the incremental JSON check the relay and pushd feed
 * request bodies through (shared/js.c).
 *
 * The input is a body. It is checked whole, then fed in pieces whose
 * sizes the input's own bytes pick (as a body arrives from the network):
 * both must give the same verdict, js_parse must agree with it, and an
 * accepted body must be an object that prints and parses back to the
 * same value. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "js.h"

static int check(const char *p, size_t n, const uint8_t *steps, size_t nsteps,
    json_object **root)
{
	struct js_check c;
	size_t off = 0, k, i = 0;
	int rc = 0;

	if (js_check_init(&c) == -1)
		abort();
	while (off < n && rc == 0) {
		k = nsteps ? (size_t)steps[i++ % nsteps] % 17 + 1 : n;
		if (k > n - off)
			k = n - off;
		rc = js_check_feed(&c, p + off, k);
		off += k;
	}
	/* An empty piece changes nothing. */
	if (rc == 0)
		rc = js_check_feed(&c, p, 0);
	if (rc == 0)
		rc = js_check_end(&c);
	if (rc == 0 && root) {
		*root = c.root;
		c.root = NULL;
	}
	js_check_free(&c);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_object *root = NULL, *parsed, *again;
	const char *text;
	char *p;
	int whole, pieces;

	if ((p = malloc(size ? size : 1)) == NULL)
		return 0;
	memcpy(p, data, size);
	whole = check(p, size, NULL, 0, &root);
	pieces = check(p, size, data, size < 8 ? size : 8, NULL);
	parsed = js_parse(p, size);
	if (whole != pieces || (whole == 0) != (parsed != NULL))
		abort();
	if (root) {
		if (!json_object_is_type(root, json_type_object))
			abort();
		text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN);
		again = js_parse(text, strlen(text));
		if (again == NULL || !json_object_equal(again, root))
			abort();
		json_object_put(again);
	}
	json_object_put(root);
	json_object_put(parsed);
	free(p);
	return 0;
}

#define FUZZ_CORPUS "js"
#include "replay.h"
