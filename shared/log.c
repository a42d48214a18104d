#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

/* Set once at start-up, read-only afterwards: no request state. */
static const char *log_prog = "postern";
static enum log_level log_max = LOG_INFO;

static const char *const log_names[] = { "error", "warning", "info", "debug" };

void log_init(const char *prog, enum log_level level)
{
	log_prog = prog;
	log_max = level;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n, m;

	if (level > log_max)
		return;
	n = snprintf(line, sizeof(line), "%s[%ld]: %s: ", log_prog,
	    (long)getpid(), log_names[level]);
	va_start(ap, fmt);
	m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (m < 0)
		return;
	n += m;
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	/* One write so that lines of concurrent processes do not interleave. */
	if (write(STDERR_FILENO, line, (size_t)n) < 0)
		return;
}

const char *log_esc(char *out, size_t n, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;
	unsigned char c;

	if (n == 0)
		return out;
	for (; s && (c = (unsigned char)*s) != '\0'; s++) {
		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
			if (o + 1 >= n)
				break;
			out[o++] = (char)c;
			continue;
		}
		if (o + 4 >= n)
			break;
		out[o++] = '\\';
		out[o++] = 'x';
		out[o++] = hex[c >> 4];
		out[o++] = hex[c & 15];
	}
	out[o] = '\0';
	return out;
}
