#include "dispo.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "pct.h"

#define DISPO_OCTET "application/octet-stream"
#define DISPO_CHARSET_MAX 40

/* RFC 9110 token characters besides letters and digits. */
static const char tchar[] = "!#$%&'*+-.^_`|~";

/* Words in a subtype that make it something a browser may parse as a
 * document or run: HTML, XHTML, SVG, XSLT, every kind of script, Flash.
 * XML is told by its subtype ("xml", "xml-dtd", "...+xml"), so that the
 * office formats (vnd.openxmlformats-...) stay what they are. */
static const char *const dangerous_words[] = {
	"html", "svg", "xsl", "script", "flash", NULL
};

/* What a browser shows by itself without running anything. */
static const char *const inline_types[] = {
	"image/png", "image/jpeg", "image/gif", "image/webp", "image/avif",
	"image/bmp", "image/x-icon", "image/vnd.microsoft.icon", "text/plain",
	NULL
};

static const unsigned bidi_controls[] = {
	0x061c, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e,
	0x2066, 0x2067, 0x2068, 0x2069
};

static int is_token(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr(tchar, s[i]))
			return 0;
	return n > 0;
}

/* The media type before any parameter, lower-cased: 0, or -1 when it is
 * not type/subtype made of tokens. */
static int base_type(const char *t, char *out, size_t n)
{
	const char *end, *slash;
	size_t len, i;

	while (*t == ' ' || *t == '\t')
		t++;
	end = t + strcspn(t, ";");
	while (end > t && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	len = (size_t)(end - t);
	slash = memchr(t, '/', len);
	if (len >= n || slash == NULL || !is_token(t, (size_t)(slash - t)) ||
	    !is_token(slash + 1, (size_t)(end - slash - 1)))
		return -1;
	for (i = 0; i < len; i++)
		out[i] = (char)tolower((unsigned char)t[i]);
	out[len] = '\0';
	return 0;
}

/* The charset parameter when it is a plain token: 0 or -1. */
static int charset_param(const char *t, char *out, size_t n)
{
	const char *p = strchr(t, ';'), *v;
	size_t len;

	for (; p; p = strchr(p + 1, ';')) {
		v = p + 1;
		while (*v == ' ' || *v == '\t')
			v++;
		if (strncasecmp(v, "charset=", 8))
			continue;
		v += 8;
		if (*v == '"')
			v++;
		len = strspn(v, "abcdefghijklmnopqrstuvwxyz"
		    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:");
		if (len == 0 || len >= n)
			return -1;
		memcpy(out, v, len);
		out[len] = '\0';
		return 0;
	}
	return -1;
}

static int dangerous(const char *base)
{
	const char *sub = strchr(base, '/') + 1;
	size_t n = strlen(sub);
	int i;

	for (i = 0; dangerous_words[i]; i++)
		if (strstr(sub, dangerous_words[i]))
			return 1;
	if (!strncmp(sub, "xml", 3) || (n >= 4 && !strcmp(sub + n - 4, "+xml")))
		return 1;
	/* A stylesheet can read and leak a page; multipart/x-mixed-replace
	 * can swap a document in. */
	return !strcmp(base, "text/css") || !strncmp(base, "multipart/", 10);
}

void dispo_type(const char *type, char out[DISPO_TYPE_MAX])
{
	char base[DISPO_TYPE_MAX], cs[DISPO_CHARSET_MAX];

	if (type == NULL || base_type(type, base, sizeof(base)) == -1 ||
	    dangerous(base)) {
		snprintf(out, DISPO_TYPE_MAX, "%s", DISPO_OCTET);
		return;
	}
	if (!strncmp(base, "text/", 5) &&
	    charset_param(type, cs, sizeof(cs)) == 0 &&
	    snprintf(out, DISPO_TYPE_MAX, "%s; charset=%s", base, cs) <
	    DISPO_TYPE_MAX)
		return;
	snprintf(out, DISPO_TYPE_MAX, "%s", base);
}

int dispo_inline_ok(const char *type)
{
	size_t n = strcspn(type, ";");
	int i;

	if (!strncmp(type, "audio/", 6) || !strncmp(type, "video/", 6))
		return 1;
	for (i = 0; inline_types[i]; i++)
		if (strlen(inline_types[i]) == n &&
		    !strncmp(type, inline_types[i], n))
			return 1;
	return 0;
}

/* The code point at s (n bytes there) into *cp: its length in bytes, or
 * 0 when the bytes are not well-formed UTF-8 (overlong, surrogate, too
 * large, cut short). */
static size_t utf8_next(const unsigned char *s, size_t n, unsigned *cp)
{
	static const unsigned min[] = { 0, 0, 0x80, 0x800, 0x10000 };
	size_t len, i;
	unsigned v;

	if (s[0] < 0x80)
		return *cp = s[0], 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, v = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, v = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, v = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		v = v << 6 | (s[i] & 0x3f);
	}
	if (v < min[len] || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return 0;
	*cp = v;
	return len;
}

static int dropped(unsigned cp)
{
	size_t i;

	if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) || cp == '"')
		return 1;
	for (i = 0; i < sizeof(bidi_controls) / sizeof(bidi_controls[0]); i++)
		if (cp == bidi_controls[i])
			return 1;
	return 0;
}

void dispo_clean_name(const char *name, char out[DISPO_NAME_MAX + 1])
{
	const unsigned char *s = (const unsigned char *)name;
	size_t n = strlen(name), k = 0, len;
	unsigned cp;

	while (n > 0) {
		if ((len = utf8_next(s, n, &cp)) == 0) {
			cp = '_';       /* one byte of something broken */
			len = 1;
		}
		if (!dropped(cp) && !(k == 0 && cp == ' ')) {
			if (k + len > DISPO_NAME_MAX)
				break;
			if (cp == '/' || cp == '\\' || len == 1)
				out[k++] = cp == '/' || cp == '\\' ? '_' : (char)cp;
			else
				memcpy(out + k, s, len), k += len;
		}
		s += len;
		n -= len;
	}
	while (k > 0 && out[k - 1] == ' ')
		k--;
	out[k] = '\0';
	if (k == 0)
		snprintf(out, DISPO_NAME_MAX + 1, "download");
}

/* The quoted ASCII filename for browsers without RFC 6266: each character
 * outside printable ASCII, and '%' '\\' '"' that some read specially, as _. */
static int ascii_fallback(struct buf *b, const char *name)
{
	const unsigned char *s = (const unsigned char *)name;
	size_t n = strlen(name), len;
	unsigned cp;
	int rc = 0;

	while (n > 0 && rc == 0) {
		if ((len = utf8_next(s, n, &cp)) == 0)
			len = 1, cp = '_';
		if (cp < 0x20 || cp >= 0x7f || strchr("%\\\"", (int)cp))
			cp = '_';
		rc = buf_putc(b, (char)cp);
		s += len;
		n -= len;
	}
	return rc;
}

int dispo_header(struct buf *b, int show_inline, const char *clean_name)
{
	if (buf_puts(b, show_inline ? "inline" : "attachment") == -1 ||
	    buf_puts(b, "; filename=\"") == -1 ||
	    ascii_fallback(b, clean_name) == -1 ||
	    buf_puts(b, "\"; filename*=UTF-8''") == -1)
		return -1;
	return pct_encode(b, clean_name, strlen(clean_name), PCT_ATTR_CHAR);
}
