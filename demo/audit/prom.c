/*
 * prom.c - the exposition format: a # HELP and a # TYPE line before the
 * samples of each metric, base units, _total on counters only, no
 * timestamps.  Labels are the process name (comm), the kind, the state and
 * the lock: never a pid, whose values would grow without bound as
 * processes come and go, and would part a daemon's history at each
 * restart.  Processes of one name are summed; the pids are in the text
 * and JSON output of the same scan.
 */
#define _GNU_SOURCE
#include "prom.h"

#include <stdlib.h>
#include <string.h>

#include "escape.h"

#define ERRORS "secbuf_audit_scan_errors_total"

void prom_carry(const char *path, unsigned long long errors[HOST_OUTCOMES])
{
	char line[256];
	FILE *f;

	memset(errors, 0, HOST_OUTCOMES * sizeof(errors[0]));
	f = path ? fopen(path, "re") : NULL;
	if (!f)
		return; /* a first run, or a file someone removed: the counter starts again */
	while (fgets(line, sizeof(line), f)) {
		for (int o = HOST_VANISHED; o < HOST_OUTCOMES; o++) {
			char want[96];
			size_t len = snprintf(want, sizeof(want), ERRORS "{reason=\"%s\"} ",
					      host_outcome_name(o));

			if (!strncmp(line, want, len))
				errors[o] = strtoull(line + len, NULL, 10);
		}
	}
	fclose(f);
}

static void family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static int by_name(const void *a, const void *b)
{
	const struct holding *x = a, *y = b;
	int c = strcmp(x->comm, y->comm);

	if (c)
		return c;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->lock != y->lock)
		return x->lock < y->lock ? -1 : 1;
	return x->method < y->method ? -1 : x->method > y->method;
}

static void labels(FILE *f, const struct holding *h)
{
	fputs("{comm=", f);
	print_escaped(f, h->comm, ESCAPE_PROM);
	fprintf(f, ",kind=\"%s\"", host_kind_name(h->kind));
}

static int same_group(const struct holding *a, const struct holding *b)
{
	return !strcmp(a->comm, b->comm) && a->kind == b->kind;
}

/* The processes of each name, kind, lock and method. */
static void print_processes(FILE *f, const struct host_scan *hs)
{
	char lock[64], method[64];

	family(f, "secbuf_secret_processes", "gauge",
	       "Processes holding secret memory, by name (comm), kind (secbuf; secretmem: "
	       "memfd_secret; dontdump: other anonymous memory locked and left out of core "
	       "dumps), how the kernel shows their mappings locked (onfault, mlock, locked, "
	       "none) and the lock method libsecbuf names them after (maplockonfault, mlock2, "
	       "mlock, none; unnamed).");
	for (size_t i = 0, j; i < hs->n; i = j) {
		const struct holding *h = &hs->holdings[i];

		for (j = i + 1;
		     j < hs->n && same_group(h, &hs->holdings[j]) &&
		     h->lock == hs->holdings[j].lock && h->method == hs->holdings[j].method;
		     j++)
			;
		fputs("secbuf_secret_processes", f);
		labels(f, h);
		fprintf(f, ",lock=\"%s\",method=\"%s\"} %zu\n",
			host_lock_name(h->lock, lock, sizeof(lock)),
			audit_method_name(h->method, method, sizeof(method)), j - i);
	}
}

/* Mappings (bytes = 0) or bytes (bytes = 1) in each state, by name and kind. */
static void print_states(FILE *f, const struct host_scan *hs, int bytes)
{
	const char *name = bytes ? "secbuf_secret_memory_bytes" : "secbuf_secret_mappings";

	if (bytes)
		family(f, name, "gauge",
		       "Bytes of secret memory in each state, summed over the processes of "
		       "one name: locked and unlocked (evictable) split the resident pages; "
		       "swapped are in swap; dumpable and inheritable are in memory or swap, in "
		       "mappings a core dump includes or fork() copies.");
	else
		family(f, name, "gauge",
		       "Mappings of secret memory in each state, summed over the processes of "
		       "one name: locked (VmFlags lo) or unlocked; swapped (a page in swap); "
		       "dumpable (no dd); inheritable (no wf).");
	for (size_t i = 0, j; i < hs->n; i = j) {
		unsigned long long sum[HOST_STATES] = { 0 };

		for (j = i; j < hs->n && same_group(&hs->holdings[i], &hs->holdings[j]); j++)
			for (int s = 0; s < HOST_STATES; s++)
				sum[s] += bytes ? hs->holdings[j].state_bytes[s] :
						  hs->holdings[j].state_mappings[s];
		for (int s = 0; s < HOST_STATES; s++) {
			fputs(name, f);
			labels(f, &hs->holdings[i]);
			fprintf(f, ",state=\"%s\"} %llu\n", host_state_name(s), sum[s]);
		}
	}
}

void prom_print(FILE *f, struct host_scan *hs, int ok,
		const unsigned long long errors[HOST_OUTCOMES])
{
	family(f, "secbuf_audit_success", "gauge",
	       "Whether the last scan of every process ran to its end (1) or failed (0).");
	fprintf(f, "secbuf_audit_success %d\n", ok);
	family(f, "secbuf_audit_duration_seconds", "gauge", "How long the last scan took.");
	fprintf(f, "secbuf_audit_duration_seconds %.6f\n", hs->seconds);
	family(f, "secbuf_audit_processes", "gauge",
	       "Processes the last scan saw, by outcome: scanned, or skipped because they "
	       "vanished, were denied or could not be read.");
	for (int o = 0; o < HOST_OUTCOMES; o++)
		fprintf(f, "secbuf_audit_processes{outcome=\"%s\"} %lu\n", host_outcome_name(o),
			hs->processes[o]);
	family(f, ERRORS, "counter",
	       "Processes the scans could not read, by reason, over every scan that wrote "
	       "this file.");
	for (int o = HOST_VANISHED; o < HOST_OUTCOMES; o++)
		fprintf(f, ERRORS "{reason=\"%s\"} %llu\n", host_outcome_name(o),
			errors[o] + hs->processes[o]);
	if (!ok)
		return;
	family(f, "secbuf_audit_kpageflags", "gauge",
	       "Whether the lock state of every resident page came from /proc/kpageflags (1) "
	       "or, for some, from the VmFlags of its mapping (0).");
	fprintf(f, "secbuf_audit_kpageflags %d\n", hs->kpageflags);
	if (hs->n) /* holdings is NULL when no process holds secrets: qsort() wants an array */
		qsort(hs->holdings, hs->n, sizeof(hs->holdings[0]), by_name);
	print_processes(f, hs);
	print_states(f, hs, 0);
	print_states(f, hs, 1);
}
