/* cfg: postern.conf, read once per process at start-up into a struct of
 * typed fields. Every key is declared in one table (cfg.c) with its type,
 * default and bounds; an unknown key or a bad value is an error naming
 * file:line, and the program stops. */
#ifndef POSTERN_CFG_H
#define POSTERN_CFG_H

#include <stddef.h>
#include <stdio.h>

#define CFG_MAX_PROXIES 16

enum cfg_secure { CFG_SECURE_AUTO, CFG_SECURE_YES, CFG_SECURE_NO };
/* How pushd follows accounts (cfg_push_modes names them). */
enum cfg_push {
	CFG_PUSH_AUTO, CFG_PUSH_SUBSCRIPTION, CFG_PUSH_RELAY, CFG_PUSH_POLL,
	CFG_PUSH_OFF
};
extern const char *const cfg_push_modes[];
/* How the filters' ManageSieve connection is protected (the order of
 * enum msieve_tls). */
enum cfg_sieve_tls { CFG_SIEVE_TLS_AUTO, CFG_SIEVE_TLS_STARTTLS, CFG_SIEVE_TLS_NO };

struct cfg {
	char *name;                 /* shown on the sign-in page */
	char *upstream;             /* JMAP server base URL, http(s)://host[:port] */
	char *upstream_session_path;
	char *carddav_path;         /* the DAV tree below upstream, or "off" */
	int upstream_follow_advertised;
	char *sieve_host;           /* ManageSieve: NULL = upstream's host, or "off" */
	long sieve_port;
	int sieve_tls;              /* enum cfg_sieve_tls */
	char *upstream_ca_file;     /* extra CA bundle for the upstream, or NULL */
	long upstream_connect_timeout;  /* seconds */
	long upstream_timeout;          /* seconds */
	long login_timeout;             /* seconds for a sign-in's call */
	char *state_db;
	char *secret_file;
	long session_idle;          /* seconds */
	long session_remember_idle; /* seconds, "this is my own device" */
	long session_lifetime;      /* seconds, absolute */
	/* seconds: how long the mail server's last acceptance of a session
	 * stands for routes that do not ask it themselves */
	long session_recheck;
	int cookie_secure;          /* enum cfg_secure */
	long login_limit_user;      /* failures per address+username per window */
	long login_limit_ip;        /* failures per address per window */
	long login_limit_all;       /* flood ceiling: failures per window, all
	                               addresses (see login.c) */
	long login_window;          /* seconds */
	long login_ipv6_prefix;     /* an IPv6 client's address: its /N */
	long api_budget;            /* requests per session per window, 0 = off */
	long api_budget_window;     /* seconds */
	long long max_request;      /* bytes of a JMAP request body */
	long long upload_max;       /* bytes of an upload */
	int compress;
	int image_proxy;
	long long image_proxy_max;  /* bytes of one proxied image */
	long image_proxy_timeout;   /* seconds for one proxied image */
	/* Lets the image proxy fetch from loopback: for the tests' own origin,
	 * never for a real installation. */
	int image_proxy_allow_loopback_for_tests;
	char *trusted_proxies[CFG_MAX_PROXIES];
	int n_trusted_proxies;
	int log_level;              /* enum log_level */
	int push_mode;              /* enum cfg_push */
	long push_poll_interval;    /* seconds */
	long push_poll_visible;     /* seconds, while a tab is visible */
	char *push_public_url;      /* https origin the JMAP server calls back */
	long push_idle;             /* a subscription kept this long without tabs */
	long push_verify_timeout;   /* a subscription's verification awaited */
	long push_expiry;           /* a subscription's lifetime asked for */
	long push_renew;            /* renewed when less than this is left */
	long push_streams_per_session;  /* event streams at once, 0 = no cap */
	long push_streams_per_ip;   /* the same per address (an IPv6 /64) */
	char *pushd_socket;
	char *node_name;            /* this node's name among those sharing
	                               state_db; default: the host name */
	int webpush;                /* Web Push to devices: on or off */
	char *webpush_key_file;     /* the VAPID key pair (PEM) */
	char *webpush_subject;      /* VAPID "sub": mailto: or https:, or NULL */
	char *webpush_hosts;        /* push services allowed, or NULL: any */
	long webpush_coalesce;      /* seconds a burst of mail is gathered */
	long webpush_ttl;           /* seconds a push service keeps a message */
	long webpush_timeout;       /* seconds for one push to be taken */
	char *webpush_ca_file;      /* extra CA bundle for push services */
	/* Lets pushd push to loopback: for the tests' own push service, never
	 * for a real installation. */
	int webpush_allow_loopback_for_tests;
};

/* Fills c with the defaults. */
void cfg_defaults(struct cfg *c);
/* Reads path over the defaults. Returns 0, or -1 with a "file:line: what"
 * message in err. */
int cfg_load(struct cfg *c, const char *path, char *err, size_t errlen);
/* The same over an open stream, named name in messages (the fuzz target
 * feeds it from memory). */
int cfg_load_file(struct cfg *c, FILE *f, const char *name, char *err,
    size_t errlen);
/* Parses one "key = value" assignment (used by cfg_load and the tests). */
int cfg_set(struct cfg *c, const char *key, const char *value,
    char *err, size_t errlen);
/* Checks what only the whole file can tell (required keys). */
int cfg_check(const struct cfg *c, char *err, size_t errlen);
/* There is an address book: carddav_path is set and not "off". */
int cfg_carddav_on(const struct cfg *c);
/* There are filters: sieve_host is not "off". */
int cfg_sieve_on(const struct cfg *c);
/* Whether a push service's host may be pushed to: 1 when webpush_hosts
 * is unset or names it (case aside), else 0. */
int cfg_webpush_host_allowed(const struct cfg *c, const char *host);
void cfg_free(struct cfg *c);

/* The value parsers, exposed for the tests: 0 or -1. */
int cfg_parse_duration(const char *s, long *out);
int cfg_parse_size(const char *s, long long *out);
int cfg_parse_bool(const char *s, int *out);

#endif
