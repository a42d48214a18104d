/* blob: attachments both ways, streamed. POST /api/upload/{accountId}
 * sends the body to the JMAP server's upload URL under the upload cap;
 * GET /api/blob/{accountId}/{blobId}/{name} streams a blob back with a
 * safe content type, a Content-Disposition and byte ranges. Neither ever
 * holds more of a blob than one buffer. blob_routes also carries the image
 * proxy (image.h): the three make the blob responder. */
#ifndef POSTERN_BLOB_H
#define POSTERN_BLOB_H

#include "serve.h"

extern const struct route blob_routes[];

void blob_upload(struct req *r);
void blob_download(struct req *r);

#endif
