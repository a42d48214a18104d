#include "cfg.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "log.h"

enum cfg_type { T_STR, T_URL, T_BOOL, T_INT, T_DURATION, T_SIZE, T_ENUM, T_LIST };

struct cfg_key {
	const char *name;
	enum cfg_type type;
	size_t off;
	long long min, max;          /* for numbers */
	const char *const *choices;  /* for enums; index is the value */
	const char *def;             /* the default, as written; NULL: none */
};

static const char *const secure_choices[] = { "auto", "yes", "no", NULL };
static const char *const level_choices[] = { "error", "warning", "info", "debug", NULL };
static const char *const sieve_tls_choices[] = { "auto", "starttls", "no", NULL };
const char *const cfg_push_modes[] = { "auto", "subscription", "relay", "poll", "off", NULL };

static int set_value(struct cfg *c, const struct cfg_key *k, const char *value);

#define O(f) offsetof(struct cfg, f)
#define DAY (86400LL)
static const struct cfg_key cfg_keys[] = {
	{ "name", T_STR, O(name), 0, 0, NULL, "postern" },
	{ "upstream", T_URL, O(upstream), 0, 0, NULL, NULL },
	{ "upstream_session_path", T_STR, O(upstream_session_path), 0, 0, NULL,
	    "/.well-known/jmap" },
	/* Cyrus's and Stalwart's DAV trees (Stalwart's address books are
	 * below /dav/card/). */
	{ "carddav_path", T_STR, O(carddav_path), 0, 0, NULL, "/dav/" },
	/* ManageSieve (RFC 5804) for filters and vacation: by default on the
	 * mail server's host, at its registered port. */
	{ "sieve_host", T_STR, O(sieve_host), 0, 0, NULL, NULL },
	{ "sieve_port", T_INT, O(sieve_port), 1, 65535, NULL, "4190" },
	{ "sieve_tls", T_ENUM, O(sieve_tls), 0, 0, sieve_tls_choices, "auto" },
	{ "upstream_follow_advertised", T_BOOL, O(upstream_follow_advertised), 0, 0, NULL,
	    "no" },
	{ "upstream_ca_file", T_STR, O(upstream_ca_file), 0, 0, NULL, NULL },
	{ "upstream_connect_timeout", T_DURATION, O(upstream_connect_timeout), 1, 300, NULL,
	    "5" },
	{ "upstream_timeout", T_DURATION, O(upstream_timeout), 1, 3600, NULL,
	    "60" },
	{ "login_timeout", T_DURATION, O(login_timeout), 1, 300, NULL, "10" },
	{ "state_db", T_STR, O(state_db), 0, 0, NULL,
	    LOCALSTATEDIR "/lib/postern/state.db" },
	{ "secret_file", T_STR, O(secret_file), 0, 0, NULL,
	    LOCALSTATEDIR "/lib/postern/secret" },
	{ "session_idle", T_DURATION, O(session_idle), 60, 365 * DAY, NULL,
	    "12h" },
	{ "session_remember_idle", T_DURATION, O(session_remember_idle), 60, 365 * DAY, NULL,
	    "30d" },
	{ "session_lifetime", T_DURATION, O(session_lifetime), 60, 3650 * DAY, NULL,
	    "90d" },
	{ "session_recheck", T_DURATION, O(session_recheck), 1, 3600, NULL,
	    "60" },
	{ "cookie_secure", T_ENUM, O(cookie_secure), 0, 0, secure_choices,
	    "auto" },
	{ "login_limit_user", T_INT, O(login_limit_user), 1, 1000000, NULL,
	    "10" },
	{ "login_limit_ip", T_INT, O(login_limit_ip), 1, 1000000, NULL, "50" },
	{ "login_limit_all", T_INT, O(login_limit_all), 1, 100000000, NULL,
	    "1000" },
	{ "login_window", T_DURATION, O(login_window), 1, DAY, NULL, "15m" },
	{ "login_ipv6_prefix", T_INT, O(login_ipv6_prefix), 1, 128, NULL,
	    "64" },
	{ "api_budget", T_INT, O(api_budget), 0, 100000000, NULL, "1200" },
	{ "api_budget_window", T_DURATION, O(api_budget_window), 1, DAY, NULL,
	    "60" },
	{ "max_request", T_SIZE, O(max_request), 1024, 1LL << 30, NULL, "10M" },
	{ "upload_max", T_SIZE, O(upload_max), 1024, 1LL << 40, NULL, "50M" },
	{ "compress", T_BOOL, O(compress), 0, 0, NULL, "yes" },
	{ "image_proxy", T_BOOL, O(image_proxy), 0, 0, NULL, "yes" },
	{ "image_proxy_max", T_SIZE, O(image_proxy_max), 1024, 1LL << 30, NULL,
	    "10M" },
	{ "image_proxy_timeout", T_DURATION, O(image_proxy_timeout), 1, 300, NULL,
	    "15" },
	{ "image_proxy_allow_loopback_for_tests", T_BOOL, O(image_proxy_allow_loopback_for_tests), 0, 0, NULL,
	    "no" },
	{ "trusted_proxies", T_LIST, O(trusted_proxies), 0, 0, NULL, NULL },
	{ "log_level", T_ENUM, O(log_level), 0, 0, level_choices, "info" },
	{ "push_mode", T_ENUM, O(push_mode), 0, 0, cfg_push_modes, "auto" },
	{ "push_poll_interval", T_DURATION, O(push_poll_interval), 1, DAY, NULL,
	    "30" },
	/* 4 s: new mail in a visible tab within 5 s end to end, which also
	 * takes one poll's answer and the tab's refresh (up to 0.2 s measured
	 * on Cyrus, more on a loaded machine). */
	{ "push_poll_visible", T_DURATION, O(push_poll_visible), 1, DAY, NULL,
	    "4" },
	{ "push_public_url", T_URL, O(push_public_url), 0, 0, NULL, NULL },
	{ "push_idle", T_DURATION, O(push_idle), 1, 7 * DAY, NULL, "600" },
	{ "push_verify_timeout", T_DURATION, O(push_verify_timeout), 1, DAY, NULL,
	    "180" },
	{ "push_expiry", T_DURATION, O(push_expiry), 10, 7 * DAY, NULL, "7d" },
	{ "push_renew", T_DURATION, O(push_renew), 5, 7 * DAY, NULL, "2d" },
	{ "push_streams_per_session", T_INT, O(push_streams_per_session), 0, 1000000, NULL,
	    "4" },
	{ "push_streams_per_ip", T_INT, O(push_streams_per_ip), 0, 1000000, NULL,
	    "256" },
	{ "pushd_socket", T_STR, O(pushd_socket), 0, 0, NULL,
	    RUNDIR "/pushd.sock" },
	/* Several nodes on one state_db (PostgreSQL): each one's name. */
	{ "node_name", T_STR, O(node_name), 0, 0, NULL, NULL },
	/* Web Push (RFC 8030/8291/8292) from pushd to devices with every tab
	 * closed. The key pair is made by postern-admin init (or pushd) beside
	 * the secret. */
	{ "webpush", T_BOOL, O(webpush), 0, 0, NULL, "yes" },
	{ "webpush_key_file", T_STR, O(webpush_key_file), 0, 0, NULL,
	    LOCALSTATEDIR "/lib/postern/vapid.pem" },
	{ "webpush_subject", T_STR, O(webpush_subject), 0, 0, NULL, NULL },
	{ "webpush_hosts", T_STR, O(webpush_hosts), 0, 0, NULL, NULL },
	/* 5 s: a burst of mail (a list's digest, a sync) is one notification,
	 * and the first of it is still seen within seconds. */
	{ "webpush_coalesce", T_DURATION, O(webpush_coalesce), 1, 600, NULL, "5" },
	{ "webpush_ttl", T_DURATION, O(webpush_ttl), 0, 28 * DAY, NULL, "1d" },
	{ "webpush_timeout", T_DURATION, O(webpush_timeout), 1, 300, NULL, "10" },
	{ "webpush_ca_file", T_STR, O(webpush_ca_file), 0, 0, NULL, NULL },
	{ "webpush_allow_loopback_for_tests", T_BOOL, O(webpush_allow_loopback_for_tests), 0, 0, NULL,
	    "no" },
};
#undef O

static char *xstrdup(const char *s)
{
	char *p = strdup(s);

	if (p == NULL) {
		fputs("postern: out of memory\n", stderr);
		abort();
	}
	return p;
}

void cfg_defaults(struct cfg *c)
{
	size_t i;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < sizeof(cfg_keys) / sizeof(cfg_keys[0]); i++)
		if (cfg_keys[i].def && set_value(c, &cfg_keys[i], cfg_keys[i].def)) {
			fprintf(stderr, "postern: bad default for %s\n",
			    cfg_keys[i].name);
			abort();
		}
}

/* A whole number with an optional unit, every byte checked. */
static int parse_scaled(const char *s, long long *out, const char *units,
    const long long *scale)
{
	char *end;
	long long v;
	const char *u;

	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || v < 0)
		return -1;
	if (*end != '\0') {
		if (end[1] != '\0' || (u = strchr(units, *end)) == NULL)
			return -1;
		if (v > LLONG_MAX / scale[u - units])
			return -1;
		v *= scale[u - units];
	}
	*out = v;
	return 0;
}

int cfg_parse_duration(const char *s, long *out)
{
	static const long long scale[] = { 1, 60, 3600, 86400 };
	long long v;

	if (parse_scaled(s, &v, "smhd", scale) == -1 || v > LONG_MAX)
		return -1;
	*out = (long)v;
	return 0;
}

int cfg_parse_size(const char *s, long long *out)
{
	static const long long scale[] = { 1LL << 10, 1LL << 20, 1LL << 30 };

	return parse_scaled(s, out, "KMG", scale);
}

int cfg_parse_bool(const char *s, int *out)
{
	if (!strcmp(s, "yes") || !strcmp(s, "true") || !strcmp(s, "on"))
		*out = 1;
	else if (!strcmp(s, "no") || !strcmp(s, "false") || !strcmp(s, "off"))
		*out = 0;
	else
		return -1;
	return 0;
}

static int parse_enum(const char *s, const char *const *choices, int *out)
{
	int i;

	for (i = 0; choices[i]; i++)
		if (!strcmp(s, choices[i])) {
			*out = i;
			return 0;
		}
	return -1;
}

/* http(s)://host[:port][/path], no credentials, no fragment, no spaces. */
static int check_url(const char *s)
{
	const char *p;

	if (!strncmp(s, "http://", 7))
		p = s + 7;
	else if (!strncmp(s, "https://", 8))
		p = s + 8;
	else
		return -1;
	if (*p == '\0' || *p == '/' || strpbrk(s, "@# \t\"<>\\") != NULL)
		return -1;
	return 0;
}

static int set_list(struct cfg *c, const char *value)
{
	char *copy = xstrdup(value), *save = NULL, *tok;
	int rc = 0;

	while (c->n_trusted_proxies > 0)
		free(c->trusted_proxies[--c->n_trusted_proxies]);
	for (tok = strtok_r(copy, " ,\t", &save); tok;
	    tok = strtok_r(NULL, " ,\t", &save)) {
		if (c->n_trusted_proxies == CFG_MAX_PROXIES) {
			rc = -1;
			break;
		}
		c->trusted_proxies[c->n_trusted_proxies++] = xstrdup(tok);
	}
	free(copy);
	return rc;
}

static int set_number(const struct cfg_key *k, char *field, const char *value)
{
	long long v;
	long lv;
	char *end;

	if (k->type == T_SIZE) {
		if (cfg_parse_size(value, &v) == -1)
			return -1;
	} else if (k->type == T_DURATION) {
		if (cfg_parse_duration(value, &lv) == -1)
			return -1;
		v = lv;
	} else {
		errno = 0;
		v = strtoll(value, &end, 10);
		if (errno || end == value || *end != '\0')
			return -1;
	}
	if (v < k->min || v > k->max)
		return -1;
	if (k->type == T_SIZE)
		*(long long *)(void *)field = v;
	else
		*(long *)(void *)field = (long)v;
	return 0;
}

static int set_value(struct cfg *c, const struct cfg_key *k, const char *value)
{
	char *field = (char *)c + k->off;
	char **str = (char **)(void *)field;
	int iv;

	switch (k->type) {
	case T_URL:
		if (check_url(value) == -1)
			return -1;
		/* FALLTHROUGH */
	case T_STR:
		if (k->choices && parse_enum(value, k->choices, &iv) == -1)
			return -1;
		free(*str);
		*str = *value ? xstrdup(value) : NULL;
		return 0;
	case T_BOOL:
		return cfg_parse_bool(value, (int *)(void *)field);
	case T_ENUM:
		return parse_enum(value, k->choices, (int *)(void *)field);
	case T_LIST:
		return set_list(c, value);
	default:
		return set_number(k, field, value);
	}
}

int cfg_set(struct cfg *c, const char *key, const char *value,
    char *err, size_t errlen)
{
	size_t i;

	for (i = 0; i < sizeof(cfg_keys) / sizeof(cfg_keys[0]); i++) {
		if (strcmp(key, cfg_keys[i].name))
			continue;
		if (set_value(c, &cfg_keys[i], value) == 0)
			return 0;
		snprintf(err, errlen, "bad value for %s", key);
		return -1;
	}
	snprintf(err, errlen, "unknown key %s", key);
	return -1;
}

/* Trims white space at both ends in place; returns the new start. */
static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

static int load_line(struct cfg *c, char *line, char *err, size_t errlen)
{
	char *eq, *key;

	line = trim(line);
	if (*line == '\0' || *line == '#')
		return 0;
	if ((eq = strchr(line, '=')) == NULL) {
		snprintf(err, errlen, "expected key = value");
		return -1;
	}
	*eq = '\0';
	key = trim(line);
	return cfg_set(c, key, trim(eq + 1), err, errlen);
}

/* What a node name may hold: it goes into the state and into logs. */
#define NODE_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" \
    "0123456789.-_"

/* node_name's default: the host name, cut to 63 characters, what a name
 * may not hold made "-" ("localhost" when there is none). */
static char *default_node_name(void)
{
	char h[256] = "";
	size_t i;

	if (gethostname(h, sizeof(h) - 1) == -1 || h[0] == '\0')
		snprintf(h, sizeof(h), "localhost");
	h[63] = '\0';
	for (i = 0; h[i]; i++)
		if (!strchr(NODE_CHARS, h[i]))
			h[i] = '-';
	return xstrdup(h);
}

int cfg_load_file(struct cfg *c, FILE *f, const char *name, char *err,
    size_t errlen)
{
	char line[4096], what[256];
	int lineno = 0, rc = 0;

	while (rc == 0 && fgets(line, sizeof(line), f)) {
		lineno++;
		if (strchr(line, '\n') == NULL && !feof(f)) {
			snprintf(what, sizeof(what), "line too long");
			rc = -1;
		} else
			rc = load_line(c, line, what, sizeof(what));
	}
	if (rc == 0 && ferror(f)) {
		snprintf(what, sizeof(what), "read error");
		rc = -1;
	}
	if (rc == 0 && c->node_name == NULL)
		c->node_name = default_node_name();
	if (rc == 0)
		return cfg_check(c, err, errlen);
	snprintf(err, errlen, "%s:%d: %s", name, lineno, what);
	return -1;
}

int cfg_load(struct cfg *c, const char *path, char *err, size_t errlen)
{
	FILE *f;
	int rc;

	if ((f = fopen(path, "r")) == NULL) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	rc = cfg_load_file(c, f, path, err, errlen);
	fclose(f);
	return rc;
}

int cfg_carddav_on(const struct cfg *c)
{
	return c->carddav_path && strcmp(c->carddav_path, "off");
}

int cfg_sieve_on(const struct cfg *c)
{
	return c->sieve_host == NULL || strcmp(c->sieve_host, "off");
}

/* A host name or an IP address, bracketed or not: what getaddrinfo
 * takes, and nothing a log line could be forged with. */
static int sieve_host_ok(const char *h)
{
	size_t n = strlen(h);

	return n <= 253 && strspn(h, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789.-:[]") == n;
}

/* A plain path below the root: the relay appends to it what it checked. */
static int carddav_path_ok(const char *p)
{
	size_t n = strlen(p);

	return n >= 3 && p[0] == '/' && p[n - 1] == '/' && !strstr(p, "//") &&
	    !strstr(p, "/./") && !strstr(p, "/../") && strcspn(p, "?#%\\ ") == n;
}

int cfg_check(const struct cfg *c, char *err, size_t errlen)
{
	if (c->upstream == NULL) {
		snprintf(err, errlen, "upstream is not set");
		return -1;
	}
	if (c->state_db == NULL || c->secret_file == NULL) {
		snprintf(err, errlen, "state_db and secret_file must be set");
		return -1;
	}
	if (cfg_carddav_on(c) && !carddav_path_ok(c->carddav_path)) {
		snprintf(err, errlen, "carddav_path is a path below the root that "
		    "begins and ends with /, without . or .. parts (or off)");
		return -1;
	}
	if (c->webpush_subject && strncmp(c->webpush_subject, "mailto:", 7) &&
	    strncmp(c->webpush_subject, "https://", 8)) {
		snprintf(err, errlen, "webpush_subject is a mailto: or https: "
		    "address");
		return -1;
	}
	if (c->node_name && (c->node_name[0] == '\0' ||
	    strlen(c->node_name) > 63 ||
	    strspn(c->node_name, NODE_CHARS) != strlen(c->node_name))) {
		snprintf(err, errlen, "node_name is 1 to 63 letters, digits, "
		    "dots, hyphens and underscores");
		return -1;
	}
	if (c->sieve_host && !sieve_host_ok(c->sieve_host)) {
		snprintf(err, errlen, "sieve_host is a host name or an IP address "
		    "(or off)");
		return -1;
	}
	return 0;
}

void cfg_free(struct cfg *c)
{
	size_t i;

	for (i = 0; i < sizeof(cfg_keys) / sizeof(cfg_keys[0]); i++)
		if (cfg_keys[i].type == T_STR || cfg_keys[i].type == T_URL)
			free(*(char **)(void *)((char *)c + cfg_keys[i].off));
	while (c->n_trusted_proxies > 0)
		free(c->trusted_proxies[--c->n_trusted_proxies]);
	memset(c, 0, sizeof(*c));
}

int cfg_webpush_host_allowed(const struct cfg *c, const char *host)
{
	const char *p = c->webpush_hosts;
	size_t n = strlen(host), k;

	if (p == NULL)
		return 1;
	while (*p) {
		p += strspn(p, " ,\t");
		k = strcspn(p, " ,\t");
		if (k == n && k > 0 && strncasecmp(p, host, n) == 0)
			return 1;
		p += k;
	}
	return 0;
}
