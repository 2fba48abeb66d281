/* one.c - the audit of one process: its secret mappings, in text or JSON. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit.h"
#include "escape.h"
#include "procfs.h"

struct totals {
	unsigned long pages, resident, locked, swapped, unevictable, evictable, dirty;
	unsigned long secret; /* resident pages of memfd_secret memory: out of the direct map */
	unsigned by;	      /* every reason a mapping was selected */
	unsigned method;      /* every lock method the mappings are named after */
	size_t named;	      /* mappings named after a method */
	size_t agreeing;      /* of those, the ones whose VmFlags agree (lo, or not for "none") */
};

/*
 * The method libsecbuf names the data after, and whether the kernel
 * agrees: a mapping named after a locking method must be VM_LOCKED.
 */
static void print_method(const struct totals *t)
{
	char method[64];

	if (!t->named) {
		printf("lock method: unnamed (no %sMETHOD] mapping: a libsecbuf before 1.0 or a "
		       "kernel without CONFIG_ANON_VMA_NAME); the lo lf columns show the kernel's view\n",
		       SECBUF_VMA_PREFIX);
		return;
	}
	printf("lock method: %s, as libsecbuf names %zu mapping%s; VmFlags agree on %zu: %s\n",
	       audit_method_name(t->method, method, sizeof(method)), t->named,
	       t->named == 1 ? "" : "s", t->agreeing, t->agreeing == t->named ? "ok" : "MISMATCH");
}

/*
 * A page that can be swapped or is, or a mapping that libsecbuf named
 * after a locking method and the kernel does not lock: its next page
 * would be evictable (someone unlocked it, munlockall(2) say).
 */
static int is_dirty(const struct audit_map *m)
{
	return m->swapped || m->evictable ||
	       (m->method && m->method != METHOD_NONE && !audit_held(m));
}

/* How the mappings were selected, in words; memfd_secret memory besides. */
static const char *selection_words(unsigned by)
{
	switch (by) {
	case AUDIT_BY_NAME:
		return "name " SECBUF_VMA_NAME;
	case AUDIT_BY_VMFLAGS:
		return "VmFlags dd+wf (no mapping is named " SECBUF_VMA_NAME ")";
	case AUDIT_BY_NAME | AUDIT_BY_VMFLAGS:
		return "name " SECBUF_VMA_NAME " and VmFlags dd+wf";
	case AUDIT_BY_RANGE:
		return "address range";
	}
	return by & AUDIT_BY_LOCKED ? "name, VmFlags dd+wf and VmFlags lo (--all)" : "?";
}

static void print_selection(unsigned by)
{
	unsigned rest = by & ~AUDIT_BY_SECRETMEM;

	printf("selection: %s%s%s\n", rest ? selection_words(rest) : "",
	       rest && by != rest ? ", and " : "",
	       by != rest ? "memfd_secret memory (" SECRETMEM_NAME ")" : "");
}

static void print_text(pid_t pid, const char *comm, const struct audit_map *m, size_t n,
		       const struct totals *t, int kpf, unsigned searched)
{
	char by[40];

	printf("secbuf-audit: pid %d (", (int)pid);
	print_escaped(stdout, comm, ESCAPE_TEXT);
	printf("), page flags from %s\n",
	       kpf ? "/proc/kpageflags" : "VmFlags (not root: no /proc/kpageflags)");
	if (n)
		print_selection(t->by);
	else
		printf("selection: nothing selected\n");
	if (n)
		print_method(t);
	if (n)
		printf("%-27s %10s %-4s %-11s %8s %8s %8s %8s %-7s %s\n", "range", "size_kB",
		       "perm", "lo lf dd wf", "resident", "locked", "swapped", "unevict", "by",
		       "verdict");
	for (size_t i = 0; i < n; i++) {
		char range[40], uv[24];

		snprintf(range, sizeof(range), "%lx-%lx", m[i].start, m[i].end);
		if (kpf)
			snprintf(uv, sizeof(uv), "%lu", m[i].unevictable);
		else
			snprintf(uv, sizeof(uv), "?");
		printf("%-27s %10lu %-4s %-2s %-2s %-2s %-2s %8lu %8lu %8lu %8s %-7s %s%s", range,
		       (m[i].end - m[i].start) >> 10, m[i].perms, m[i].lo ? "lo" : "-",
		       m[i].lf ? "lf" : "-", m[i].dd ? "dd" : "-", m[i].wf ? "wf" : "-",
		       m[i].resident, m[i].locked, m[i].swapped, uv,
		       audit_by_name(m[i].by, by, sizeof(by)), is_dirty(&m[i]) ? "LEAK" : "ok",
		       m[i].name[0] ? " " : "");
		print_escaped(stdout, m[i].name, ESCAPE_TEXT);
		putchar('\n');
	}
	if (!n) {
		printf("summary: pid %d: NOTHING AUDITED: no mapping selected by %s\n", (int)pid,
		       audit_by_name(searched, by, sizeof(by)));
		return;
	}
	printf("summary: pid %d: %zu secret mappings, %lu pages, %lu resident, %lu locked, %lu swapped, ",
	       (int)pid, n, t->pages, t->resident, t->locked, t->swapped);
	if (kpf)
		printf("%lu unevictable, ", t->unevictable);
	printf("%lu evictable, %lu secret (out of the direct map): %s\n", t->evictable, t->secret,
	       t->dirty ? "LEAK" : "CLEAN");
}

static void print_json(pid_t pid, const char *comm, const struct audit_map *m, size_t n,
		       const struct totals *t, int kpf, unsigned searched)
{
	char by[40], method[64];

	printf("{\"pid\":%d,\"comm\":", (int)pid);
	print_escaped(stdout, comm, ESCAPE_JSON);
	printf(",\"kpageflags\":%s,\"searched\":\"%s\"", kpf ? "true" : "false",
	       audit_by_name(searched, by, sizeof(by)));
	printf(",\"selection\":\"%s\",\"lock_method\":\"%s\",\"method_named\":%zu,"
	       "\"method_agrees\":%zu,\"mappings\":[",
	       n ? audit_by_name(t->by, by, sizeof(by)) : "none",
	       audit_method_name(t->method, method, sizeof(method)), t->named, t->agreeing);
	for (size_t i = 0; i < n; i++) {
		printf("%s{\"start\":\"0x%lx\",\"end\":\"0x%lx\",\"size\":%lu,\"perms\":\"%s\",\"name\":",
		       i ? "," : "", m[i].start, m[i].end, m[i].end - m[i].start, m[i].perms);
		print_escaped(stdout, m[i].name, ESCAPE_JSON);
		printf(",\"vmflags\":");
		print_escaped(stdout, m[i].vmflags, ESCAPE_JSON);
		printf(",\"method\":\"%s\"",
		       audit_method_name(m[i].method, method, sizeof(method)));
		printf(",\"by\":\"%s\",\"lo\":%d,\"lf\":%d,\"dd\":%d,\"wf\":%d,\"pages\":%lu,\"resident\":%lu,"
		       "\"locked\":%lu,\"swapped\":%lu,\"unevictable\":",
		       audit_by_name(m[i].by, by, sizeof(by)), m[i].lo, m[i].lf, m[i].dd, m[i].wf,
		       m[i].pages, m[i].resident, m[i].locked, m[i].swapped);
		if (kpf)
			printf("%lu", m[i].unevictable);
		else
			printf("null");
		printf(",\"evictable\":%lu,\"secret\":%lu,\"clean\":%s}", m[i].evictable,
		       m[i].method == METHOD_SECRETMEM ? m[i].resident : 0,
		       is_dirty(&m[i]) ? "false" : "true");
	}
	printf("],\"summary\":{\"mappings\":%zu,\"pages\":%lu,\"resident\":%lu,\"locked\":%lu,\"swapped\":%lu,"
	       "\"unevictable\":",
	       n, t->pages, t->resident, t->locked, t->swapped);
	if (kpf)
		printf("%lu", t->unevictable);
	else
		printf("null");
	printf(",\"evictable\":%lu,\"secret\":%lu,\"clean\":%s}}\n", t->evictable, t->secret,
	       !n	? "null" :
	       t->dirty ? "false" :
			  "true");
}

static const char *scan_error(int err)
{
	if (err == ENOENT || err == ESRCH)
		return "no such process";
	if (err == EACCES || err == EPERM)
		return "permission denied: audit your own processes, or run as root";
	return strerror(err);
}

int audit_one(long pid, const struct audit_opts *o)
{
	const struct audit_select *sel = &o->sel;
	unsigned searched = AUDIT_BY_NAME | AUDIT_BY_VMFLAGS | AUDIT_BY_SECRETMEM;
	struct audit_map *maps;
	struct totals t = { 0 };
	char comm[64];
	size_t n;
	int kpf;

	if (sel->have_range)
		searched = AUDIT_BY_RANGE;
	else if (sel->all)
		searched |= AUDIT_BY_LOCKED;

	if (audit_scan(pid, sel, &maps, &n, &kpf) < 0)
		return audit_error(o, pid, "pid %ld: cannot read smaps or pagemap: %s", pid,
				   scan_error(errno));
	proc_comm_of(pid, comm, sizeof(comm));
	for (size_t i = 0; i < n; i++) {
		t.pages += maps[i].pages;
		t.resident += maps[i].resident;
		t.locked += maps[i].locked;
		t.swapped += maps[i].swapped;
		t.unevictable += maps[i].unevictable;
		t.evictable += maps[i].evictable;
		t.secret += maps[i].method == METHOD_SECRETMEM ? maps[i].resident : 0;
		t.dirty += is_dirty(&maps[i]);
		t.by |= maps[i].by;
		t.method |= maps[i].method;
		t.named += maps[i].method != 0;
		t.agreeing += maps[i].method && audit_method_agrees(&maps[i]);
	}
	if (o->format == FORMAT_JSON)
		print_json(pid, comm, maps, n, &t, kpf, searched);
	else
		print_text(pid, comm, maps, n, &t, kpf, searched);
	free(maps);
	if (fflush(stdout) != 0)
		return audit_error(o, pid, "stdout: %s", strerror(errno));
	if (!n) {
		fprintf(stderr, "secbuf-audit: pid %ld: nothing audited: no mapping selected\n",
			pid);
		return EXIT_NOTHING;
	}
	return t.dirty ? EXIT_LEAK : EXIT_CLEAN;
}
