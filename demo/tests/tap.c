/* tap.c - numbered TAP results and a trailing plan. */
#include "tap.h"

#include <stdarg.h>
#include <stdio.h>

static int ntests, nfailed;

int tap_ok(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", cond ? "" : "not ", ++ntests);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	if (!cond)
		nfailed++;
	return cond;
}

void tap_skip(const char *why, const char *fmt, ...)
{
	va_list ap;

	printf("ok %d - ", ++ntests);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf(" # SKIP %s\n", why);
	fflush(stdout);
}

int tap_done(void)
{
	printf("1..%d\n", ntests);
	return nfailed ? 1 : 0;
}
