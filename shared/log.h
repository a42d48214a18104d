/* log: the one logging family. Lines go to stderr, which the web server
 * keeps in its error log (FastCGI and CGI alike) and systemd in the journal.
 * Never log a password, a cookie, a token or a message body; pass anything a
 * user supplied through log_esc(). */
#ifndef POSTERN_LOG_H
#define POSTERN_LOG_H

#include <stddef.h>

enum log_level { LOG_ERR, LOG_WARN, LOG_INFO, LOG_DEBUG };

void log_init(const char *prog, enum log_level level);
void log_msg(enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Copies s into out (size n) with control characters, quotes and bytes
 * >= 0x7f escaped as \xNN, truncated to fit; returns out. */
const char *log_esc(char *out, size_t n, const char *s);

#define log_err(...)   log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...)  log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...)  log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif
