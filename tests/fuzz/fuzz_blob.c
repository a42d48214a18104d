/* Fuzz target for what the blob responder parses (shared/blob.c,
 * included here for its static parsers): the Range header, a 206's
 * Content-Range, the {accountId}/{blobId}/{name} path segments, the
 * accept= and upload types, and the download URL template from the
 * session.
 *
 * Lines of the input: a Range value, a Content-Range value, a path, a
 * type, a URL template. A taken range is ordered, and rebuilt as a header
 * it reads back the same; a range cut from a whole answer stays inside
 * it; decoded segments are NUL-terminated within their buffers; a taken
 * type is printable; a filled template holds no raw space, quote or
 * control character from the values. */
#include "../../shared/blob.c"

#include "lines.h"

static void range(const char *v, long long total)
{
	struct blob_range g, h;
	struct blob_x x;
	char head[96];

	parse_range(v, &g);
	if (!g.asked)
		return;
	if (g.first < 0 || g.suffix < 0 || (g.last >= 0 && g.last < g.first))
		abort();
	range_header(&g, head, sizeof(head));
	parse_range(head + strlen("Range: "), &h);
	if (!h.asked || h.first != g.first || h.last != g.last ||
	    h.suffix != g.suffix)
		abort();
	memset(&x, 0, sizeof(x));
	x.range = g;
	if (range_cut(&x, total) == 0 &&
	    (x.skip < 0 || x.left < 1 || x.skip + x.left > total ||
	    !valid_content_range(x.content_range)))
		abort();
}

static void segments(const char *path)
{
	char account[BLOB_ID_MAX + 2], blob[BLOB_ID_MAX + 2];
	char name[BLOB_NAME_MAX + 1];
	const char *p = path;

	if (next_segment(&p, account, sizeof(account)) == -1 ||
	    next_segment(&p, blob, sizeof(blob)) == -1 ||
	    next_segment(&p, name, sizeof(name)) == -1)
		return;
	if (strnlen(account, sizeof(account)) >= sizeof(account) ||
	    strnlen(blob, sizeof(blob)) >= sizeof(blob) ||
	    strnlen(name, sizeof(name)) >= sizeof(name))
		abort();
	if (valid_id(account) && strpbrk(account, " \r\n\x7f"))
		abort();
}

static void template(const char *tmpl, const char *value)
{
	const struct blob_var vars[] = {
		{ "accountId", value }, { "blobId", value }, { "name", "a b" },
		{ "type", "text/plain" }
	};
	struct buf out;
	size_t i;

	buf_init(&out, BLOB_URL_MAX);
	if (fill_template(&out, tmpl, vars, 4) == 0 && out.len) {
		/* Every raw byte came from the template, none from a value. */
		for (i = 0; i < out.len; i++)
			if (out.data[i] != '\0' && !strchr(tmpl, out.data[i]) &&
			    out.data[i] != '%' &&
			    !strchr("0123456789ABCDEFabcdefghijklmnopqrstuvwxyz"
			    "GHIJKLMNOPQRSTUVWXYZ-._~", out.data[i]))
				abort();
	}
	buf_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lines l;

	if (size == 0 || lines_split(&l, data, size, 5) == -1)
		return 0;
	range(l.f[0], (long long)data[0] * 1000 + 1);
	range(l.f[0], 1LL << 40);
	valid_content_range(l.f[1]);
	segments(l.f[2]);
	if (valid_type(l.f[3]) && strpbrk(l.f[3], "\r\n\"\\"))
		abort();
	template(l.f[4], l.f[2]);
	lines_free(&l);
	return 0;
}

#define FUZZ_CORPUS "blob"
#include "replay.h"
