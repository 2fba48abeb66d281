// SPDX-License-Identifier: MIT
/* TAP output shared by the C tests; see tap.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include "tap.h"

static int tap_n, tap_failed, tap_skipped;
static const char *subj_area, *subj_method;

static void tap_line(const char *prefix, const char *fmt, va_list ap)
{
	fputs(prefix, stdout);
	vprintf(fmt, ap);
	putchar('\n');
	fflush(stdout);
}

bool tap_check(bool cond, const char *fmt, ...)
{
	char prefix[32];
	va_list ap;

	tap_n++;
	if (!cond)
		tap_failed++;
	snprintf(prefix, sizeof(prefix), "%sok %d ", cond ? "" : "not ", tap_n);
	va_start(ap, fmt);
	tap_line(prefix, fmt, ap);
	va_end(ap);
	return cond;
}

void tap_skip(const char *why, const char *fmt, ...)
{
	va_list ap;

	tap_skipped++;
	printf("ok %d ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf(" # SKIP %s\n", why);
	fflush(stdout);
}

#define TAP_PREFIXED(name, prefix)			\
	void name(const char *fmt, ...)			\
	{						\
		va_list ap;				\
		va_start(ap, fmt);			\
		tap_line(prefix, fmt, ap);		\
		va_end(ap);				\
	}

TAP_PREFIXED(tap_diag, "# ")
TAP_PREFIXED(tap_report, "# REPORT: ")
TAP_PREFIXED(tap_keep, "# KEEP: ")

void tap_summary(const char *area, const char *method, bool pass,
		 const char *fmt, ...)
{
	char prefix[160];
	va_list ap;

	/* proof-summary on the host parses these fields, '|' separated. */
	snprintf(prefix, sizeof(prefix), "# REPORT: SUMMARY|%s|%s|%s|",
		 area, method, pass ? "PASS" : "FAIL");
	va_start(ap, fmt);
	tap_line(prefix, fmt, ap);
	va_end(ap);
}

void tap_subject(const char *area, const char *method)
{
	subj_area = area;
	subj_method = method ? method : "default";
}

void tap_bail(const char *fmt, ...)
{
	char prefix[32];
	va_list ap;

	snprintf(prefix, sizeof(prefix), "not ok %d ", ++tap_n);
	va_start(ap, fmt);
	tap_line(prefix, fmt, ap);
	va_end(ap);
	if (subj_area) {
		va_start(ap, fmt);
		printf("# REPORT: SUMMARY|%s|%s|FAIL|", subj_area, subj_method);
		vprintf(fmt, ap);
		putchar('\n');
		va_end(ap);
	}
	printf("1..%d\n", tap_n);
	exit(1);
}

void tap_totals(void)
{
	printf("%d passed, %d failed, %d skipped\n", tap_n - tap_failed - tap_skipped, tap_failed,
	       tap_skipped);
	fflush(stdout);
}

int tap_done(void)
{
	printf("1..%d\n", tap_n);
	fflush(stdout);
	return tap_failed ? 1 : 0;
}
