/*
 * audit.h - what the parts of secbuf-audit share: the exit status, the
 * options, the error path, and one entry point per mode.
 */
#ifndef SECBUF_AUDIT_H
#define SECBUF_AUDIT_H

#include "scan.h"

/* The exit status, the same in every mode. */
enum audit_exit {
	EXIT_CLEAN,   /* every selected page is locked or was never used */
	EXIT_LEAK,    /* a selected page is swapped out or evictable */
	EXIT_ERROR,   /* bad arguments, no such process, no permission, no output */
	EXIT_NOTHING, /* nothing was selected: an audit that checked nothing never passes */
};

enum audit_format { FORMAT_TEXT, FORMAT_JSON, FORMAT_PROM };

struct audit_opts {
	enum audit_format format;
	struct audit_select sel;
	const char *output; /* --output FILE (--host): replaced whole; NULL: stdout */
};

/*
 * A failure of the audit of pid (0: none yet; -1: the host): the message
 * on stderr and, in JSON, the JSON answer on stdout.  Returns EXIT_ERROR.
 */
int audit_error(const struct audit_opts *o, long pid, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The audit of one process (one.c): its exit status. */
int audit_one(long pid, const struct audit_opts *o);
/* The audit of every process (report.c): its exit status. */
int audit_host(const struct audit_opts *o);

#endif
