/* The single abort path of libsecbuf-seal: say what was misused, and where, then abort. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "seal.h"

void sbs_misuse(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	n = snprintf(line, sizeof(line), "libsecbuf-seal: %s[%d]: ", program_invocation_short_name,
		     (int)getpid());
	if (n < 0 || (size_t)n >= sizeof(line))
		n = 0;
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
	va_end(ap);
	strcat(line, "\n");
	/* write(2), not stdio: a misused handle may mean a corrupted heap. */
	(void)!write(STDERR_FILENO, line, strlen(line)); /* aborting either way */
	abort();
}
