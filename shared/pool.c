#include "pool.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/wait.h>

#include "log.h"
#include "seat.h"

_Static_assert(POOL_MAX <= SEAT_MAX, "a seat for each process");

/* At most this many deaths in POOL_WINDOW seconds before giving up. */
#define POOL_DEATHS 10
#define POOL_WINDOW 60

static pid_t start_child(int i, int (*run)(void *), void *arg, const sigset_t *old)
{
	pid_t pid;

	seat_free(i);
	if ((pid = fork()) == 0) {
		seat_mine(i);
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		sigprocmask(SIG_SETMASK, old, NULL);
		_exit(run(arg));
	}
	if (pid < 0)
		log_err("pool: fork: %s", strerror(errno));
	return pid;
}

static void stop_all(pid_t *kids, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (kids[i] > 0)
			kill(kids[i], SIGTERM);
	for (i = 0; i < n; i++)
		if (kids[i] > 0)
			waitpid(kids[i], NULL, 0);
}

/* The slot of pid, or -1. */
static int slot_of(const pid_t *kids, int n, pid_t pid)
{
	int i;

	for (i = 0; i < n; i++)
		if (kids[i] == pid)
			return i;
	return -1;
}

/* Waits for a signal; a dead child is started again. 0 on a stop
 * signal, 1 when they die too fast. */
static int supervise(pid_t *kids, int n, int (*run)(void *), void *arg,
    const sigset_t *set, const sigset_t *old)
{
	time_t window = time(NULL);
	int deaths = 0, sig, status, i;
	pid_t pid;

	for (;;) {
		if (sigwait(set, &sig) != 0 || sig != SIGCHLD)
			return 0;
		while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
			if ((i = slot_of(kids, n, pid)) < 0)
				continue;
			log_warn("pool: process %ld ended (status %d); starting another",
			    (long)pid, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
			if (time(NULL) - window > POOL_WINDOW) {
				window = time(NULL);
				deaths = 0;
			}
			if (++deaths > POOL_DEATHS) {
				log_err("pool: processes die faster than they serve");
				kids[i] = -1;
				return 1;
			}
			kids[i] = start_child(i, run, arg, old);
		}
	}
}

int pool_run(int n, int (*run)(void *arg), void *arg)
{
	pid_t kids[POOL_MAX];
	sigset_t set, old;
	int i, rc;

	if (n < 1 || n > POOL_MAX)
		return 1;
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, &old);
	if (seat_open(n) == -1)
		log_warn("pool: no shared seats; one client may hold every process");
	for (i = 0; i < n; i++)
		kids[i] = start_child(i, run, arg, &old);
	rc = supervise(kids, n, run, arg, &set, &old);
	stop_all(kids, n);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return rc;
}
