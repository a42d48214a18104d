/*
 * standin: a tiny JMAP upstream for benchmarks.
 *
 *     standin PORT
 *
 * A single-threaded epoll HTTP/1.1 server with keep-alive on 127.0.0.1:PORT.
 * It reads each request's head and its body (Content-Length; a chunked body
 * is refused), and answers every GET with a JMAP session document and every
 * POST with a fixed JMAP methodResponses document (~1.5 KB), both
 * application/json. Authorization is ignored. Buffers are bounded: a head
 * larger than the buffer, a body larger than MAX_BODY or a malformed request
 * closes the connection. No dependencies: cc -O2 -o standin standin.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <arpa/inet.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define IN_MAX   16384          /* request head (plus pipelined bytes) */
#define OUT_MAX  8192           /* pending answer bytes */
#define MAX_BODY (16L << 20)    /* largest body skipped */

static const char session_doc[] =
    "{\"capabilities\":{"
    "\"urn:ietf:params:jmap:core\":{\"maxSizeUpload\":50000000,"
    "\"maxConcurrentUpload\":4,\"maxSizeRequest\":10000000,"
    "\"maxConcurrentRequests\":4,\"maxCallsInRequest\":16,"
    "\"maxObjectsInGet\":500,\"maxObjectsInSet\":500,"
    "\"collationAlgorithms\":[\"i;ascii-numeric\",\"i;ascii-casemap\"]},"
    "\"urn:ietf:params:jmap:mail\":{}},"
    "\"accounts\":{\"bench@example.test\":{\"name\":\"bench@example.test\","
    "\"isPersonal\":true,\"isReadOnly\":false,\"accountCapabilities\":{"
    "\"urn:ietf:params:jmap:core\":{},"
    "\"urn:ietf:params:jmap:mail\":{\"maxMailboxesPerEmail\":null,"
    "\"maxMailboxDepth\":null,\"maxSizeMailboxName\":490,"
    "\"maxSizeAttachmentsPerEmail\":50000000,"
    "\"emailQuerySortOptions\":[\"receivedAt\",\"from\",\"to\",\"subject\",\"size\"],"
    "\"mayCreateTopLevelMailbox\":true}}}},"
    "\"primaryAccounts\":{\"urn:ietf:params:jmap:core\":\"bench@example.test\","
    "\"urn:ietf:params:jmap:mail\":\"bench@example.test\"},"
    "\"username\":\"bench@example.test\","
    "\"apiUrl\":\"/jmap/\","
    "\"downloadUrl\":\"/jmap/download/{accountId}/{blobId}/{name}?accept={type}\","
    "\"uploadUrl\":\"/jmap/upload/{accountId}/\","
    "\"eventSourceUrl\":\"/jmap/eventsource/?types={types}&closeafter={closeafter}&ping={ping}\","
    "\"state\":\"bench-0\"}";

#define MAILBOX(id, name, role, sort, total, unread) \
    "{\"id\":\"" id "\",\"name\":\"" name "\",\"parentId\":null,\"role\":" role "," \
    "\"sortOrder\":" sort ",\"totalEmails\":" total ",\"unreadEmails\":" unread "," \
    "\"totalThreads\":" total ",\"unreadThreads\":" unread ",\"myRights\":{" \
    "\"mayReadItems\":true,\"mayAddItems\":true,\"mayRemoveItems\":true," \
    "\"maySetSeen\":true,\"maySetKeywords\":true,\"mayCreateChild\":true," \
    "\"mayRename\":true,\"mayDelete\":true,\"maySubmit\":true}," \
    "\"isSubscribed\":true}"

static const char api_doc[] =
    "{\"methodResponses\":[[\"Mailbox/get\",{\"accountId\":\"bench@example.test\","
    "\"state\":\"bench-0\",\"list\":["
    MAILBOX("m1", "Inbox", "\"inbox\"", "1", "1342", "17") ","
    MAILBOX("m2", "Drafts", "\"drafts\"", "2", "3", "0") ","
    MAILBOX("m3", "Sent", "\"sent\"", "3", "518", "0") ","
    MAILBOX("m5", "Trash", "\"trash\"", "5", "77", "2")
    "],\"notFound\":[]},\"0\"]],\"sessionState\":\"bench-0\"}";

struct conn {
	int fd;
	unsigned events;       /* what epoll watches now */
	int done;              /* a "Connection: close" answer is queued */
	int cur;               /* method of the request being read, 0: none */
	int cur_close;         /* it asked to close the connection */
	long body_left;        /* its body bytes still to skip */
	size_t in_len;
	size_t out_len, out_off;
	char in[IN_MAX];
	char out[OUT_MAX];
};

static int ep;
static char resp_get[4096], resp_post[4096];
static size_t resp_get_len, resp_post_len;
static char resp_get_close[4096], resp_post_close[4096];
static size_t resp_get_close_len, resp_post_close_len;
static size_t resp_max;
static const char resp_405[] = "HTTP/1.1 405 Method Not Allowed\r\n"
    "Content-Length: 0\r\nConnection: close\r\n\r\n";

enum { M_GET = 1, M_POST, M_OTHER };

static size_t make_resp(char *out, size_t n, const char *body, int close)
{
	int k = snprintf(out, n, "HTTP/1.1 200 OK\r\n"
	    "Content-Type: application/json\r\n"
	    "Cache-Control: no-cache, no-store, must-revalidate\r\n"
	    "Content-Length: %zu\r\n%s\r\n%s", strlen(body),
	    close ? "Connection: close\r\n" : "", body);

	if (k < 0 || (size_t)k >= n) {
		fprintf(stderr, "standin: answer too large\n");
		exit(1);
	}
	if ((size_t)k > resp_max)
		resp_max = (size_t)k;
	return (size_t)k;
}

static void conn_close(struct conn *c)
{
	epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	free(c);
}

static void watch(struct conn *c, unsigned events)
{
	struct epoll_event e;

	if (c->events == events)
		return;
	e.events = events;
	e.data.ptr = c;
	epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &e);
	c->events = events;
}

/* Writes what is pending: 0 done, 1 would block, -1 error. */
static int flush_out(struct conn *c)
{
	while (c->out_off < c->out_len) {
		ssize_t n = write(c->fd, c->out + c->out_off, c->out_len - c->out_off);

		if (n > 0)
			c->out_off += (size_t)n;
		else if (n < 0 && errno == EINTR)
			continue;
		else if (n < 0 && errno == EAGAIN)
			return 1;
		else
			return -1;
	}
	c->out_off = c->out_len = 0;
	return 0;
}

static void queue(struct conn *c, const char *p, size_t n)
{
	memcpy(c->out + c->out_len, p, n);
	c->out_len += n;
}

/* Queues the answer to a request; the caller made room for resp_max. */
static void answer(struct conn *c, int method, int close)
{
	if (method == M_GET)
		close ? queue(c, resp_get_close, resp_get_close_len) :
		    queue(c, resp_get, resp_get_len);
	else if (method == M_POST)
		close ? queue(c, resp_post_close, resp_post_close_len) :
		    queue(c, resp_post, resp_post_len);
	else {
		queue(c, resp_405, sizeof(resp_405) - 1);
		close = 1;
	}
	if (close)
		c->done = 1;
}

/* The value of header name in head[0..n), or NULL; *len its length. */
static const char *find_header(const char *head, size_t n, const char *name,
    size_t *len)
{
	size_t k = strlen(name);
	const char *p = memchr(head, '\n', n), *end = head + n;

	while (p && p + 1 < end) {
		const char *line = p + 1, *eol = memchr(line, '\n', (size_t)(end - line));

		if (!eol)
			break;
		if ((size_t)(eol - line) > k && line[k] == ':' &&
		    !strncasecmp(line, name, k)) {
			const char *v = line + k + 1;
			const char *ve = eol;

			while (v < ve && (*v == ' ' || *v == '\t'))
				v++;
			while (ve > v && (ve[-1] == '\r' || ve[-1] == ' ' || ve[-1] == '\t'))
				ve--;
			*len = (size_t)(ve - v);
			return v;
		}
		p = eol;
	}
	return NULL;
}

static int has_token(const char *v, size_t len, const char *tok)
{
	size_t k = strlen(tok), i;

	for (i = 0; i + k <= len; i++)
		if (!strncasecmp(v + i, tok, k))
			return 1;
	return 0;
}

static void consume(struct conn *c, size_t n)
{
	memmove(c->in, c->in + n, c->in_len - n);
	c->in_len -= n;
}

/* Answers the complete requests in c->in while the answers fit:
 * 0 wants input, 1 stalled on output, -1 a bad request (close). */
static int process(struct conn *c)
{
	while (!c->done) {
		char *end, *sp, *eol;
		size_t head_len, vlen;
		const char *v;
		int http10;
		long clen = 0;

		if (c->cur) {
			if (c->body_left > 0) {
				size_t take = c->in_len < (size_t)c->body_left ?
				    c->in_len : (size_t)c->body_left;

				consume(c, take);
				c->body_left -= (long)take;
				if (c->body_left > 0)
					return 0;
			}
			if (c->out_len + resp_max > OUT_MAX)
				return 1;  /* stalled until the answers are out */
			answer(c, c->cur, c->cur_close);
			c->cur = 0;
			continue;
		}
		if (c->in_len == 0)
			return 0;
		end = memmem(c->in, c->in_len, "\r\n\r\n", 4);
		if (!end)
			return c->in_len >= IN_MAX ? -1 : 0;
		head_len = (size_t)(end - c->in) + 4;
		if ((sp = memchr(c->in, ' ', head_len)) == NULL)
			return -1;
		eol = memchr(c->in, '\r', head_len);
		http10 = eol && eol - c->in >= 8 && !memcmp(eol - 8, "HTTP/1.0", 8);
		if (find_header(c->in, head_len, "Transfer-Encoding", &vlen))
			return -1;  /* no chunked bodies here */
		if ((v = find_header(c->in, head_len, "Content-Length", &vlen))) {
			char num[24], *e;

			if (vlen == 0 || vlen >= sizeof(num))
				return -1;
			memcpy(num, v, vlen);
			num[vlen] = '\0';
			errno = 0;
			clen = strtol(num, &e, 10);
			if (*e || errno || clen < 0 || clen > MAX_BODY)
				return -1;
		}
		v = find_header(c->in, head_len, "Connection", &vlen);
		c->cur_close = http10 ? !(v && has_token(v, vlen, "keep-alive")) :
		    (v && has_token(v, vlen, "close"));
		if (sp - c->in == 3 && !memcmp(c->in, "GET", 3))
			c->cur = M_GET;
		else if (sp - c->in == 4 && !memcmp(c->in, "POST", 4))
			c->cur = M_POST;
		else
			c->cur = M_OTHER;
		c->body_left = clen;
		consume(c, head_len);
	}
	return 0;
}

/* Runs a connection until it would block. */
static void drive(struct conn *c)
{
	for (;;) {
		ssize_t n;
		int rc, stalled;

		if ((stalled = process(c)) == -1) {
			conn_close(c);
			return;
		}
		if ((rc = flush_out(c)) == -1) {
			conn_close(c);
			return;
		}
		if (rc == 1) {
			watch(c, EPOLLOUT);
			return;
		}
		if (stalled)
			continue;  /* more answers to give before reading */
		if (c->done || c->in_len == IN_MAX) {
			conn_close(c);
			return;
		}
		n = read(c->fd, c->in + c->in_len, IN_MAX - c->in_len);
		if (n > 0) {
			c->in_len += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			watch(c, EPOLLIN);
			return;
		}
		conn_close(c);  /* end of input or an error */
		return;
	}
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa;
	struct epoll_event e, evs[256];
	int lfd, one = 1, port;
	static char lmark;

	if (argc != 2 || (port = atoi(argv[1])) <= 0 || port > 65535) {
		fprintf(stderr, "usage: standin PORT\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	resp_get_len = make_resp(resp_get, sizeof(resp_get), session_doc, 0);
	resp_post_len = make_resp(resp_post, sizeof(resp_post), api_doc, 0);
	resp_get_close_len = make_resp(resp_get_close, sizeof(resp_get_close),
	    session_doc, 1);
	resp_post_close_len = make_resp(resp_post_close, sizeof(resp_post_close),
	    api_doc, 1);

	lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (lfd < 0) {
		perror("socket");
		return 1;
	}
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((unsigned short)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(lfd, 1024) < 0) {
		perror("bind/listen");
		return 1;
	}
	ep = epoll_create1(EPOLL_CLOEXEC);
	e.events = EPOLLIN;
	e.data.ptr = &lmark;
	epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &e);
	fprintf(stderr, "standin: listening on 127.0.0.1:%d (session %zu B, "
	    "api answer %zu B)\n", port, strlen(session_doc), strlen(api_doc));

	for (;;) {
		int n = epoll_wait(ep, evs, 256, -1), i;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			perror("epoll_wait");
			return 1;
		}
		for (i = 0; i < n; i++) {
			if (evs[i].data.ptr == &lmark) {
				int fd;

				while ((fd = accept4(lfd, NULL, NULL,
				    SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
					struct conn *c;

					if ((c = calloc(1, sizeof(*c))) == NULL) {
						close(fd);
						continue;
					}
					c->fd = fd;
					c->events = EPOLLIN;
					setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one,
					    sizeof(one));
					e.events = EPOLLIN;
					e.data.ptr = c;
					epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e);
				}
				continue;
			}
			{
				struct conn *c = evs[i].data.ptr;

				if (evs[i].events & EPOLLERR)
					conn_close(c);
				else
					drive(c);
			}
		}
	}
}
