/*
 * TAP for every C test (host, guest, demo) and benchmark of secbuf: numbered
 * results, a closing plan, and the "# REPORT:" / "# KEEP:" lines the host
 * runners collect.  Results read "ok N desc" or "ok N desc # SKIP why".
 */
#ifndef SECBUF_TAP_H
#define SECBUF_TAP_H

#include <stdbool.h>

#define PRINTF_LIKE(a, b) __attribute__((format(printf, a, b)))

/* Print "ok N desc" or "not ok N desc"; returns cond. */
PRINTF_LIKE(2, 3) bool tap_check(bool cond, const char *fmt, ...);
/* Print "ok N desc # SKIP why". */
PRINTF_LIKE(2, 3) void tap_skip(const char *why, const char *fmt, ...);
/* Diagnostic ("# ..."), measurement ("# REPORT: ...") and host marker lines. */
PRINTF_LIKE(1, 2) void tap_diag(const char *fmt, ...);
PRINTF_LIKE(1, 2) void tap_report(const char *fmt, ...);
PRINTF_LIKE(1, 2) void tap_keep(const char *fmt, ...);
/* One row of the end-of-run proof table: area, method, verdict, measured. */
PRINTF_LIKE(4, 5) void tap_summary(const char *area, const char *method,
				   bool pass, const char *fmt, ...);
/* What this program proves, for the summary row tap_bail() prints; a NULL
 * method reads as "default". */
void tap_subject(const char *area, const char *method);
/* A fatal setup error: "not ok", a FAIL summary row, the plan, exit(1). */
PRINTF_LIKE(1, 2) __attribute__((noreturn)) void tap_bail(const char *fmt, ...);
/* Print the plan; returns the exit status (1 when any check failed). */
int tap_done(void);
/* Print "P passed, F failed, S skipped" of the results so far. */
void tap_totals(void);

#endif
