/* ssefloor: the floor for held event streams. A do-nothing FastCGI SSE
 * server on a Unix socket, to put behind the same lighttpd as pushd:
 * single-threaded epoll; answers every request with the headers of an
 * event stream and holds it; on SIGUSR1 writes one small event to every
 * held request; nothing else. Its own strict record reader (8-byte
 * headers, version 1, content and padding skipped) keeps a connection's
 * state to a few bytes.
 *
 *     cc -O2 -o ssefloor bench/ssefloor.c && ./ssefloor SOCKET
 *
 * Used by bench/streams.py. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

enum { BEGIN = 1, ABORT = 2, END = 3, PARAMS = 4, STDOUT = 6 };

struct conn {
	uint8_t hdr[8];   /* the record header being read */
	uint8_t hlen;     /* bytes of hdr read */
	uint8_t held;     /* 1: headers answered, the stream is held */
	uint16_t id;      /* the request id */
	uint32_t skip;    /* content and padding of this record still unread */
};

static struct conn *conns;
static int nconns;
static int held;
static unsigned long long last_id;

static void put_hdr(uint8_t *p, int type, int id, int len, int pad)
{
	p[0] = 1;
	p[1] = (uint8_t)type;
	p[2] = (uint8_t)(id >> 8);
	p[3] = (uint8_t)id;
	p[4] = (uint8_t)(len >> 8);
	p[5] = (uint8_t)len;
	p[6] = (uint8_t)pad;
	p[7] = 0;
}

/* One STDOUT record carrying n bytes (n < 1024 here), padded to 8. */
static int send_stdout(int fd, int id, const char *s, int n)
{
	uint8_t rec[8 + 1024 + 8];
	int pad = (8 - n % 8) % 8;

	put_hdr(rec, STDOUT, id, n, pad);
	memcpy(rec + 8, s, (size_t)n);
	memset(rec + 8 + n, 0, (size_t)pad);
	return send(fd, rec, (size_t)(8 + n + pad), MSG_NOSIGNAL) ==
	    8 + n + pad ? 0 : -1;
}

static void drop(int ep, int fd)
{
	if (conns[fd].held)
		held--;
	memset(&conns[fd], 0, sizeof(conns[fd]));
	epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
	close(fd);
}

static const char answer[] = "Status: 200\r\nContent-Type: text/event-stream\r\n"
    "Cache-Control: no-store\r\n\r\n";
/* With SSEFLOOR_HELLO set in the environment, the headers carry the same
 * first bytes of body as pushd's (a comment and a retry field). */
static const char answer_hello[] = "Status: 200\r\nContent-Type: text/event-stream\r\n"
    "Cache-Control: no-store\r\n\r\n: postern\nretry: 5000\n\n";
static int hello;
/* With SSEFLOOR_PUSHD_HEADERS set, the same header set as pushd's, in one
 * record with the first body bytes. */
static const char answer_pushd[] = "Status: 200 OK\r\n"
    "X-Content-Type-Options: nosniff\r\nX-Frame-Options: DENY\r\n"
    "Referrer-Policy: no-referrer\r\nContent-Security-Policy: default-src "
    "'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'\r\n"
    "Cross-Origin-Resource-Policy: same-origin\r\nCache-Control: no-store\r\n"
    "Content-Type: text/event-stream; charset=utf-8\r\n"
    "X-Accel-Buffering: no\r\n\r\n: postern\nretry: 5000\n\n";
static int pushd_headers;
/* With SSEFLOOR_SPLIT set, "Status: 200 OK" goes first in a record and a
 * send of its own, as pushd sends it. */
static int split;

/* A record's header is complete: act on it. -1 drops the connection. */
static int on_record(int fd, struct conn *c)
{
	const uint8_t *h = c->hdr;
	int type = h[1], id = h[2] << 8 | h[3];
	uint32_t len = (uint32_t)(h[4] << 8 | h[5]);

	if (h[0] != 1 || type == 0)
		return -1;
	c->skip = len + h[6];
	if (type == BEGIN) {
		if (len != 8 || c->id)
			return -1;
		c->id = (uint16_t)id;
	} else if (type == ABORT) {
		return -1;
	} else if (type == PARAMS && len == 0 && !c->held) {
		/* The end of the parameters: answer and hold. */
		if (split && send_stdout(fd, id, "Status: 200 OK\r\n", 16) < 0)
			return -1;
		if (pushd_headers) {
			int skip = split ? 16 : 0; /* the status already went */

			if (id != c->id || send_stdout(fd, id, answer_pushd + skip,
			    (int)sizeof(answer_pushd) - 1 - skip) < 0)
				return -1;
		} else if (id != c->id || (hello ? send_stdout(fd, id, answer_hello,
		    (int)sizeof(answer_hello) - 1) : send_stdout(fd, id, answer,
		    (int)sizeof(answer) - 1)) < 0)
			return -1;
		c->held = 1;
		held++;
	}
	return 0;
}

static int on_read(int fd)
{
	uint8_t buf[16384];
	struct conn *c = &conns[fd];
	ssize_t n = recv(fd, buf, sizeof(buf), 0);
	ssize_t i = 0;

	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
		return -1;
	while (i < n) {
		if (c->skip) {
			uint32_t k = (uint32_t)(n - i) < c->skip ?
			    (uint32_t)(n - i) : c->skip;
			c->skip -= k;
			i += k;
			continue;
		}
		c->hdr[c->hlen++] = buf[i++];
		if (c->hlen == 8) {
			c->hlen = 0;
			if (on_record(fd, c) < 0)
				return -1;
		}
	}
	return 0;
}

static void fan_out(int ep)
{
	char ev[64];
	int n, fd;

	last_id++;
	n = snprintf(ev, sizeof(ev), "id: %llu\ndata: x\n\n", last_id);
	for (fd = 0; fd < nconns; fd++)
		if (conns[fd].held && send_stdout(fd, conns[fd].id, ev, n) < 0)
			drop(ep, fd);
}

int main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct epoll_event e, evs[256];
	struct rlimit rl;
	sigset_t set;
	int ls, ep, sfd, i;

	if (argc != 2 || strlen(argv[1]) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "usage: ssefloor SOCKET\n");
		return 2;
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	nconns = (int)rl.rlim_cur;
	hello = getenv("SSEFLOOR_HELLO") != NULL;
	split = getenv("SSEFLOOR_SPLIT") != NULL;
	pushd_headers = getenv("SSEFLOOR_PUSHD_HEADERS") != NULL;
	/* Untouched pages cost nothing: only the slots of open fds count. */
	conns = calloc((size_t)nconns, sizeof(*conns));
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	sfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	strcpy(sa.sun_path, argv[1]);
	unlink(argv[1]);
	ls = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (conns == NULL || sfd < 0 || ls < 0 ||
	    bind(ls, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(ls, 4096) < 0) {
		perror("ssefloor");
		return 1;
	}
	ep = epoll_create1(EPOLL_CLOEXEC);
	e.events = EPOLLIN;
	e.data.fd = ls;
	epoll_ctl(ep, EPOLL_CTL_ADD, ls, &e);
	e.data.fd = sfd;
	epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &e);
	for (;;) {
		int n = epoll_wait(ep, evs, 256, -1);

		for (i = 0; i < n; i++) {
			int fd = evs[i].data.fd;

			if (fd == ls) {
				int c;

				while ((c = accept4(ls, NULL, NULL,
				    SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
					if (c >= nconns) {
						close(c);
						continue;
					}
					e.events = EPOLLIN;
					e.data.fd = c;
					epoll_ctl(ep, EPOLL_CTL_ADD, c, &e);
				}
			} else if (fd == sfd) {
				struct signalfd_siginfo si;

				while (read(sfd, &si, sizeof(si)) ==
				    (ssize_t)sizeof(si)) {
					if (si.ssi_signo == SIGUSR1) {
						fan_out(ep);
					} else {
						unlink(argv[1]);
						return 0;
					}
				}
			} else if (on_read(fd) < 0) {
				drop(ep, fd);
			}
		}
	}
}
