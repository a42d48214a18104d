#include "usock.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* The address of path: 0, or -1 when it does not fit. */
static int address(const char *path, struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa->sun_path))
		return -1;
	memcpy(sa->sun_path, path, strlen(path));
	return 0;
}

int usock_listen(const char *path, int backlog, int flags, char *err,
    size_t errlen)
{
	struct sockaddr_un sa;
	mode_t old;
	int fd;

	if (address(path, &sa) == -1) {
		snprintf(err, errlen, "%s: path too long", path);
		return -1;
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | flags, 0)) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	unlink(path);
	/* The mode comes from the umask at bind: 0660 whatever the caller's. */
	old = umask(0117);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1 ||
	    listen(fd, backlog) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		umask(old);
		close(fd);
		return -1;
	}
	umask(old);
	return fd;
}

int usock_alive(const char *path)
{
	struct sockaddr_un sa;
	int fd, ok;

	if (address(path, &sa) == -1)
		return 0;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd == -1)
		return 0;
	ok = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 ||
	    errno == EAGAIN;
	close(fd);
	return ok;
}
