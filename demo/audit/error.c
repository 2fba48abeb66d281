/*
 * error.c - the one error path of every mode: main.c, one.c and report.c
 * call it, so it lives below them all (no call goes back up to main.c).
 */
#include <stdarg.h>
#include <stdio.h>

#include "audit.h"
#include "escape.h"

/* A failure, on stderr and, in JSON, as the JSON answer on stdout. */
int audit_error(const struct audit_opts *o, long pid, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "secbuf-audit: %s\n", msg);
	if (o->format == FORMAT_JSON) {
		if (pid < 0)
			printf("{\"host\":true,");
		else
			printf(pid > 0 ? "{\"pid\":%ld," : "{\"pid\":null,", pid);
		printf("\"error\":");
		print_escaped(stdout, msg, ESCAPE_JSON);
		printf(",\"clean\":null}\n");
	}
	return EXIT_ERROR;
}

/* Options that make no sense together, in words; NULL if none. */
