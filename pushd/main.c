/* pushd: the daemon that holds every tab's event stream and at most one
 * upstream channel per account. It speaks FastCGI itself on a Unix socket
 * (pushd_socket), many requests at once on one epoll loop. Runs in the
 * foreground (systemd) or, with -d, as a daemon. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "acct.h"
#include "bus.h"
#include "chan.h"
#include "conn.h"
#include "dbq.h"
#include "log.h"
#include "mcurl.h"
#include "node.h"
#include "private.h"
#include "pushd.h"
#include "route.h"
#include "tab.h"
#include "usock.h"
#include "wpsend.h"
#include "wpwatch.h"

#define LISTEN_BACKLOG 1024

static void usage(void)
{
	fprintf(stderr, "usage: pushd [-d] [-f postern.conf]\n");
	exit(2);
}

/* Raises the descriptor limit to the hard limit and leaves a reserve for
 * the database, libcurl and the spare. */
static unsigned fd_budget(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > 1000000)
		rl.rlim_cur = 1000000;
	/* Under a tiny limit (tests), half of it. */
	return rl.rlim_cur > 2 * PUSHD_FD_RESERVE ?
	    (unsigned)rl.rlim_cur - PUSHD_FD_RESERVE : (unsigned)rl.rlim_cur / 2;
}

/* The listening socket, 0660 so that only the web server's group reaches
 * it. -1 with the reason logged. */
static int listen_socket(const char *path)
{
	char err[512];
	int fd = usock_listen(path, LISTEN_BACKLOG, SOCK_NONBLOCK, err,
	    sizeof(err));

	if (fd == -1)
		log_err("pushd_socket %s", err);
	return fd;
}

/* At EMFILE the spare descriptor is given up to accept the connection and
 * close it at once: the web server sees a refusal instead of a hang, and
 * the loop does not spin on a listening socket it cannot drain. */
static void refuse_one(struct pushd *pd, int lfd)
{
	int fd;

	if (pd->spare_fd >= 0)
		close(pd->spare_fd);
	fd = accept(lfd, NULL, NULL);
	if (fd >= 0)
		close(fd);
	pd->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	log_warn("pushd: out of descriptors; a connection was refused");
}

static void on_accept(struct ev *ev, struct ev_io *io, uint32_t revents)
{
	struct pushd *pd = pushd_of(ev);
	int fd, i;

	for (i = 0; i < 64; i++) {
		fd = accept4(io->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd == -1) {
			if (errno == EMFILE || errno == ENFILE)
				refuse_one(pd, io->fd);
			return;
		}
		if (pd->nconns >= pd->max_conns) {
			close(fd);
			continue;
		}
		conn_new(pd, fd);
	}
}

static void on_signal(struct ev *ev, struct ev_io *io, uint32_t revents)
{
	struct signalfd_siginfo si;

	while (read(io->fd, &si, sizeof(si)) == sizeof(si))
		if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT) {
			log_info("pushd: stopping");
			ev_stop(ev);
		}
}

static int signals(struct pushd *pd)
{
	sigset_t set;
	int fd;

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL) == -1 ||
	    (fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC)) == -1)
		return -1;
	return ev_io_add(&pd->ev, &pd->signal_io, fd, EPOLLIN, on_signal);
}

/* -d: detaches, but keeps stderr, where the log goes (redirect it to a
 * file); stdin and stdout become /dev/null. */
static int go_background(void)
{
	int fd;

	if (daemon(0, 1) == -1 || (fd = open("/dev/null", O_RDWR)) == -1)
		return -1;
	dup2(fd, 0);
	dup2(fd, 1);
	if (fd > 1)
		close(fd);
	return 0;
}

/* The channels by mode: here the account core and its channels meet
 * (chan.h), so that neither is linked to the other both ways. */
static const struct chan *const pushd_chans[ACCT_NMODES] = {
	[ACCT_POLL] = &chan_poll,
	[ACCT_RELAY] = &chan_relay,
	[ACCT_SUBSCRIPTION] = &chan_sub,
};

static int setup(struct pushd *pd, const char *conf, int daemonise)
{
	char err[512];
	struct timeval tv;
	int lfd;

	if (app_open(&pd->app, conf, err, sizeof(err)) == -1) {
		log_err("%s", err);
		return -1;
	}
	log_init("pushd", pd->app.cfg.log_level);
	if ((lfd = listen_socket(pd->app.cfg.pushd_socket)) == -1)
		return -1;
	if (daemonise && go_background() == -1) {
		log_err("daemon: %s", strerror(errno));
		close(lfd);
		return -1;
	}
	gettimeofday(&tv, NULL);
	/* Microseconds: ids outrun the clock only past a million events a
	 * second, so a restarted pushd never reuses one (and they stay below
	 * 2^53, exact in JavaScript). */
	pd->next_id = (uint64_t)tv.tv_sec * 1000000 + (uint64_t)tv.tv_usec;
	pd->route = route_request;
	pd->chans = pushd_chans;
	pd->max_conns = fd_budget();
	pd->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (cap_init(&pd->cap, (unsigned)pd->app.cfg.push_streams_per_session,
	    (unsigned)pd->app.cfg.push_streams_per_ip,
	    PUSHD_REPLACE_AFTER_MS) == -1) {
		log_err("pushd: no randomness or memory for the stream caps");
		close(lfd);
		return -1;
	}
	if (ev_init(&pd->ev) == -1 || signals(pd) == -1 || mc_init(pd) == -1 ||
	    ev_io_add(&pd->ev, &pd->listen_io, lfd, EPOLLIN, on_accept) == -1) {
		log_err("pushd: cannot set up the event loop: %s", strerror(errno));
		close(lfd);
		return -1;
	}
	/* Without its thread pushd runs on, its database work on the loop
	 * (logged). */
	dbq_start(pd);
	acct_startup(pd);
	node_start(pd);
	bus_start(pd);
	/* Without its key pushd runs on, without Web Push (logged). */
	if (wp_init(pd) == 0)
		wp_watch_startup(pd);
	return 0;
}

/* Ends every stream properly (END_REQUEST), so that the web server ends
 * each response cleanly and the browsers reconnect, rather than seeing the
 * backend die. Best effort: what does not fit the socket now is lost. */
static void end_streams(struct pushd *pd)
{
	struct conn *c, *cnext;
	struct preq *q, *qnext;

	for (c = pd->conns; c; c = cnext) {
		cnext = c->next;
		for (q = c->reqs; q && !c->dead; q = qnext) {
			qnext = q->next;
			if (q->stream.owner)
				q->stream.end(q->stream.owner);
		}
	}
}

/* Ends everything in the order the parts depend on each other: streams
 * (their accounts follow), then libcurl, the loop, the database. */
static void teardown(struct pushd *pd)
{
	if (pd->listen_io.fd >= 0) {
		close(pd->listen_io.fd);
		ev_io_del(&pd->ev, &pd->listen_io);
		unlink(pd->app.cfg.pushd_socket);
	}
	pd->stopping = 1;
	end_streams(pd);
	while (pd->conns)
		conn_close(pd->conns);
	wp_watch_shutdown(pd);
	bus_stop(pd);
	acct_shutdown(pd);
	node_stop(pd);
	dbq_stop(pd);
	ev_timer_stop(&pd->ev, &pd->flush_timer);
	ev_flush_deferred(&pd->ev);
	cap_free(&pd->cap);
	wp_free(pd);
	mc_free(pd);
	if (pd->signal_io.fd >= 0)
		close(pd->signal_io.fd);
	ev_free(&pd->ev);
	if (pd->spare_fd >= 0)
		close(pd->spare_fd);
	app_close(&pd->app);
	curl_global_cleanup();
}

int main(int argc, char **argv)
{
	static struct pushd pd;
	const char *conf = NULL;
	int opt, daemonise = 0, rc;

	while ((opt = getopt(argc, argv, "df:")) != -1) {
		if (opt == 'd')
			daemonise = 1;
		else if (opt == 'f')
			conf = optarg;
		else
			usage();
	}
	if (optind != argc)
		usage();
	log_init("pushd", LOG_INFO);
	private_memory();
	pd.listen_io.fd = pd.signal_io.fd = pd.spare_fd = -1;
	ev_timer_init(&pd.curl_timer, NULL);
	ev_timer_init(&pd.flush_timer, NULL);
	ev_timer_init(&pd.node_timer, NULL);
	ev_timer_init(&pd.bus_timer, NULL);
	ev_timer_init(&pd.lease_timer, NULL);
	pd.bus_io.fd = -1;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0)
		return 1;
	if (setup(&pd, conf, daemonise) == -1) {
		teardown(&pd);
		return 1;
	}
	log_info("pushd: listening on %s", pd.app.cfg.pushd_socket);
	rc = ev_run(&pd.ev);
	teardown(&pd);
	return rc == 0 ? 0 : 1;
}
