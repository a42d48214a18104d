/* The blob responder: /api/upload/, /api/blob/ and /api/image. */
#include "blob.h"

int main(int argc, char **argv)
{
	return serve_main(argc, argv, "postern-blob", blob_routes);
}
