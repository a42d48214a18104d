/* The image proxy responder: /api/image, a pool apart from postern-blob. */
#include "image.h"

int main(int argc, char **argv)
{
	return serve_main(argc, argv, "postern-image", image_routes);
}
