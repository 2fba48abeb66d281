/* The single error path for memory corruption and API misuse: say what, abort. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core.h"

void sb_misuse(const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	int err = errno, n;

	n = snprintf(msg, sizeof(msg), "libsecbuf: %s[%d]: ", program_invocation_short_name,
		     (int)getpid());
	if (n < 0 || (size_t)n >= sizeof(msg))
		n = 0;
	errno = err; /* for %m */
	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof(msg) - n - 1, fmt, ap);
	va_end(ap);
	strcat(msg, "\n");
	/* write(2), not stdio: the heap may be what is corrupted. */
	(void)!write(STDERR_FILENO, msg, strlen(msg)); /* aborting either way */
	abort();
}
