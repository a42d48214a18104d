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
#include "log.h"

#define EXIT_USAGE 2

static const char usage_text[] =
    "usage: postern-admin [-c FILE] check\n"
    "       postern-admin [-c FILE] init\n"
    "       postern-admin [-c FILE] sessions [--login LOGIN]\n"
    "       postern-admin [-c FILE] revoke ID | --login LOGIN | --all\n"
    "       postern-admin [-c FILE] push\n";

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

static int cmd_check(const char *path)
{
	struct admin_report r = { stdout, 0, 0 };
	struct cfg c;

	admin_check(path, &c, &r);
	cfg_free(&c);
	printf("%d error%s, %d warning%s\n", r.errors, r.errors == 1 ? "" : "s",
	    r.warnings, r.warnings == 1 ? "" : "s");
	return r.errors ? EXIT_FAILURE : EXIT_SUCCESS;
}

static int cmd_init(const char *path)
{
	char err[1024];

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
	if (access(c->secret_file, F_OK) == -1 || access(c->state_db, F_OK) == -1) {
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

/* Reads "--login L" from the command's arguments, or nothing. */
static int login_opt(int argc, char **argv, const char **login)
{
	*login = NULL;
	if (argc == 1)
		return 0;
	if (argc == 3 && !strcmp(argv[1], "--login") && *argv[2]) {
		*login = argv[2];
		return 0;
	}
	return -1;
}

static int cmd_sessions(const char *path, int argc, char **argv)
{
	const char *login;
	struct app a;
	int n;

	if (login_opt(argc, argv, &login) == -1)
		return usage();
	if (open_state(&a, path) != EXIT_SUCCESS)
		return EXIT_FAILURE;
	n = admin_sessions(&a, login, time(NULL), stdout);
	app_close(&a);
	if (n < 0)
		return fail("cannot read the sessions");
	printf("%d session%s\n", n, n == 1 ? "" : "s");
	return EXIT_SUCCESS;
}

static int run_revoke(struct app *a, int argc, char **argv)
{
	char err[256];
	const char *login;
	int n;

	if (argc == 2 && !strcmp(argv[1], "--all"))
		n = admin_revoke_all(a);
	else if (argc == 2) {
		if ((n = admin_revoke_id(a, argv[1], err, sizeof(err))) == -1)
			return fail(err);
		if (n == 0) {
			fprintf(stderr, "postern-admin: no session %s\n", argv[1]);
			return EXIT_FAILURE;
		}
	} else {
		login_opt(argc, argv, &login);
		n = admin_revoke_login(a, login);
	}
	if (n < 0)
		return fail("cannot revoke: database error");
	printf("revoked %d session%s\n", n, n == 1 ? "" : "s");
	return EXIT_SUCCESS;
}

static int cmd_revoke(const char *path, int argc, char **argv)
{
	const char *login;
	struct app a;
	int rc;

	if (argc == 2 && strcmp(argv[1], "--all") && !admin_id_ok(argv[1])) {
		fprintf(stderr, "postern-admin: %s is not a session id (at least "
		    "%d of its characters)\n", argv[1], ADMIN_ID_MIN);
		return EXIT_USAGE;
	}
	if (argc != 2 && (login_opt(argc, argv, &login) == -1 || login == NULL))
		return usage();
	if (open_state(&a, path) != EXIT_SUCCESS)
		return EXIT_FAILURE;
	rc = run_revoke(&a, argc, argv);
	app_close(&a);
	return rc;
}

static int cmd_push(const char *path, int argc)
{
	struct app a;
	int rc;

	if (argc != 1)
		return usage();
	if (open_state(&a, path) != EXIT_SUCCESS)
		return EXIT_FAILURE;
	rc = admin_push(&a, time(NULL), stdout);
	app_close(&a);
	return rc == 0 ? EXIT_SUCCESS : fail("cannot read pushd's tables");
}

static int run(const char *path, int argc, char **argv)
{
	const char *cmd = argv[0];

	if (!strcmp(cmd, "check") && argc == 1)
		return cmd_check(path);
	if (!strcmp(cmd, "init") && argc == 1)
		return cmd_init(path);
	if (!strcmp(cmd, "sessions"))
		return cmd_sessions(path, argc, argv);
	if (!strcmp(cmd, "revoke"))
		return cmd_revoke(path, argc, argv);
	if (!strcmp(cmd, "push"))
		return cmd_push(path, argc);
	return usage();
}

int main(int argc, char **argv)
{
	const char *path = NULL;
	int c, rc;

	while ((c = getopt(argc, argv, "+c:h")) != -1) {
		if (c == 'h') {
			fputs(usage_text, stdout);
			return EXIT_SUCCESS;
		}
		if (c != 'c')
			return usage();
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
