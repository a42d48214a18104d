/* msieve: a ManageSieve (RFC 5804) client, for the filters and vacation
 * routes (sieve.c). One blocking connection per request, every wait
 * bounded by poll() against the request's deadline: the greeting and its
 * capabilities, STARTTLS with the certificate checked against the host
 * name, AUTHENTICATE "PLAIN" with the session's credentials, then
 * LISTSCRIPTS, GETSCRIPT, PUTSCRIPT, CHECKSCRIPT, SETACTIVE and LOGOUT.
 * The server's answers go through msieve_resp.c's parser. */
#ifndef POSTERN_MSIEVE_H
#define POSTERN_MSIEVE_H

#include <stddef.h>

#include <openssl/ssl.h>

#include "buf.h"
#include "msieve_resp.h"

/* What a command or the sign-in came to. */
enum msieve_res {
	MSIEVE_OK,
	MSIEVE_NO,           /* the command's NO: resp holds code and text */
	/* No ManageSieve there: refused, reset, not its greeting, no TLS
	 * where it is needed, a certificate that does not verify. */
	MSIEVE_UNAVAILABLE,
	MSIEVE_REFUSED,      /* the credentials were refused */
	MSIEVE_TIMEOUT,
	MSIEVE_PROTOCOL      /* garbage, a BYE, a reset after the greeting */
};

enum msieve_tls { MSIEVE_TLS_AUTO, MSIEVE_TLS_STARTTLS, MSIEVE_TLS_NO };

struct msieve_opts {
	const char *host;         /* a name or an IP literal (no brackets) */
	const char *port;
	int tls;                  /* enum msieve_tls */
	const char *ca_file;      /* beside the system's CAs, or NULL */
	long connect_timeout;     /* seconds */
	long timeout;             /* seconds for the whole exchange */
	size_t max;               /* bytes of a script */
};

struct msieve {
	const struct msieve_opts *o;
	int fd;
	int loopback;             /* the peer is a loopback address */
	int greeted;              /* a ManageSieve greeting came */
	int failed;               /* the connection is of no further use */
	long long deadline;       /* monotonic ms, the whole exchange */
	SSL_CTX *ctx;
	SSL *ssl;
	struct buf in;            /* read, not yet parsed */
	struct msieve_resp resp;  /* the last answer */
	/* The capabilities, from the last greeting. */
	int starttls, plain;
	/* The SIEVE extensions, space-separated; a longer list is cut
	 * after its last whole word that fits. */
	char sieve[1024];
};

/* Starts the exchange's clock; nothing is opened yet. */
void msieve_init(struct msieve *s, const struct msieve_opts *o);
/* Connects to o->host:o->port within connect_timeout. */
int msieve_connect(struct msieve *s);
/* Reads the greeting on s->fd, STARTTLS as o->tls says, then signs in. */
int msieve_login(struct msieve *s, const char *user, const char *pass);
/* The commands: MSIEVE_OK with the answer in s->resp (LISTSCRIPTS: an
 * item per script, GETSCRIPT: item 0 the script), or another result. */
int msieve_listscripts(struct msieve *s);
int msieve_getscript(struct msieve *s, const char *name);
int msieve_putscript(struct msieve *s, const char *name, const char *script,
    size_t len);
int msieve_checkscript(struct msieve *s, const char *script, size_t len);
int msieve_setactive(struct msieve *s, const char *name);
/* LOGOUT when the connection is still good, then closes and frees. */
void msieve_close(struct msieve *s);

/* A script name postern writes: [A-Za-z0-9._ -]{1,64}. */
int msieve_name_ok(const char *name);

#endif
