/* syslogshim: Cyrus logs only through syslog(3), and the test machines run
 * no syslog daemon, so a Sieve runtime error (a fileinto to a missing
 * folder still answers LMTP 250) or a crash was lost. Preloaded into
 * the harness's Cyrus (LD_PRELOAD), this writes each message as a line to
 * the file named by POSTERN_SYSLOG_FILE instead: "ident[pid]: text".
 * Built by cyrus.py with the system's cc; test use only. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

static char ident[64] = "cyrus";

void openlog(const char *id, int option, int facility)
{
	(void)option;
	(void)facility;
	if (id)
		snprintf(ident, sizeof(ident), "%s", id);
}

void closelog(void)
{
}

/* fmt with %m replaced by the text of err (vsnprintf has no %m). */
static void expand_m(char *out, size_t n, const char *fmt, int err)
{
	const char *e = strerror(err);
	size_t k = 0, len;

	for (; *fmt && k + 1 < n; fmt++) {
		if (fmt[0] == '%' && fmt[1] == '%') {
			if (k + 2 >= n)
				break;
			out[k++] = *fmt++;
			out[k++] = *fmt;
		} else if (fmt[0] == '%' && fmt[1] == 'm') {
			len = strlen(e);
			if (len > n - 1 - k)
				len = n - 1 - k;
			memcpy(out + k, e, len);
			k += len;
			fmt++;
		} else
			out[k++] = *fmt;
	}
	out[k] = '\0';
}

void vsyslog(int prio, const char *fmt, va_list ap)
{
	const char *path = getenv("POSTERN_SYSLOG_FILE");
	char f[1024], line[4096];
	int err = errno, fd, n, k;

	(void)prio;
	if (path == NULL)
		return;
	expand_m(f, sizeof(f), fmt, err);
	n = snprintf(line, sizeof(line), "%s[%d]: ", ident, (int)getpid());
	k = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, f, ap);
	if (k < 0)
		k = 0;
	n += k;
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	/* One write with O_APPEND: lines of several processes never mix. */
	if ((fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644)) >= 0) {
		if (write(fd, line, (size_t)n) < 0) {
			/* nowhere to report it */
		}
		close(fd);
	}
	errno = err;
}

void syslog(int prio, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsyslog(prio, fmt, ap);
	va_end(ap);
}

/* What _FORTIFY_SOURCE builds call in place of the two above. */
void __vsyslog_chk(int prio, int flag, const char *fmt, va_list ap)
{
	(void)flag;
	vsyslog(prio, fmt, ap);
}

void __syslog_chk(int prio, int flag, const char *fmt, ...)
{
	va_list ap;

	(void)flag;
	va_start(ap, fmt);
	vsyslog(prio, fmt, ap);
	va_end(ap);
}
