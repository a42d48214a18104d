#include "blob.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dispo.h"
#include "fault.h"
#include "image.h"
#include "js.h"
#include "log.h"
#include "pct.h"
#include "sess.h"
#include "upstream.h"

#define BLOB_ID_MAX 255          /* a JMAP Id is at most 255 octets */
#define BLOB_NAME_MAX 1024       /* decoded bytes of {name} */
#define BLOB_URL_MAX 8192
#define BLOB_DOC_MAX (1 << 24)   /* as the session store allows */
#define BLOB_ANSWER_MAX (1 << 20)  /* the JSON answer to an upload */
#define BLOB_NUM_MAX 18          /* digits of a range bound */

#define TOO_LARGE "The file is larger than the upload limit."
#define NO_FILE "No such file."

/* One plain byte range: first-last, first- (last -1) or -suffix. */
struct blob_range {
	int asked;
	long long first, last, suffix;
};

/* One transfer, either way. */
struct blob_x {
	struct req *r;
	struct fault fault;
	char name[DISPO_NAME_MAX + 1];
	int want_inline;
	struct blob_range range;
	int cutting;               /* serving a range out of a whole answer */
	long long skip, left;
	int done;                  /* the range is out: stopping is no error */
	char content_range[96];
	struct buf answer;         /* an upload's JSON answer, checked whole */
	char answer_type[128];
};

struct blob_var {
	const char *name, *value;
};

/* A decoded Id: 1 to 255 visible ASCII characters. */
static int valid_id(const char *s)
{
	size_t n = strlen(s), i;

	if (n == 0 || n > BLOB_ID_MAX)
		return 0;
	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f)
			return 0;
	return 1;
}

/* A media type we pass on (upload type, accept=): type/subtype and
 * parameters, printable ASCII that can stand in a header. */
static int valid_type(const char *s)
{
	size_t n = strlen(s);

	return n >= 3 && n < DISPO_TYPE_MAX && strchr(s, '/') != NULL &&
	    strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789!#$&^_.+-/;= ") == n;
}

/* Decodes the path segment at *p into out and steps past it. 0 or -1. */
static int next_segment(const char **p, char *out, size_t n)
{
	size_t len = strcspn(*p, "/");

	if (pct_decode(*p, len, out, n) < 0)
		return -1;
	*p += len;
	if (**p == '/')
		(*p)++;
	return 0;
}

/* Expands a URI template from the session (RFC 6570 level 1): each {var}
 * becomes its value, percent-encoded; an unknown one becomes nothing. */
static int fill_template(struct buf *out, const char *tmpl,
    const struct blob_var *vars, size_t nvars)
{
	const char *p, *end;
	size_t i, len;

	for (p = tmpl; *p; p = end + 1) {
		if (*p != '{' || (end = strchr(p, '}')) == NULL) {
			if (buf_putc(out, *p) == -1)
				return -1;
			end = p;
			continue;
		}
		len = (size_t)(end - p - 1);
		for (i = 0; i < nvars; i++)
			if (strlen(vars[i].name) == len &&
			    !strncmp(p + 1, vars[i].name, len) &&
			    pct_encode(out, vars[i].value, strlen(vars[i].value),
			    PCT_UNRESERVED) == -1)
				return -1;
	}
	return 0;
}

/* 1 when account is one of the session's accounts, 0 when not, -1 when
 * the session document cannot be read. Asked before the JMAP server is,
 * so that one account's session never names another's blobs upstream. */
static int own_account(struct req *r, const char *account)
{
	struct buf doc;
	json_object *o = NULL, *accounts;
	int rc = -1;

	buf_init(&doc, BLOB_DOC_MAX);
	if (sess_doc(r->app, r->sess, &doc) == -1 ||
	    (o = js_parse(doc.data, doc.len)) == NULL)
		goto out;
	accounts = js_obj(o, "accounts");
	rc = accounts != NULL &&
	    json_object_object_get_ex(accounts, account, NULL);
out:
	json_object_put(o);
	buf_free(&doc);
	return rc;
}

/* Answers 404 or 500 unless account is the session's. 0 when it is. */
static int check_account(struct req *r, const char *account)
{
	int rc = own_account(r, account);

	if (rc == 1)
		return 0;
	if (rc == 0)
		req_error(r, ERR_NOT_FOUND, "No such account in this session.");
	else
		req_error(r, ERR_INTERNAL, "The session could not be read.");
	return -1;
}

/* Answers what went wrong, unless the answer is already under way (then
 * the browser sees a cut body, which is all that can be done). */
static void blob_finish(struct blob_x *x, int res)
{
	if (x->fault.err == ERR_RANGE && x->content_range[0])
		req_header(x->r, "Content-Range", x->content_range);
	if (x->fault.err != ERR_NONE || !x->done)
		fault_finish(x->r, &x->fault, res);
}

/* Records the JMAP server's answer as the transfer's fault. */
static void blob_fault(struct blob_x *x, enum err e)
{
	fault_set(&x->fault, e, e == ERR_TOO_LARGE ? TOO_LARGE :
	    e == ERR_NOT_FOUND ? NO_FILE : NULL);
}

/* --- upload ---------------------------------------------------------------- */

/* Feeds the browser's body to libcurl, counting it against the cap: a
 * body without a declared length is stopped when it passes, unfinished,
 * so the JMAP server never stores it. */
static size_t upload_read(char *p, size_t n, void *ctx)
{
	struct blob_x *x = ctx;

	return fault_read_body(x->r, &x->fault, p, n, x->r->app->cfg.upload_max,
	    TOO_LARGE);
}

static int is_json_type(const char *t)
{
	return !strncmp(t, "application/json", 16) ||
	    !strncmp(t, "application/problem+json", 24);
}

/* The JMAP server's answer to an upload: its JSON passes, once whole and
 * parsed (it is small), so that a cut or garbled one is a clean 502; its
 * errors become ours. */
static int upload_head(const struct up_head *h, void *ctx)
{
	struct blob_x *x = ctx;

	x->fault.status = h->status;
	if (h->status == 401)
		blob_fault(x, ERR_SESSION_REFUSED);
	else if (h->status == 413)
		blob_fault(x, ERR_TOO_LARGE);
	else if (h->status == 403 || h->status == 404)
		blob_fault(x, ERR_NOT_FOUND);
	else if (h->status < 200 || h->status >= 500 ||
	    req_status_text((int)h->status) == NULL ||
	    !is_json_type(h->content_type) || h->content_encoding[0])
		blob_fault(x, ERR_UPSTREAM);
	if (x->fault.err != ERR_NONE)
		return -1;
	if (h->status >= 200 && h->status < 300)
		sess_accepted(x->r->sess, x->r->now);
	snprintf(x->answer_type, sizeof(x->answer_type), "%s", h->content_type);
	return 0;
}

static int upload_body(const char *p, size_t n, void *ctx)
{
	struct blob_x *x = ctx;

	return buf_append(&x->answer, p, n);
}

/* Passes the collected answer on when it is one JSON object. */
static void upload_answer(struct blob_x *x)
{
	json_object *o = js_parse(buf_str(&x->answer), x->answer.len);

	if (o == NULL || !json_object_is_type(o, json_type_object)) {
		blob_fault(x, ERR_UPSTREAM);
		blob_finish(x, UP_OK);
	} else {
		req_status(x->r, (int)x->fault.status);
		req_header(x->r, "Content-Type", x->answer_type);
		req_write(x->r, x->answer.data, x->answer.len);
	}
	json_object_put(o);
}

/* The type the blob is stored under: the browser's when it is sane. */
static const char *upload_type(struct req *r)
{
	const char *t = req_param(r, "CONTENT_TYPE");

	return t && valid_type(t) ? t : "application/octet-stream";
}

static void upload_call(struct req *r, struct blob_x *x, const char *url)
{
	struct up_call c;
	int res;

	memset(&c, 0, sizeof(c));
	c.method = "POST";
	c.url = url;
	c.user = r->sess->user;
	c.pass = r->sess->pass;
	c.content_type = upload_type(r);
	c.body_len = r->content_length;
	c.read = upload_read;
	c.on_head = upload_head;
	c.on_body = upload_body;
	c.ctx = x;
	c.max_body = BLOB_ANSWER_MAX;
	buf_init(&x->answer, BLOB_ANSWER_MAX);
	res = upstream_call(r->app->up, &c);
	if (res == UP_OK && x->fault.err == ERR_NONE)
		upload_answer(x);
	else
		blob_finish(x, res);
	buf_free(&x->answer);
}

void blob_upload(struct req *r)
{
	const char *p = r->path + strlen("/api/upload/");
	char account[BLOB_ID_MAX + 1];
	struct blob_var var[1];
	struct blob_x x;
	struct buf url;

	buf_init(&url, BLOB_URL_MAX);
	if (next_segment(&p, account, sizeof(account)) == -1 || *p ||
	    !valid_id(account)) {
		req_error(r, ERR_NOT_FOUND, "No such upload address.");
		goto out;
	}
	if (r->content_length > r->app->cfg.upload_max) {
		req_error(r, ERR_TOO_LARGE, TOO_LARGE);
		goto out;
	}
	if (check_account(r, account) == -1)
		goto out;
	var[0].name = "accountId";
	var[0].value = account;
	if (fill_template(&url, r->sess->upload_url, var, 1) == -1 ||
	    url.len == 0) {
		req_error(r, ERR_UPSTREAM, "The mail server offers no upload address.");
		goto out;
	}
	memset(&x, 0, sizeof(x));
	x.r = r;
	upload_call(r, &x, url.data);
out:
	buf_free(&url);
}

/* --- download -------------------------------------------------------------- */

/* A bound of a range: 0 and the value, or -1. */
static int range_num(const char *s, size_t n, long long *out)
{
	size_t i;

	if (n == 0 || n > BLOB_NUM_MAX)
		return -1;
	*out = 0;
	for (i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		*out = *out * 10 + (s[i] - '0');
	}
	return 0;
}

/* Reads a Range header when it is one plain byte range ("bytes=0-99",
 * "bytes=100-", "bytes=-100"); anything else is ignored, and the whole
 * blob is sent, as HTTP allows. */
static void parse_range(const char *v, struct blob_range *g)
{
	const char *dash;

	memset(g, 0, sizeof(*g));
	g->last = -1;
	if (v == NULL || strncmp(v, "bytes=", 6) ||
	    (dash = strchr(v + 6, '-')) == NULL)
		return;
	v += 6;
	if (dash == v) {
		if (range_num(dash + 1, strlen(dash + 1), &g->suffix) == 0 &&
		    g->suffix > 0)
			g->asked = 1;
		return;
	}
	if (range_num(v, (size_t)(dash - v), &g->first) == -1)
		return;
	if (dash[1] && (range_num(dash + 1, strlen(dash + 1), &g->last) == -1 ||
	    g->last < g->first))
		return;
	g->asked = 1;
}

/* The Range header for the JMAP server, rebuilt from what was parsed. */
static void range_header(const struct blob_range *g, char *out, size_t n)
{
	if (g->suffix)
		snprintf(out, n, "Range: bytes=-%lld", g->suffix);
	else if (g->last >= 0)
		snprintf(out, n, "Range: bytes=%lld-%lld", g->first, g->last);
	else
		snprintf(out, n, "Range: bytes=%lld-", g->first);
}

/* "bytes first-last/total" (total may be "*"), as a 206 must carry. */
static int valid_content_range(const char *v)
{
	long long a, b;
	char tail[24];

	return sscanf(v, "bytes %lld-%lld/%23s", &a, &b, tail) == 3 &&
	    a >= 0 && b >= a && strspn(v, "bytes 0123456789-/*") == strlen(v);
}

/* A JMAP server that ignores Range (Cyrus does) answers the whole blob:
 * the range is then cut out of it here. 0, or -1 when no byte of it
 * exists. */
static int range_cut(struct blob_x *x, long long total)
{
	const struct blob_range *g = &x->range;
	long long first, last;

	if (g->suffix) {
		first = total > g->suffix ? total - g->suffix : 0;
		last = total - 1;
	} else {
		first = g->first;
		last = g->last < 0 || g->last >= total ? total - 1 : g->last;
	}
	if (total <= 0 || first >= total) {
		snprintf(x->content_range, sizeof(x->content_range),
		    "bytes */%lld", total);
		return -1;
	}
	x->cutting = 1;
	x->skip = first;
	x->left = last - first + 1;
	snprintf(x->content_range, sizeof(x->content_range),
	    "bytes %lld-%lld/%lld", first, last, total);
	return 0;
}

static int known_encoding(const char *e)
{
	return !strcasecmp(e, "gzip") || !strcasecmp(e, "br") ||
	    !strcasecmp(e, "deflate") || !strcasecmp(e, "zstd");
}

/* Sorts the JMAP server's status into a fault, or none for 200 and 206. */
static enum err download_fault(const struct up_head *h)
{
	switch (h->status) {
	case 200:
	case 206:
		break;
	case 401:
		return ERR_SESSION_REFUSED;
	case 400:
	case 403:
	case 404:
	case 410:
		return ERR_NOT_FOUND;
	case 416:
		return ERR_RANGE;
	default:
		return ERR_UPSTREAM;
	}
	if (h->content_encoding[0] && strcasecmp(h->content_encoding, "identity") &&
	    !known_encoding(h->content_encoding))
		return ERR_UPSTREAM;
	if (h->status == 206 && !valid_content_range(h->content_range))
		return ERR_UPSTREAM;
	return ERR_NONE;
}

/* The headers of a blob: safe type, disposition, ranges, sandbox. */
static int download_headers(struct blob_x *x, const struct up_head *h,
    int encoded)
{
	struct req *r = x->r;
	char type[DISPO_TYPE_MAX], len[32];
	struct buf d;
	int rc;

	dispo_type(h->content_type, type);
	buf_init(&d, 4096);
	rc = dispo_header(&d, x->want_inline && dispo_inline_ok(type), x->name);
	req_header(r, "Content-Type", type);
	if (rc == 0)
		req_header(r, "Content-Disposition", d.data);
	buf_free(&d);
	req_header(r, "Accept-Ranges", "bytes");
	req_header(r, "Content-Security-Policy", DISPO_CSP);
	if (x->content_range[0])
		req_header(r, "Content-Range", x->content_range);
	/* A body someone compressed anyway passes as it is, without a length
	 * that would no longer be the browser's. */
	if (encoded)
		req_header(r, "Content-Encoding", h->content_encoding);
	else if (x->cutting || h->content_length >= 0) {
		snprintf(len, sizeof(len), "%lld",
		    x->cutting ? x->left : h->content_length);
		req_header(r, "Content-Length", len);
	}
	return rc;
}

static int download_head(const struct up_head *h, void *ctx)
{
	struct blob_x *x = ctx;
	int encoded = h->content_encoding[0] &&
	    strcasecmp(h->content_encoding, "identity");

	x->fault.status = h->status;
	if (h->status == 200 || h->status == 206)
		sess_accepted(x->r->sess, x->r->now);
	blob_fault(x, download_fault(h));
	if (x->fault.err != ERR_NONE) {
		if (x->fault.err == ERR_RANGE && valid_content_range(h->content_range))
			snprintf(x->content_range, sizeof(x->content_range), "%s",
			    h->content_range);
		return -1;
	}
	req_status(x->r, (int)h->status);
	if (h->status == 206)
		snprintf(x->content_range, sizeof(x->content_range), "%s",
		    h->content_range);
	else if (x->range.asked && !encoded && h->content_length >= 0) {
		if (range_cut(x, h->content_length) == -1) {
			blob_fault(x, ERR_RANGE);
			return -1;
		}
		req_status(x->r, 206);
	}
	if (download_headers(x, h, encoded) == -1) {
		blob_fault(x, ERR_UPSTREAM);
		return -1;
	}
	return 0;
}

/* Passes the body on; when cutting a range, only its bytes, and stops the
 * transfer once they are out. */
static int download_body(const char *p, size_t n, void *ctx)
{
	struct blob_x *x = ctx;

	if (!x->cutting)
		return req_write(x->r, p, n);
	if ((long long)n <= x->skip) {
		x->skip -= (long long)n;
		return 0;
	}
	p += x->skip;
	n -= (size_t)x->skip;
	x->skip = 0;
	if ((long long)n > x->left)
		n = (size_t)x->left;
	x->left -= (long long)n;
	if (req_write(x->r, p, n) == -1)
		return -1;
	if (x->left == 0) {
		x->done = 1;
		return -1;
	}
	return 0;
}

/* Reads {accountId}/{blobId}/{name} and the query into the names. 0, or
 * -1 with the error answered. */
static int download_target(struct req *r, struct blob_x *x, char *account,
    char *blob, char *type)
{
	const char *p = r->path + strlen("/api/blob/");
	char name[BLOB_NAME_MAX + 1], flag[8];
	int rc;

	if (next_segment(&p, account, BLOB_ID_MAX + 1) == -1 ||
	    !valid_id(account) ||
	    next_segment(&p, blob, BLOB_ID_MAX + 1) == -1 || !valid_id(blob) ||
	    strchr(p, '/') || next_segment(&p, name, sizeof(name)) == -1) {
		req_error(r, ERR_NOT_FOUND, NO_FILE);
		return -1;
	}
	rc = pct_query(r->query, "accept", type, DISPO_TYPE_MAX);
	if (rc == 0 || (rc == 1 && *type == '\0'))
		snprintf(type, DISPO_TYPE_MAX, "application/octet-stream");
	else if (rc == -1 || !valid_type(type)) {
		req_error(r, ERR_BAD_REQUEST, "accept is not a media type.");
		return -1;
	}
	x->want_inline = pct_query(r->query, "inline", flag, sizeof(flag)) == 1 &&
	    !strcmp(flag, "1");
	dispo_clean_name(name, x->name);
	parse_range(req_param(r, "HTTP_RANGE"), &x->range);
	return 0;
}

static void download_call(struct req *r, struct blob_x *x, const char *url)
{
	char range[64];
	const char *headers[3] = { "Accept-Encoding: identity", NULL, NULL };
	struct up_call c;
	int res;

	if (x->range.asked) {
		range_header(&x->range, range, sizeof(range));
		headers[1] = range;
	}
	memset(&c, 0, sizeof(c));
	c.method = "GET";
	c.url = url;
	c.user = r->sess->user;
	c.pass = r->sess->pass;
	c.headers = headers;
	c.on_head = download_head;
	c.on_body = download_body;
	c.ctx = x;
	res = upstream_call(r->app->up, &c);
	blob_finish(x, res);
}

void blob_download(struct req *r)
{
	char account[BLOB_ID_MAX + 1], blob[BLOB_ID_MAX + 1];
	char type[DISPO_TYPE_MAX];
	struct blob_var var[4];
	struct blob_x x;
	struct buf url;

	memset(&x, 0, sizeof(x));
	x.r = r;
	buf_init(&url, BLOB_URL_MAX);
	if (download_target(r, &x, account, blob, type) == -1 ||
	    check_account(r, account) == -1)
		goto out;
	var[0] = (struct blob_var){ "accountId", account };
	var[1] = (struct blob_var){ "blobId", blob };
	var[2] = (struct blob_var){ "name", x.name };
	var[3] = (struct blob_var){ "type", type };
	if (fill_template(&url, r->sess->download_url, var, 4) == -1 ||
	    url.len == 0) {
		req_error(r, ERR_UPSTREAM, "The mail server offers no download address.");
		goto out;
	}
	download_call(r, &x, url.data);
out:
	buf_free(&url);
}

const struct route blob_routes[] = {
	{ "POST", "/api/upload/", ROUTE_SESSION | ROUTE_BUDGET | ROUTE_PREFIX |
	    ROUTE_UPSTREAM, blob_upload },
	{ "GET", "/api/blob/", ROUTE_SESSION | ROUTE_BUDGET | ROUTE_PREFIX |
	    ROUTE_UPSTREAM, blob_download },
	{ "GET", "/api/image", ROUTE_SESSION | ROUTE_BUDGET, image_handle },
	{ NULL, NULL, 0, NULL }
};
