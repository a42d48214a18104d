#include "msieve.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <sys/socket.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/x509v3.h>

#include "addr.h"
#include "log.h"

int msieve_name_ok(const char *name)
{
	size_t n = strlen(name);

	/* 64 bytes: as long as a person would name a filter set. */
	return n >= 1 && n <= 64 && strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789._ -") == n;
}

/* --- The connection: bytes both ways within the deadline ---------------- */


static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits for events on the socket until deadline: 0, or -1 with the
 * result (timeout) recorded. */
static int wait_fd(struct msieve *s, short events, long long deadline, int *res)
{
	struct pollfd pfd;
	long long left;
	int rc;

	for (;;) {
		if ((left = deadline - now_ms()) <= 0) {
			*res = MSIEVE_TIMEOUT;
			return -1;
		}
		pfd.fd = s->fd;
		pfd.events = events;
		pfd.revents = 0;
		rc = poll(&pfd, 1, left > 60000 ? 60000 : (int)left);
		if (rc > 0)
			return 0;
		if (rc == -1 && errno != EINTR) {
			*res = MSIEVE_PROTOCOL;
			return -1;
		}
	}
}

/* What a lost connection means: no ManageSieve there before its
 * greeting, a broken exchange after. */
static int lost(const struct msieve *s)
{
	return s->greeted ? MSIEVE_PROTOCOL : MSIEVE_UNAVAILABLE;
}

/* One read or write through TLS or not: bytes moved, 0 to wait for
 * *events, -1 when the connection is lost. */
static ssize_t io_once(struct msieve *s, char *p, size_t n, int writing,
    short *events)
{
	ssize_t k;
	int e;

	if (s->ssl == NULL) {
		k = writing ? send(s->fd, p, n, MSG_NOSIGNAL) : recv(s->fd, p, n, 0);
		*events = writing ? POLLOUT : POLLIN;
		if (k == -1 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
			return 0;
		return k > 0 ? k : -1;
	}
	ERR_clear_error();
	k = writing ? SSL_write(s->ssl, p, (int)n) : SSL_read(s->ssl, p, (int)n);
	if (k > 0)
		return k;
	e = SSL_get_error(s->ssl, (int)k);
	*events = e == SSL_ERROR_WANT_WRITE ? POLLOUT : POLLIN;
	return e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE ? 0 : -1;
}

/* Writes all of p: 0, or a result other than MSIEVE_OK. */
static int send_all(struct msieve *s, const char *p, size_t n)
{
	ssize_t k;
	short ev;
	int res;

	while (n > 0) {
		if ((k = io_once(s, (char *)(uintptr_t)p, n > 65536 ? 65536 : n, 1, &ev)) == -1)
			return lost(s);
		if (k == 0 && wait_fd(s, ev, s->deadline, &res) == -1)
			return res;
		p += k;
		n -= (size_t)k;
	}
	return MSIEVE_OK;
}

/* Reads what comes (at least a byte) into s->in: 0, or a result. */
static int fill(struct msieve *s)
{
	char chunk[16384];
	ssize_t k;
	short ev;
	int res;

	for (;;) {
		if ((k = io_once(s, chunk, sizeof(chunk), 0, &ev)) == -1)
			return lost(s);
		if (k > 0)
			break;
		if (wait_fd(s, ev, s->deadline, &res) == -1)
			return res;
	}
	res = buf_append(&s->in, chunk, (size_t)k) == -1 ? MSIEVE_PROTOCOL : MSIEVE_OK;
	OPENSSL_cleanse(chunk, sizeof(chunk));
	return res;
}

/* Reads one whole answer into s->resp: MSIEVE_OK, or the failure. With
 * sasl set, a whole data line is a SASL continuation (RFC 5804 2.1: the
 * server asks for another step of the mechanism): it is cancelled with
 * "*" and the result is MSIEVE_REFUSED, without waiting for the rest. */
static int read_answer(struct msieve *s, int sasl)
{
	size_t used = 0;
	int rc, res;

	for (;;) {
		rc = msieve_parse(buf_str(&s->in), s->in.len, &s->resp, &used);
		if (rc == MSIEVE_BAD)
			return lost(s);
		if (rc == MSIEVE_PARSED)
			break;
		if (sasl && s->resp.n_items > 0) {
			log_warn("sieve: %s asked for more than PLAIN's one step",
			    s->o->host);
			(void)send_all(s, "*\r\n", 3);
			return MSIEVE_REFUSED;
		}
		while (s->in.len < used)
			if ((res = fill(s)) != MSIEVE_OK)
				return res;
	}
	memmove(s->in.data, s->in.data + used, s->in.len - used + 1);
	s->in.len -= used;
	return MSIEVE_OK;
}

static int answer(struct msieve *s)
{
	return read_answer(s, 0);
}

/* Sends a command and reads its answer: OK, NO (s->resp says why), or
 * the failure (a BYE is one: the server ended the session); sasl as
 * read_answer says. */
static int exchange(struct msieve *s, const char *p, size_t n, int sasl)
{
	int res;

	if (s->failed)
		return MSIEVE_PROTOCOL;
	if ((res = send_all(s, p, n)) == MSIEVE_OK)
		res = read_answer(s, sasl);
	if (res == MSIEVE_OK && s->resp.status == MSIEVE_ST_BYE)
		res = MSIEVE_PROTOCOL;
	if (res != MSIEVE_OK) {
		s->failed = 1;
		return res;
	}
	return s->resp.status == MSIEVE_ST_OK ? MSIEVE_OK : MSIEVE_NO;
}

static int command(struct msieve *s, const char *p, size_t n)
{
	return exchange(s, p, n, 0);
}

/* --- Connecting --------------------------------------------------------- */

void msieve_init(struct msieve *s, const struct msieve_opts *o)
{
	memset(s, 0, sizeof(*s));
	s->o = o;
	s->fd = -1;
	s->deadline = now_ms() + o->timeout * 1000;
	/* an answer holds at most a script and its lines */
	buf_init(&s->in, o->max + MSIEVE_ITEMS_MAX * (MSIEVE_LINE_MAX + 2));
	msieve_resp_init(&s->resp, o->max);
}

/* Whether host is an IPv4 or IPv6 literal. */
static int host_is_ip(const char *host)
{
	unsigned char ip[16];

	return inet_pton(AF_INET, host, ip) == 1 ||
	    inet_pton(AF_INET6, host, ip) == 1;
}

/* One address within the connect deadline: 0, or -1 with *res set. */
static int connect_one(struct msieve *s, const struct addrinfo *ai,
    long long deadline, int *res)
{
	socklen_t len = sizeof(int);
	int err = 0;

	if ((s->fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, ai->ai_protocol)) == -1) {
		*res = MSIEVE_UNAVAILABLE;
		return -1;
	}
	if (connect(s->fd, ai->ai_addr, ai->ai_addrlen) == 0)
		return 0;
	*res = MSIEVE_UNAVAILABLE;
	if (errno == EINPROGRESS && wait_fd(s, POLLOUT, deadline, res) == 0 &&
	    getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0)
		return 0;
	close(s->fd);
	s->fd = -1;
	return -1;
}

int msieve_connect(struct msieve *s)
{
	struct addrinfo hints, *list = NULL, *ai;
	struct addr a;
	long long deadline = now_ms() + s->o->connect_timeout * 1000;
	int rc, res = MSIEVE_UNAVAILABLE;

	if (deadline > s->deadline)
		deadline = s->deadline;
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	/* An IP literal is no lookup at all. A name is looked up before the
	 * clock below can bound it: getaddrinfo waits as long as the
	 * resolver's own timeouts and attempts say (resolv.conf), there is
	 * no asynchronous resolver here (docs/DECISIONS.md, "Filters and
	 * vacation (ManageSieve)"). */
	hints.ai_flags = AI_NUMERICSERV | (host_is_ip(s->o->host) ?
	    AI_NUMERICHOST : AI_ADDRCONFIG);
	if ((rc = getaddrinfo(s->o->host, s->o->port, &hints, &list)) != 0) {
		log_warn("sieve: %s: %s", s->o->host, gai_strerror(rc));
		return MSIEVE_UNAVAILABLE;
	}
	for (ai = list; ai; ai = ai->ai_next) {
		if (connect_one(s, ai, deadline, &res) == 0) {
			s->loopback = addr_from_sockaddr(ai->ai_addr, ai->ai_addrlen, &a) == 0 &&
			    addr_classify(&a) == ADDR_LOOPBACK;
			res = MSIEVE_OK;
			break;
		}
		if (res == MSIEVE_TIMEOUT)
			break;
	}
	freeaddrinfo(list);
	if (res != MSIEVE_OK)
		log_warn("sieve: %s port %s: %s", s->o->host, s->o->port,
		    res == MSIEVE_TIMEOUT ? "no connection in time" : "refused");
	return res;
}

/* Whether the space-separated list holds word, in any case. */
static int has_word(const char *list, const char *word)
{
	size_t n = strlen(word), k;

	while (*list) {
		k = strcspn(list, " ");
		if (k == n && !strncasecmp(list, word, n))
			return 1;
		list += k;
		list += strspn(list, " ");
	}
	return 0;
}

/* The SIEVE capability into s->sieve; a list too long for it is cut
 * after its last whole word (the UI then offers fewer extensions:
 * better than no filters at all for a server that lists many). */
static void sieve_exts(struct msieve *s, const char *v)
{
	size_t n = strlen(v);

	if (n >= sizeof(s->sieve)) {
		log_warn("sieve: %s lists more SIEVE extensions than %zu bytes; "
		    "the rest left out", s->o->host, sizeof(s->sieve) - 1);
		n = sizeof(s->sieve) - 1;
		/* v[n] is the first byte left out: a cut inside a word? */
		while (n > 0 && v[n] != ' ')
			n--;
	}
	memcpy(s->sieve, v, n);
	s->sieve[n] = '\0';
}

/* The capabilities of the answer just read (the greeting, or its repeat
 * after STARTTLS). */
static void capabilities(struct msieve *s)
{
	const struct msieve_resp *m = &s->resp;
	const char *k, *v;
	int i;

	s->starttls = s->plain = 0;
	s->sieve[0] = '\0';
	for (i = 0; i < m->n_items; i++) {
		k = msieve_key(m, i);
		v = msieve_val(m, i);
		if (!strcasecmp(k, "STARTTLS"))
			s->starttls = 1;
		else if (!strcasecmp(k, "SASL"))
			s->plain = has_word(v, "PLAIN");
		else if (!strcasecmp(k, "SIEVE"))
			sieve_exts(s, v);
	}
}

/* A greeting is an OK with SIEVE among its capabilities (RFC 5804
 * 1.7: IMPLEMENTATION and SIEVE are always there). */
static int greeting(struct msieve *s)
{
	int res, i;

	if ((res = answer(s)) != MSIEVE_OK)
		return res;
	for (i = 0; i < s->resp.n_items; i++)
		if (!strcasecmp(msieve_key(&s->resp, i), "SIEVE"))
			break;
	if (s->resp.status != MSIEVE_ST_OK || i == s->resp.n_items)
		return MSIEVE_UNAVAILABLE;
	capabilities(s);
	s->greeted = 1;
	return MSIEVE_OK;
}

static int tls_ctx(struct msieve *s)
{
	if ((s->ctx = SSL_CTX_new(TLS_client_method())) == NULL ||
	    SSL_CTX_set_min_proto_version(s->ctx, TLS1_2_VERSION) != 1 ||
	    SSL_CTX_set_default_verify_paths(s->ctx) != 1 ||
	    (s->o->ca_file && SSL_CTX_load_verify_locations(s->ctx,
	    s->o->ca_file, NULL) != 1))
		return -1;
	SSL_CTX_set_verify(s->ctx, SSL_VERIFY_PEER, NULL);
	if ((s->ssl = SSL_new(s->ctx)) == NULL || SSL_set_fd(s->ssl, s->fd) != 1)
		return -1;
	/* The certificate must name the host: its address when it is one. */
	if (host_is_ip(s->o->host))
		return X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(s->ssl),
		    s->o->host) == 1 ? 0 : -1;
	if (SSL_set_tlsext_host_name(s->ssl, s->o->host) != 1 ||
	    SSL_set1_host(s->ssl, s->o->host) != 1)
		return -1;
	return 0;
}

/* Logs why the handshake failed: the certificate's fault, or TLS's. */
static void tls_failed(const struct msieve *s)
{
	long v = SSL_get_verify_result(s->ssl);
	const char *why = ERR_peek_error() ?
	    ERR_reason_error_string(ERR_peek_error()) : NULL;

	if (v != X509_V_OK)
		why = X509_verify_cert_error_string(v);
	log_warn("sieve: TLS with %s failed: %s", s->o->host,
	    why ? why : "the connection closed");
}

static int handshake(struct msieve *s)
{
	int rc, e, res;

	for (;;) {
		ERR_clear_error();
		if ((rc = SSL_connect(s->ssl)) == 1)
			return MSIEVE_OK;
		e = SSL_get_error(s->ssl, rc);
		if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) {
			tls_failed(s);
			return MSIEVE_UNAVAILABLE;
		}
		if (wait_fd(s, e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT,
		    s->deadline, &res) == -1)
			return res;
	}
}

/* STARTTLS, the handshake, and the capabilities the server repeats
 * under TLS (RFC 5804 2.2). Nothing may wait in s->in from before: it
 * would pass for an answer under TLS. */
static int starttls(struct msieve *s)
{
	static const char cmd[] = "STARTTLS\r\n";
	int res;

	if ((res = command(s, cmd, sizeof(cmd) - 1)) != MSIEVE_OK)
		return res == MSIEVE_NO ? MSIEVE_UNAVAILABLE : res;
	if (s->in.len > 0)
		return MSIEVE_PROTOCOL;
	if (tls_ctx(s) == -1) {
		log_err("sieve: TLS set-up failed (upstream_ca_file?)");
		return MSIEVE_UNAVAILABLE;
	}
	if ((res = handshake(s)) != MSIEVE_OK)
		return res;
	if ((res = answer(s)) != MSIEVE_OK)
		return res;
	if (s->resp.status != MSIEVE_ST_OK)
		return MSIEVE_PROTOCOL;
	capabilities(s);
	return MSIEVE_OK;
}

/* Whether to use TLS: 1, 0, or -1 when the policy refuses the server
 * (a password never crosses a network in clear). */
static int tls_wanted(const struct msieve *s)
{
	if (s->o->tls == MSIEVE_TLS_NO)
		return 0;
	if (s->starttls)
		return 1;
	return s->o->tls == MSIEVE_TLS_AUTO && s->loopback ? 0 : -1;
}

/* AUTHENTICATE "PLAIN" with base64("\0user\0pass") (RFC 4616). */
static int authenticate(struct msieve *s, const char *user, const char *pass)
{
	size_t nu = strlen(user), np = strlen(pass), n = nu + np + 2;
	unsigned char *raw = NULL;
	struct buf cmd;
	int res = MSIEVE_PROTOCOL;

	if (!s->plain) {
		log_warn("sieve: %s offers no SASL PLAIN", s->o->host);
		return MSIEVE_UNAVAILABLE;
	}
	buf_init(&cmd, 64 + (n + 2) / 3 * 4);
	if (n > 8192 || (raw = malloc(n)) == NULL ||
	    buf_puts(&cmd, "AUTHENTICATE \"PLAIN\" \"") == -1 ||
	    buf_extend(&cmd, (n + 2) / 3 * 4 + 1) == NULL)
		goto out;
	raw[0] = '\0';
	memcpy(raw + 1, user, nu);
	raw[1 + nu] = '\0';
	memcpy(raw + 2 + nu, pass, np);
	cmd.len = 22 + (size_t)EVP_EncodeBlock((unsigned char *)cmd.data + 22, raw, (int)n);
	if (buf_puts(&cmd, "\"\r\n") == -1)
		goto out;
	res = exchange(s, cmd.data, cmd.len, 1);
	if (res == MSIEVE_NO)
		res = MSIEVE_REFUSED;
out:
	if (raw)
		OPENSSL_cleanse(raw, n);
	free(raw);
	buf_wipe_free(&cmd);
	return res;
}

int msieve_login(struct msieve *s, const char *user, const char *pass)
{
	int res, tls;

	if ((res = greeting(s)) != MSIEVE_OK)
		goto out;
	if ((tls = tls_wanted(s)) == -1) {
		log_warn("sieve: %s offers no STARTTLS; not sending a "
		    "password in clear (sieve_tls)", s->o->host);
		res = MSIEVE_UNAVAILABLE;
		goto out;
	}
	if (tls && (res = starttls(s)) != MSIEVE_OK)
		goto out;
	res = authenticate(s, user, pass);
out:
	if (res != MSIEVE_OK)
		s->failed = 1;
	return res;
}

/* --- Commands ----------------------------------------------------------- */

int msieve_listscripts(struct msieve *s)
{
	static const char cmd[] = "LISTSCRIPTS\r\n";

	return command(s, cmd, sizeof(cmd) - 1);
}

/* A name as a quoted string (RFC 5804 1.6): 0, or -1 when it cannot be
 * one (CR, LF, NUL, too long). */
static int put_name(struct buf *b, const char *name)
{
	const char *p;

	if (strlen(name) > 1024 || strpbrk(name, "\r\n") != NULL ||
	    buf_putc(b, ' ') == -1 || buf_putc(b, '"') == -1)
		return -1;
	for (p = name; *p; p++)
		if (((*p == '"' || *p == '\\') && buf_putc(b, '\\') == -1) ||
		    buf_putc(b, *p) == -1)
			return -1;
	return buf_putc(b, '"');
}

/* COMMAND ["name"] [{n+} script]. */
static int command_with(struct msieve *s, const char *verb, const char *name,
    const char *script, size_t len)
{
	struct buf cmd;
	int res = MSIEVE_PROTOCOL;

	buf_init(&cmd, len + 2 * 1024 + 64);
	if (buf_puts(&cmd, verb) == 0 &&
	    (name == NULL || put_name(&cmd, name) == 0) &&
	    (script == NULL || (buf_printf(&cmd, " {%zu+}\r\n", len) == 0 &&
	    buf_append(&cmd, script, len) == 0)) &&
	    buf_puts(&cmd, "\r\n") == 0)
		res = command(s, cmd.data, cmd.len);
	buf_free(&cmd);
	return res;
}

int msieve_getscript(struct msieve *s, const char *name)
{
	int res = command_with(s, "GETSCRIPT", name, NULL, 0);

	/* Its answer is the script as one literal. */
	if (res == MSIEVE_OK && s->resp.n_items != 1)
		res = MSIEVE_PROTOCOL;
	return res;
}

int msieve_putscript(struct msieve *s, const char *name, const char *script,
    size_t len)
{
	return command_with(s, "PUTSCRIPT", name, script, len);
}

int msieve_checkscript(struct msieve *s, const char *script, size_t len)
{
	return command_with(s, "CHECKSCRIPT", NULL, script, len);
}

int msieve_setactive(struct msieve *s, const char *name)
{
	return command_with(s, "SETACTIVE", name, NULL, 0);
}

void msieve_close(struct msieve *s)
{
	static const char cmd[] = "LOGOUT\r\n";

	/* LOGOUT is a courtesy: its answer is awaited a second at most. */
	if (s->deadline > now_ms() + 1000)
		s->deadline = now_ms() + 1000;
	if (s->fd != -1 && s->greeted && !s->failed)
		(void)command(s, cmd, sizeof(cmd) - 1);
	if (s->ssl) {
		if (!s->failed)
			(void)SSL_shutdown(s->ssl);
		SSL_free(s->ssl);
	}
	SSL_CTX_free(s->ctx);
	if (s->fd != -1)
		close(s->fd);
	buf_wipe_free(&s->in);
	msieve_resp_free(&s->resp);
	s->ssl = NULL;
	s->ctx = NULL;
	s->fd = -1;
}
