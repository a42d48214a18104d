/* login: checks credentials against the JMAP server's session resource,
 * under the sign-in rate limits, and turns the answer into a session. */
#ifndef POSTERN_LOGIN_H
#define POSTERN_LOGIN_H

#include <json-c/json.h>

#include "req.h"

void login_handle(struct req *r);
/* Rewrites a session document's URLs to postern's /api paths and pins the
 * upstream ones (into urls[4]: api, download, upload, event source;
 * malloc'd). base is the URL the document came from. 0 or -1. */
int login_rewrite(const struct cfg *c, json_object *doc, const char *base,
    char *urls[4]);

#endif
