/*
 * report.c - the audit of every process (--host): the scan, its text,
 * JSON or Prometheus output, on stdout or replacing a file, and the exit
 * status.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "escape.h"
#include "host.h"
#include "prom.h"
#include "textfile.h"

static unsigned long leaking(const struct host_scan *hs)
{
	unsigned long n = 0;

	for (size_t i = 0; i < hs->n; i++)
		n += holding_leaks(&hs->holdings[i]);
	return n;
}

static void print_text(FILE *f, const struct host_scan *hs, const char *failure)
{
	unsigned long leaks = leaking(hs);
	char lock[64], method[64];

	fprintf(f, "secbuf-audit: host, %.3f s, page flags from %s\n", hs->seconds,
		hs->kpageflags ? "/proc/kpageflags" : "VmFlags (no /proc/kpageflags or no PFNs)");
	fprintf(f, "processes:");
	for (int o = 0; o < HOST_OUTCOMES; o++)
		fprintf(f, "%s %lu %s", o ? "," : "", hs->processes[o], host_outcome_name(o));
	fputc('\n', f);
	if (failure) {
		fprintf(f, "summary: host: FAILED: %s\n", failure);
		return;
	}
	if (hs->n)
		fprintf(f, "%8s %-9s %-14s %-14s %5s %10s %11s %10s %11s %14s %-7s %s\n", "pid",
			"kind", "lock", "method", "maps", "locked_kB", "unlocked_kB", "swapped_kB",
			"dumpable_kB", "inheritable_kB", "verdict", "comm");
	for (size_t i = 0; i < hs->n; i++) {
		const struct holding *h = &hs->holdings[i];

		fprintf(f, "%8d %-9s %-14s %-14s %5lu %10llu %11llu %10llu %11llu %14llu %-7s ",
			(int)h->pid, host_kind_name(h->kind),
			host_lock_name(h->lock, lock, sizeof(lock)),
			audit_method_name(h->method, method, sizeof(method)), h->mappings,
			h->state_bytes[STATE_LOCKED] >> 10, h->state_bytes[STATE_UNLOCKED] >> 10,
			h->state_bytes[STATE_SWAPPED] >> 10, h->state_bytes[STATE_DUMPABLE] >> 10,
			h->state_bytes[STATE_INHERITABLE] >> 10, holding_leaks(h) ? "LEAK" : "ok");
		print_escaped(f, h->comm, ESCAPE_TEXT);
		fputc('\n', f);
	}
	if (!hs->n)
		fprintf(f, "summary: host: NOTHING AUDITED: no process holds secret memory\n");
	else
		fprintf(f, "summary: host: %zu holdings of secret memory, %lu leaking: %s\n", hs->n,
			leaks, leaks ? "LEAK" : "CLEAN");
}

static void print_json(FILE *f, const struct host_scan *hs, const char *failure)
{
	char lock[64], method[64];

	fprintf(f, "{\"host\":true,\"kpageflags\":%s,\"duration_seconds\":%.6f,\"processes\":{",
		hs->kpageflags ? "true" : "false", hs->seconds);
	for (int o = 0; o < HOST_OUTCOMES; o++)
		fprintf(f, "%s\"%s\":%lu", o ? "," : "", host_outcome_name(o), hs->processes[o]);
	fprintf(f, "}");
	if (failure) {
		fprintf(f, ",\"error\":");
		print_escaped(f, failure, ESCAPE_JSON);
		fprintf(f, ",\"clean\":null}\n");
		return;
	}
	fprintf(f, ",\"holdings\":[");
	for (size_t i = 0; i < hs->n; i++) {
		const struct holding *h = &hs->holdings[i];

		fprintf(f, "%s{\"pid\":%d,\"comm\":", i ? "," : "", (int)h->pid);
		print_escaped(f, h->comm, ESCAPE_JSON);
		fprintf(f,
			",\"kind\":\"%s\",\"lock\":\"%s\",\"method\":\"%s\",\"mappings\":%lu,"
			"\"size\":%lu",
			host_kind_name(h->kind), host_lock_name(h->lock, lock, sizeof(lock)),
			audit_method_name(h->method, method, sizeof(method)), h->mappings, h->size);
		for (int s = 0; s < HOST_STATES; s++)
			fprintf(f, ",\"%s\":{\"mappings\":%lu,\"bytes\":%llu}", host_state_name(s),
				h->state_mappings[s], h->state_bytes[s]);
		fprintf(f, ",\"clean\":%s}", holding_leaks(h) ? "false" : "true");
	}
	fprintf(f, "],\"summary\":{\"holdings\":%zu,\"leaking\":%lu,\"clean\":%s}}\n", hs->n,
		leaking(hs),
		!hs->n	    ? "null" :
		leaking(hs) ? "false" :
			      "true");
}

/* SECBUF_AUDIT_TEST_STOP_IN=PID and _AFTER=PID: see scan.h, stop_in. */
static pid_t test_hook(const char *name)
{
	const char *v = getenv(name);

	return v ? (pid_t)atoi(v) : 0;
}

int audit_host(const struct audit_opts *o)
{
	struct audit_select sel = o->sel;
	unsigned long long errors[HOST_OUTCOMES];
	char failure[300] = "", *buf = NULL;
	struct host_scan hs;
	size_t len = 0;
	int rc;
	FILE *f;

	sel.likely = 1;
	sel.stop_in = test_hook("SECBUF_AUDIT_TEST_STOP_IN");
	sel.stop_after = test_hook("SECBUF_AUDIT_TEST_STOP_AFTER");
	/* Before the scan: the counters of the file this run replaces. */
	prom_carry(o->format == FORMAT_PROM ? o->output : NULL, errors);
	if (host_scan(&sel, &hs) < 0)
		snprintf(failure, sizeof(failure), "cannot scan /proc: %s", strerror(errno));
	/* The whole output in memory first: a file is replaced with all of it or not at all. */
	f = o->output ? open_memstream(&buf, &len) : stdout;
	if (!f) {
		host_scan_free(&hs);
		return audit_error(o, -1, "out of memory: %s", strerror(errno));
	}
	if (o->format == FORMAT_PROM)
		prom_print(f, &hs, !failure[0], errors);
	else if (o->format == FORMAT_JSON)
		print_json(f, &hs, failure[0] ? failure : NULL);
	else
		print_text(f, &hs, failure[0] ? failure : NULL);
	rc = failure[0] ? EXIT_ERROR : !hs.n ? EXIT_NOTHING : leaking(&hs) ? EXIT_LEAK : EXIT_CLEAN;
	host_scan_free(&hs);
	if (failure[0])
		fprintf(stderr, "secbuf-audit: %s\n", failure);
	if (!o->output) {
		if (fflush(stdout) != 0)
			return audit_error(o, -1, "stdout: %s", strerror(errno));
		return rc;
	}
	if (fclose(f) != 0) {
		free(buf);
		return audit_error(o, -1, "out of memory: %s", strerror(errno));
	}
	if (textfile_replace(o->output, buf, len) < 0) {
		int err = errno;

		free(buf);
		return audit_error(o, -1, "cannot write %s: %s; the file there is left as it was",
				   o->output, strerror(err));
	}
	free(buf);
	return rc;
}
