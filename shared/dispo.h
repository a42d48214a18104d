/* dispo: how a blob is labelled for the browser. The content type a
 * browser may see (anything that could run script or be read as markup
 * becomes application/octet-stream), whether it may be shown inline, and
 * the Content-Disposition header with a cleaned filename. */
#ifndef POSTERN_DISPO_H
#define POSTERN_DISPO_H

#include <stddef.h>

#include "buf.h"

/* Sent with every blob and proxied image: whatever the bytes are, a
 * browser that opens them runs nothing and loads nothing. */
#define DISPO_CSP "sandbox; default-src 'none'"

#define DISPO_TYPE_MAX 128
#define DISPO_NAME_MAX 200     /* bytes of a cleaned filename */

/* The type to send for what the mail server said (NULL or "" allowed):
 * the media type lower-cased, with a token charset parameter kept, or
 * application/octet-stream when it is dangerous (HTML, XHTML, SVG, XML,
 * XSL, CSS, anything with script) or malformed. */
void dispo_type(const char *type, char out[DISPO_TYPE_MAX]);
/* 1 when a type from dispo_type may be shown inline: raster images (not
 * SVG), audio, video, text/plain. */
int dispo_inline_ok(const char *type);
/* A filename fit for a header: invalid UTF-8 replaced by '_', bidi
 * controls (U+202A-U+202E, U+2066-U+2069, U+200E, U+200F, U+061C), other
 * control characters and double quotes removed, slashes and backslashes
 * made '_', white space trimmed, cut to DISPO_NAME_MAX bytes on a
 * character boundary; "download" when nothing is left. */
void dispo_clean_name(const char *name, char out[DISPO_NAME_MAX + 1]);
/* Appends the Content-Disposition value for a cleaned name:
 * `attachment; filename="ascii fallback"; filename*=UTF-8''...`
 * (or inline). 0, or -1 when b is full. */
int dispo_header(struct buf *b, int show_inline, const char *clean_name);

#endif
