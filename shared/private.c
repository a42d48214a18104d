#include "private.h"

#include <stdlib.h>
#include <sys/prctl.h>

#include "log.h"

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif

#ifdef SANITIZED
/* LeakSanitizer's check at exit ptraces the process, which a process of
 * an ordinary user may not do to a non-dumpable one: give it back just
 * before (this handler is registered after the sanitizer's, so it runs
 * first). */
static void dumpable_again(void)
{
	prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
}
#endif

void private_memory(void)
{
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == -1) {
		log_warn("cannot make the process non-dumpable: %m");
		return;
	}
#ifdef SANITIZED
	atexit(dumpable_again);
#endif
}
