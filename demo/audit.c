/*
 * secbuf-audit - is any secret memory of a process swapped out or evictable?
 * Exit status: 0 clean, 1 a secret page is swapped or evictable, 2 error.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit-scan.h"

struct totals {
	unsigned long pages, resident, locked, swapped, unevictable, evictable, dirty;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: secbuf-audit [--all | --range START-END] [--json] PID\n"
		"  Audits every " SECBUF_VMA_NAME " mapping of PID: pages resident, locked, swapped\n"
		"  (pagemap) and unevictable (/proc/kpageflags, root only).\n"
		"  --all        also every locked (VmFlags lo) mapping, e.g. of a program using mlock\n"
		"  --range A-B  audit the hex address range A-B instead (kernels without\n"
		"               CONFIG_ANON_VMA_NAME cannot name mappings)\n"
		"  --json       one JSON object on stdout\n"
		"Exit status: 0 clean, 1 a page is swapped or evictable, 2 error.\n"
		"A page counts as locked when kpageflags says MLOCKED or UNEVICTABLE (6.1 sets\n"
		"the unevictable bit through a per-CPU batch, so it can lag mlock); without\n"
		"kpageflags, when it is resident in a VM_LOCKED mapping.\n");
}

static int dirty(const struct audit_map *m)
{
	return m->swapped || m->evictable;
}

static void print_text(pid_t pid, const char *comm, const struct audit_map *m, size_t n,
		       const struct totals *t, int kpf)
{
	printf("secbuf-audit: pid %d (%s), page flags from %s\n", (int)pid, comm,
	       kpf ? "/proc/kpageflags" : "VmFlags (not root: no /proc/kpageflags)");
	if (n)
		printf("%-27s %10s %-4s %-11s %8s %8s %8s %8s  %s\n", "range", "size_kB", "perm", "lo lf dd wf",
		       "resident", "locked", "swapped", "unevict", "verdict");
	for (size_t i = 0; i < n; i++) {
		char range[40], uv[24];

		snprintf(range, sizeof(range), "%lx-%lx", m[i].start, m[i].end);
		if (kpf)
			snprintf(uv, sizeof(uv), "%lu", m[i].unevictable);
		else
			snprintf(uv, sizeof(uv), "?");
		printf("%-27s %10lu %-4s %-2s %-2s %-2s %-2s %8lu %8lu %8lu %8s  %s%s%s\n", range,
		       (m[i].end - m[i].start) >> 10, m[i].perms,
		       m[i].lo ? "lo" : "-", m[i].lf ? "lf" : "-", m[i].dd ? "dd" : "-", m[i].wf ? "wf" : "-",
		       m[i].resident, m[i].locked, m[i].swapped, uv,
		       dirty(&m[i]) ? "LEAK" : "ok", m[i].name[0] ? " " : "", m[i].name);
	}
	printf("summary: pid %d: %zu secret mappings, %lu pages, %lu resident, %lu locked, %lu swapped, ",
	       (int)pid, n, t->pages, t->resident, t->locked, t->swapped);
	if (kpf)
		printf("%lu unevictable, ", t->unevictable);
	printf("%lu evictable: %s\n", t->evictable, t->dirty ? "LEAK" : "CLEAN");
}

static void print_json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

static void print_json(pid_t pid, const char *comm, const struct audit_map *m, size_t n,
		       const struct totals *t, int kpf)
{
	printf("{\"pid\":%d,\"comm\":", (int)pid);
	print_json_str(comm);
	printf(",\"kpageflags\":%s,\"mappings\":[", kpf ? "true" : "false");
	for (size_t i = 0; i < n; i++) {
		printf("%s{\"start\":\"0x%lx\",\"end\":\"0x%lx\",\"size\":%lu,\"perms\":\"%s\",\"name\":",
		       i ? "," : "", m[i].start, m[i].end, m[i].end - m[i].start, m[i].perms);
		print_json_str(m[i].name);
		printf(",\"vmflags\":");
		print_json_str(m[i].vmflags);
		printf(",\"lo\":%d,\"lf\":%d,\"dd\":%d,\"wf\":%d,\"pages\":%lu,\"resident\":%lu,\"locked\":%lu,"
		       "\"swapped\":%lu,\"unevictable\":", m[i].lo, m[i].lf, m[i].dd, m[i].wf,
		       m[i].pages, m[i].resident, m[i].locked, m[i].swapped);
		if (kpf)
			printf("%lu", m[i].unevictable);
		else
			printf("null");
		printf(",\"evictable\":%lu,\"clean\":%s}", m[i].evictable, dirty(&m[i]) ? "false" : "true");
	}
	printf("],\"summary\":{\"mappings\":%zu,\"pages\":%lu,\"resident\":%lu,\"locked\":%lu,\"swapped\":%lu,"
	       "\"evictable\":%lu,\"clean\":%s}}\n", n, t->pages, t->resident, t->locked, t->swapped,
	       t->evictable, t->dirty ? "false" : "true");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "all", no_argument, NULL, 'a' },
		{ "range", required_argument, NULL, 'r' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct audit_select sel = { 0 };
	struct audit_map *maps;
	struct totals t = { 0 };
	char path[64], comm[64] = "?", *end;
	size_t n;
	int json = 0, kpf, opt;
	long pid;
	FILE *f;

	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 'a': sel.all = 1; break;
		case 'r':
			if (sscanf(optarg, "%lx-%lx", &sel.range_start, &sel.range_end) != 2 ||
			    sel.range_start >= sel.range_end) {
				fprintf(stderr, "secbuf-audit: bad --range %s (hex START-END)\n", optarg);
				return 2;
			}
			sel.have_range = 1;
			break;
		case 'j': json = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return 2;
	}
	pid = strtol(argv[optind], &end, 10);
	if (*end || pid <= 0) {
		fprintf(stderr, "secbuf-audit: bad PID %s\n", argv[optind]);
		return 2;
	}
	if (audit_scan(pid, &sel, &maps, &n, &kpf) < 0) {
		fprintf(stderr, "secbuf-audit: pid %ld: cannot read smaps/pagemap: %s\n", pid, strerror(errno));
		return 2;
	}
	snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
	f = fopen(path, "re");
	if (f) {
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	}
	for (size_t i = 0; i < n; i++) {
		t.pages += maps[i].pages;
		t.resident += maps[i].resident;
		t.locked += maps[i].locked;
		t.swapped += maps[i].swapped;
		t.unevictable += maps[i].unevictable;
		t.evictable += maps[i].evictable;
		t.dirty += dirty(&maps[i]);
	}
	if (!n && !json)
		fprintf(stderr, "secbuf-audit: pid %ld has no %s mapping%s\n", pid,
			sel.have_range ? "in that range" : SECBUF_VMA_NAME, sel.all ? " and no locked one" : "");
	if (json)
		print_json(pid, comm, maps, n, &t, kpf);
	else
		print_text(pid, comm, maps, n, &t, kpf);
	free(maps);
	return t.dirty ? 1 : 0;
}
