/* postern-admin: the chores of an operator (see postern-admin(8)).
 * Exit status: 0 done, 1 a problem was found or a command failed,
 * 2 bad usage. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "admin.h"
#include "store.h"
#include "log.h"

#define EXIT_USAGE 2

static const char usage_text[] =
    "usage: postern-admin [-c FILE] check\n"
    "       postern-admin [-c FILE] init\n"
    "       postern-admin [-c FILE] sessions [--login LOGIN]\n"
    "       postern-admin [-c FILE] revoke [--] ID | --login LOGIN | --all\n"
    "       postern-admin [-c FILE] push\n"
    "       postern-admin --help | --version\n";

/* A command's arguments: its options and at most one operand. */
struct args {
	const char *login;   /* --login */
	int all;             /* --all */
	const char *id;      /* the operand */
	int unknown;         /* a short option getopt does not know */
};

static int usage(void)
{
	fputs(usage_text, stderr);
	return EXIT_USAGE;
}

static int fail(const char *what)
{
	fprintf(stderr, "postern-admin: %s\n", what);
	return EXIT_FAILURE;
}

/* Says what getopt (told to keep quiet) found wrong: c is what it gave
 * back, ':' for an option without its value. */
static void bad_option(const char *cmd, int c, char **argv)
{
	fprintf(stderr, "postern-admin: %s%s", cmd ? cmd : "", cmd ? ": " : "");
	if (c == ':')
		fprintf(stderr, "%s needs a value\n", argv[optind - 1]);
	else if (optopt)
		fprintf(stderr, "unknown option -%c\n", optopt);
	else
		fprintf(stderr, "unknown option %s\n", argv[optind - 1]);
}

/* Reads a command's options, those named in allowed ("l" --login, "a"
 * --all) and, when operand is set, one operand (after "--" when it
 * begins with '-'). 0, or -1 when that is not what was given. */
static int parse_args(int argc, char **argv, const char *allowed, int operand,
    struct args *a)
{
	static const struct option opts[] = {
		{ "login", required_argument, NULL, 'l' },
		{ "all", no_argument, NULL, 'a' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(a, 0, sizeof(*a));
	optind = 0;  /* argv[0] is the command: start again after it */
	while ((c = getopt_long(argc, argv, "+:", opts, NULL)) != -1) {
		if (c == '?' || c == ':') {
			bad_option(argv[0], c, argv);
			a->unknown = c == '?';
			return -1;
		}
		if (!strchr(allowed, c)) {
			fprintf(stderr, "postern-admin: %s takes no --%s\n", argv[0],
			    c == 'l' ? "login" : "all");
			return -1;
		}
		if (c == 'l')
			a->login = optarg;
		else
			a->all = 1;
	}
	if (operand && optind < argc)
		a->id = argv[optind++];
	if (optind < argc || (a->login && !*a->login))
		return -1;
	return 0;
}

static int cmd_check(const char *path, int argc, char **argv)
{
	struct admin_report r = { stdout, 0, 0, 0 };
	struct args a;
	struct cfg c;

	if (parse_args(argc, argv, "", 0, &a) == -1)
		return usage();
	admin_check(path, &c, &r);
	/* The report says what the upstream client would log. */
	log_init("postern-admin", LOG_ERR);
	if (r.loaded)
		admin_check_upstream(&c, &r);
	cfg_free(&c);
	printf("%d error%s, %d warning%s\n", r.errors, r.errors == 1 ? "" : "s",
	    r.warnings, r.warnings == 1 ? "" : "s");
	return r.errors ? EXIT_FAILURE : EXIT_SUCCESS;
}

static int cmd_init(const char *path, int argc, char **argv)
{
	char err[1024];
	struct args a;

	if (parse_args(argc, argv, "", 0, &a) == -1)
		return usage();
	if (admin_init(path, stdout, err, sizeof(err)) == -1)
		return fail(err);
	return EXIT_SUCCESS;
}

/* Opens an existing state: these commands must not create a secret (that
 * would make every session unreadable) or a database. */
static int open_state(struct app *a, const char *path)
{
	const struct cfg *c = &a->cfg;
	char err[1024];

	if (app_load_cfg(a, path, err, sizeof(err)) == -1)
		return fail(err);
	if (access(c->secret_file, F_OK) == -1 || (!store_is_url(c->state_db) &&
	    access(c->state_db, F_OK) == -1)) {
		fprintf(stderr, "postern-admin: %s or %s is missing: run "
		    "postern-admin init\n", c->secret_file, c->state_db);
		cfg_free(&a->cfg);
		return EXIT_FAILURE;
	}
	if (app_open_cfg(a, err, sizeof(err)) == -1) {
		cfg_free(&a->cfg);
		return fail(err);
	}
	return EXIT_SUCCESS;
}

/* Lists the sessions: status 0 also when none is listed. */
static int cmd_sessions(const char *path, int argc, char **argv)
{
	struct args args;
	struct app a;
	int n;

	if (parse_args(argc, argv, "l", 0, &args) == -1)
		return usage();
	if (open_state(&a, path) != EXIT_SUCCESS)
		return EXIT_FAILURE;
	n = admin_sessions(&a, args.login, time(NULL), stdout);
	app_close(&a);
	if (n < 0)
		return fail("cannot read the sessions");
	printf("%d session%s\n", n, n == 1 ? "" : "s");
	return EXIT_SUCCESS;
}

/* Ends what args names: status 1 when that is no session at all. */
static int run_revoke(struct app *a, const struct args *args)
{
	char err[256];
	int n;

	if (args->all)
		n = admin_revoke_all(a);
	else if (args->login)
		n = admin_revoke_login(a, args->login);
	else if ((n = admin_revoke_id(a, args->id, err, sizeof(err))) == -1)
		return fail(err);
	if (n < 0)
		return fail("cannot revoke: database error");
	if (n == 0) {
		fprintf(stderr, "postern-admin: no session %s%s\n", args->all ?
		    "to revoke" : args->login ? "of the login " : "",
		    args->all ? "" : args->login ? args->login : args->id);
		return EXIT_FAILURE;
	}
	printf("revoked %d session%s\n", n, n == 1 ? "" : "s");
	return EXIT_SUCCESS;
}

static int cmd_revoke(const char *path, int argc, char **argv)
{
	struct args args;
	struct app a;
	int rc;

	if (parse_args(argc, argv, "la", 1, &args) == -1) {
		if (args.unknown)
			fputs("postern-admin: a session id that begins with '-' "
			    "goes after '--'\n", stderr);
		return usage();
	}
	if (!!args.id + !!args.login + args.all != 1)
		return usage();
	if (args.id && !admin_id_ok(args.id)) {
		fprintf(stderr, "postern-admin: %s is not a session id (at least "
		    "%d of its characters)\n", args.id, ADMIN_ID_MIN);
		return EXIT_USAGE;
	}
	if (open_state(&a, path) != EXIT_SUCCESS)
		return EXIT_FAILURE;
	rc = run_revoke(&a, &args);
	app_close(&a);
	return rc;
}

/* Shows pushd's state: status 0 whether or not pushd runs. */
static int cmd_push(const char *path, int argc, char **argv)
{
	struct args args;
	struct app a;
	int rc;

	if (parse_args(argc, argv, "", 0, &args) == -1)
		return usage();
	if (open_state(&a, path) != EXIT_SUCCESS)
		return EXIT_FAILURE;
	rc = admin_push(&a, time(NULL), stdout);
	app_close(&a);
	return rc == 0 ? EXIT_SUCCESS : fail("cannot read pushd's tables");
}

static const struct {
	const char *name;
	int (*run)(const char *path, int argc, char **argv);
} commands[] = {
	{ "check", cmd_check },
	{ "init", cmd_init },
	{ "sessions", cmd_sessions },
	{ "revoke", cmd_revoke },
	{ "push", cmd_push },
};

static int run(const char *path, int argc, char **argv)
{
	size_t i;

	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[0], commands[i].name))
			return commands[i].run(path, argc, argv);
	fprintf(stderr, "postern-admin: no command %s\n", argv[0]);
	return usage();
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = NULL;
	int c, rc;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:c:h", opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(usage_text, stdout);
			return EXIT_SUCCESS;
		}
		if (c == 'V') {
			printf("postern-admin %s\n", PACKAGE_VERSION);
			return EXIT_SUCCESS;
		}
		if (c != 'c') {
			bad_option(NULL, c, argv);
			return usage();
		}
		path = optarg;
	}
	if (optind >= argc)
		return usage();
	log_init("postern-admin", LOG_WARN);
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return fail("cannot initialise libcurl");
	rc = run(path ? path : app_conf_path(), argc - optind, argv + optind);
	curl_global_cleanup();
	return rc;
}
