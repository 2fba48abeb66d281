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

/* The drop-ins (secbuf-run) a process can have loaded, as bits. */
enum dropin { DROPIN_SODIUM = 1, DROPIN_OPENSSL = 2 };

struct totals {
	unsigned long pages, resident, locked, swapped, unevictable, evictable, zero, dirty;
	unsigned long secret; /* resident pages of memfd_secret memory: out of the direct map */
	unsigned by;	      /* every reason a mapping was selected */
	unsigned method;      /* every lock method the mappings are named after */
	size_t named;	      /* mappings named after a method */
	size_t agreeing;      /* of those, the ones whose VmFlags agree (lo, or not for "none") */
};

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
		return "secbuf's mappings, by name " SECBUF_VMA_NAME;
	case AUDIT_BY_VMFLAGS:
		return "secbuf's mappings, by VmFlags dd+wf (unnamed: this kernel has no "
		       "CONFIG_ANON_VMA_NAME)";
	case AUDIT_BY_NAME | AUDIT_BY_VMFLAGS:
		return "secbuf's mappings, by name " SECBUF_VMA_NAME " and by VmFlags dd+wf";
	case AUDIT_BY_RANGE:
		return "the address range";
	case AUDIT_BY_DROPIN:
	case AUDIT_BY_DROPIN | AUDIT_BY_VMFLAGS:
		return "VmFlags dd+nh in a process with a drop-in (libsecbuf-*.so) loaded";
	}
	return by & AUDIT_BY_LOCKED ? "secbuf's mappings and every locked one (--all)" : "?";
}

static void print_selection(unsigned by)
{
	unsigned rest = by & ~AUDIT_BY_SECRETMEM;

	printf("selection: %s%s%s\n", rest ? selection_words(rest) : "",
	       rest && by != rest ? ", and " : "",
	       by != rest ? "memfd_secret memory (" SECRETMEM_NAME ")" : "");
}

/*
 * One method per mapping: the one libsecbuf named it after, else what
 * VmFlags show (the kernel shows mlock2 and MAP_LOCKONFAULT alike).
 */
static const char *mapping_method(const struct audit_map *m, char *buf, size_t size)
{
	if (m->method)
		return audit_method_name(m->method, buf, size);
	return m->lo && m->lf ? "lock-on-fault" : m->lo ? "mlock" : "none";
}

/*
 * What a mapping is, where it can be told: libsecbuf's key page (by its
 * name, or unnamed by its shape: one page locked eagerly, where buffers
 * lock on fault), a sodium_malloc() buffer when the process runs the
 * drop-in, memfd_secret memory.
 */
static const char *mapping_what(const struct audit_map *m, unsigned dropins)
{
	if (m->method == METHOD_SECRETMEM)
		return "secret memory";
	if (!strcmp(m->name, "[anon:secbuf-key]") ||
	    (!m->name[0] && (m->by == AUDIT_BY_VMFLAGS || m->by == AUDIT_BY_DROPIN) &&
	     m->pages == 1 && m->lo && !m->lf))
		return "libsecbuf key";
	if (m->by == AUDIT_BY_DROPIN)
		return "drop-in memory";
	if (m->by == AUDIT_BY_NAME || m->by == AUDIT_BY_VMFLAGS)
		return dropins & DROPIN_SODIUM ? "sodium_malloc" : "secbuf buffer";
	return m->by == AUDIT_BY_LOCKED ? "locked" : "in range";
}

/* The verdict of one mapping, with its reason in figures the row shows. */
static const char *mapping_verdict(const struct audit_map *m, char *buf, size_t size)
{
	char name[64];

	if (m->swapped)
		snprintf(buf, size, "LEAK: %lu swapped", m->swapped);
	else if (m->evictable)
		snprintf(buf, size, "LEAK: %lu evictable", m->evictable);
	else if (is_dirty(m))
		snprintf(buf, size, "LEAK: named %s, not locked",
			 audit_method_name(m->method, name, sizeof(name)));
	else if (m->zero)
		snprintf(buf, size, "ok: %lu zero page%s, rest locked", m->zero,
			 m->zero == 1 ? "" : "s");
	else
		snprintf(buf, size, m->resident ? "ok: resident = locked" : "ok: none resident");
	return buf;
}

/* "lock method: mlock2 on 1 mapping (named), secretmem on 3 (...); ..." */
static void print_methods(const struct audit_map *m, size_t n)
{
	const char *name[8];
	size_t count[8], groups = 0, agree = 0, g;
	char buf[8][64];
	int named[8];

	for (size_t i = 0; i < n; i++) {
		char one[64];
		const char *what = mapping_method(&m[i], one, sizeof(one));

		agree += !m[i].method || audit_method_agrees(&m[i]);
		for (g = 0; g < groups; g++)
			if (!strcmp(name[g], what) && named[g] == (m[i].method != 0))
				break;
		if (g == groups) {
			if (groups == 8)
				continue;
			snprintf(buf[g], sizeof(buf[g]), "%s", what);
			name[g] = buf[g];
			named[g] = m[i].method != 0;
			count[g] = 0;
			groups++;
		}
		count[g]++;
	}
	printf("lock method:");
	for (g = 0; g < groups; g++)
		printf("%s %s on %zu mapping%s (%s)", g ? "," : "", name[g], count[g],
		       count[g] == 1 ? "" : "s",
		       !named[g]		     ? (strcmp(name[g], "lock-on-fault") ?
								"from VmFlags" :
								"from VmFlags lo lf: mlock2 or MAP_LOCKONFAULT") :
		       !strcmp(name[g], "secretmem") ? "memfd_secret" :
						       "named by libsecbuf");
	printf("; VmFlags agree on %zu of %zu: %s\n", agree, n, agree == n ? "ok" : "MISMATCH");
}

/* Which drop-ins pid has mapped, from /proc/PID/maps. */
static unsigned loaded_dropins(pid_t pid)
{
	char path[64], line[512];
	unsigned found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0; /* unreadable maps: the rows go unlabelled, nothing more */
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "/libsecbuf-sodium.so"))
			found |= DROPIN_SODIUM;
		if (strstr(line, "/libsecbuf-openssl.so"))
			found |= DROPIN_OPENSSL;
	}
	fclose(f);
	return found;
}

/* " under secbuf-run (libsecbuf-openssl)", for the header; "" for none. */
static const char *dropin_words(unsigned dropins)
{
	switch (dropins) {
	case DROPIN_SODIUM:
		return " under secbuf-run (libsecbuf-sodium)";
	case DROPIN_OPENSSL:
		return " under secbuf-run (libsecbuf-openssl)";
	case DROPIN_SODIUM | DROPIN_OPENSSL:
		return " under secbuf-run (libsecbuf-sodium, libsecbuf-openssl)";
	}
	return "";
}

/* Nothing of secbuf's: what --all would add, so that the reader knows where to look. */
static void print_nothing(pid_t pid, unsigned searched, const struct audit_opts *o)
{
	struct audit_select all = { .all = 1 };
	struct audit_map *maps;
	unsigned long pages = 0;
	char by[40];
	size_t n;
	int kpf;

	if (o->sel.have_range)
		printf("summary: pid %d: NOTHING AUDITED: no mapping in the range\n", (int)pid);
	else
		printf("summary: pid %d: NOTHING AUDITED: this process holds no secbuf memory (no "
		       "mapping selected by %s)\n",
		       (int)pid, audit_by_name(searched, by, sizeof(by)));
	if (o->sel.all || o->sel.have_range || audit_scan(pid, &all, &maps, &n, &kpf) < 0)
		return;
	for (size_t i = 0; i < n; i++)
		pages += maps[i].pages;
	free(maps);
	if (n)
		printf("hint: --all would audit %zu locked mapping%s (%lu pages), such as "
		       "sodium_malloc()'s or OpenSSL's secure heap: secbuf-audit --all %d\n",
		       n, n == 1 ? "" : "s", pages, (int)pid);
	else
		printf("hint: the process locks no memory at all (--all would find nothing either)\n");
}

static void print_text(pid_t pid, const char *comm, const struct audit_map *m, size_t n,
		       const struct totals *t, int kpf, unsigned searched,
		       const struct audit_opts *o)
{
	unsigned dropins = loaded_dropins(pid);
	char method[64], verdict[64];

	printf("secbuf-audit: pid %d (", (int)pid);
	print_escaped(stdout, comm, ESCAPE_TEXT);
	printf(")%s, page flags from %s\n", dropin_words(dropins),
	       kpf ? "/proc/kpageflags" : "VmFlags (not root: no /proc/kpageflags)");
	if (!n) {
		printf("selection: nothing selected\n");
		print_nothing(pid, searched, o);
		return;
	}
	print_selection(t->by);
	print_methods(m, n);
	printf("figures in pages of %ld kB: pages = untouched + swapped + resident, "
	       "resident = locked + evictable + zero\n",
	       sysconf(_SC_PAGESIZE) / 1024);
	printf("zero: the kernel's shared zero page, mapped by a read of an untouched page; "
	       "it holds nothing and is never locked%s\n",
	       kpf ? "" : " (not root: counted as locked)");
	printf("CLEAN vouches for the selected mappings only, not for copies of a secret "
	       "elsewhere (heap, stack, swap)\n");
	printf("VmFlags: lo locked, lf locked on fault, dd not in core dumps, wf wiped in forked "
	       "children; locked: %s\n",
	       kpf ? "kpageflags MLOCKED or UNEVICTABLE (the unevictable bit can lag mlock)" :
		     "resident in a VM_LOCKED mapping");
	printf("%-27s %-4s %-11s %7s %9s %7s %8s %7s %9s %5s %-14s %-13s %s\n", "range", "perm",
	       "lo lf dd wf", "pages", "untouched", "swapped", "resident", "locked", "evictable",
	       "zero", "method", "what", "verdict");
	for (size_t i = 0; i < n; i++) {
		char range[40];

		snprintf(range, sizeof(range), "%lx-%lx", m[i].start, m[i].end);
		printf("%-27s %-4s %-2s %-2s %-2s %-2s %7lu %9lu %7lu %8lu %7lu %9lu %5lu %-14s %-13s %s%s",
		       range, m[i].perms, m[i].lo ? "lo" : "-", m[i].lf ? "lf" : "-",
		       m[i].dd ? "dd" : "-", m[i].wf ? "wf" : "-", m[i].pages,
		       m[i].pages - m[i].resident - m[i].swapped, m[i].swapped, m[i].resident,
		       m[i].locked, m[i].evictable, m[i].zero,
		       mapping_method(&m[i], method, sizeof(method)), mapping_what(&m[i], dropins),
		       mapping_verdict(&m[i], verdict, sizeof(verdict)), m[i].name[0] ? " " : "");
		print_escaped(stdout, m[i].name, ESCAPE_TEXT);
		putchar('\n');
	}
	printf("summary: pid %d: %zu mappings, %lu pages = %lu untouched + %lu swapped + %lu "
	       "resident; %lu resident = %lu locked + %lu evictable + %lu zero; %lu secret (out of "
	       "the direct map): %s\n",
	       (int)pid, n, t->pages, t->pages - t->resident - t->swapped, t->swapped, t->resident,
	       t->resident, t->locked, t->evictable, t->zero, t->secret,
	       !t->dirty ? "CLEAN (nothing swapped, nothing evictable)" :
	       t->swapped || t->evictable ?
			   "LEAK (see the rows marked LEAK)" :
			   "LEAK (a mapping named after a lock method is not locked)");
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
		printf(",\"evictable\":%lu,\"zero\":%lu,\"secret\":%lu,\"clean\":%s}",
		       m[i].evictable, m[i].zero,
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
	printf(",\"evictable\":%lu,\"zero\":%lu,\"secret\":%lu,\"clean\":%s}}\n", t->evictable,
	       t->zero, t->secret,
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
		t.zero += maps[i].zero;
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
		print_text(pid, comm, maps, n, &t, kpf, searched, o);
	free(maps);
	if (fflush(stdout) != 0)
		return audit_error(o, pid, "stdout: %s", strerror(errno));
	/* The report said so, on stdout (JSON: "clean": null): one line, one stream. */
	if (!n)
		return EXIT_NOTHING;
	return t.dirty ? EXIT_LEAK : EXIT_CLEAN;
}
