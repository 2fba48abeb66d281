/*
 * secbuf-audit - is any secret memory of a process swapped out or evictable?
 * Exit status: 0 clean, 1 a secret page is swapped or evictable, 2 error,
 * 3 nothing audited (no mapping was selected).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scan.h"

enum { EXIT_CLEAN, EXIT_LEAK, EXIT_ERROR, EXIT_NOTHING };

struct totals {
	unsigned long pages, resident, locked, swapped, unevictable, evictable, dirty;
	unsigned by; /* every reason a mapping was selected */
};

static int json;

static void usage(FILE *f)
{
	fprintf(f,
		"usage: secbuf-audit [--all | --range START-END] [--json] PID\n"
		"  Audits the secbuf memory of PID: pages resident, locked, swapped (pagemap)\n"
		"  and unevictable (/proc/kpageflags, root only).  Secbuf memory is every mapping\n"
		"  named " SECBUF_VMA_NAME " or with VmFlags dd and wf (secbuf's signature, which\n"
		"  also finds it on kernels without CONFIG_ANON_VMA_NAME).\n"
		"  --all        also every locked (VmFlags lo) mapping, e.g. of a program using mlock\n"
		"  --range A-B  audit the hex address range A-B instead\n"
		"  --json       one JSON object on stdout, errors included\n"
		"  --version    print the version\n"
		"Exit status: 0 clean, 1 a page is swapped or evictable, 2 error, 3 nothing audited.\n"
		"A page counts as locked when kpageflags says MLOCKED or UNEVICTABLE (6.1 sets\n"
		"the unevictable bit through a per-CPU batch, so it can lag mlock); without\n"
		"kpageflags, when it is resident in a VM_LOCKED mapping.\n");
}

/* Length of the valid UTF-8 sequence at p (at most left bytes), or 0. */
static size_t utf8_len(const unsigned char *p, size_t left)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		len = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		len = 3;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		len = 4;
	else
		return 0;
	/* No overlong forms, no surrogates, nothing above U+10FFFF. */
	if (p[0] == 0xe0)
		lo = 0xa0;
	else if (p[0] == 0xed)
		hi = 0x9f;
	else if (p[0] == 0xf0)
		lo = 0x90;
	else if (p[0] == 0xf4)
		hi = 0x8f;
	if (left < len || p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return len;
}

/*
 * Print s for JSON (as a string literal) or for a terminal.  Valid UTF-8
 * passes; control characters and bytes that are not UTF-8 become \u00XX
 * (JSON) or \xXX (text), so any process name gives valid output.
 */
static void print_str(const char *str, int for_json)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t left = strlen(str);

	if (for_json)
		putchar('"');
	while (left) {
		size_t len = utf8_len(s, left);

		if (for_json && (*s == '"' || *s == '\\'))
			printf("\\%c", *s);
		else if (len && *s >= 0x20 && *s != 0x7f)
			fwrite(s, 1, len, stdout);
		else
			printf(for_json ? "\\u%04x" : "\\x%02x", *s);
		len = len ? len : 1;
		s += len;
		left -= len;
	}
	if (for_json)
		putchar('"');
}

/* A failure, on stderr and, with --json, as the JSON answer on stdout. */
static int error(long pid, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int error(long pid, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "secbuf-audit: %s\n", msg);
	if (json) {
		printf(pid > 0 ? "{\"pid\":%ld," : "{\"pid\":null,", pid);
		printf("\"error\":");
		print_str(msg, 1);
		printf(",\"clean\":null}\n");
	}
	return EXIT_ERROR;
}

static int is_dirty(const struct audit_map *m)
{
	return m->swapped || m->evictable;
}

/* How the mappings were selected, in words. */
static const char *selection_text(unsigned by)
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

static void print_text(pid_t pid, const char *comm, const struct audit_map *m, size_t n,
		       const struct totals *t, int kpf, unsigned searched)
{
	char by[40];

	printf("secbuf-audit: pid %d (", (int)pid);
	print_str(comm, 0);
	printf("), page flags from %s\n",
	       kpf ? "/proc/kpageflags" : "VmFlags (not root: no /proc/kpageflags)");
	printf("selection: %s\n", n ? selection_text(t->by) : "nothing selected");
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
		print_str(m[i].name, 0);
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
	printf("%lu evictable: %s\n", t->evictable, t->dirty ? "LEAK" : "CLEAN");
}

static void print_json(pid_t pid, const char *comm, const struct audit_map *m, size_t n,
		       const struct totals *t, int kpf, unsigned searched)
{
	char by[40];

	printf("{\"pid\":%d,\"comm\":", (int)pid);
	print_str(comm, 1);
	printf(",\"kpageflags\":%s,\"searched\":\"%s\"", kpf ? "true" : "false",
	       audit_by_name(searched, by, sizeof(by)));
	printf(",\"selection\":\"%s\",\"mappings\":[",
	       n ? audit_by_name(t->by, by, sizeof(by)) : "none");
	for (size_t i = 0; i < n; i++) {
		printf("%s{\"start\":\"0x%lx\",\"end\":\"0x%lx\",\"size\":%lu,\"perms\":\"%s\",\"name\":",
		       i ? "," : "", m[i].start, m[i].end, m[i].end - m[i].start, m[i].perms);
		print_str(m[i].name, 1);
		printf(",\"vmflags\":");
		print_str(m[i].vmflags, 1);
		printf(",\"by\":\"%s\",\"lo\":%d,\"lf\":%d,\"dd\":%d,\"wf\":%d,\"pages\":%lu,\"resident\":%lu,"
		       "\"locked\":%lu,\"swapped\":%lu,\"unevictable\":",
		       audit_by_name(m[i].by, by, sizeof(by)), m[i].lo, m[i].lf, m[i].dd, m[i].wf,
		       m[i].pages, m[i].resident, m[i].locked, m[i].swapped);
		if (kpf)
			printf("%lu", m[i].unevictable);
		else
			printf("null");
		printf(",\"evictable\":%lu,\"clean\":%s}", m[i].evictable,
		       is_dirty(&m[i]) ? "false" : "true");
	}
	printf("],\"summary\":{\"mappings\":%zu,\"pages\":%lu,\"resident\":%lu,\"locked\":%lu,\"swapped\":%lu,"
	       "\"unevictable\":",
	       n, t->pages, t->resident, t->locked, t->swapped);
	if (kpf)
		printf("%lu", t->unevictable);
	else
		printf("null");
	printf(",\"evictable\":%lu,\"clean\":%s}}\n", t->evictable,
	       !n	? "null" :
	       t->dirty ? "false" :
			  "true");
}

/* The process's name as the kernel keeps it: up to 15 arbitrary bytes. */
static void read_comm(long pid, char *comm, size_t size)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, comm, size - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n > 0 && comm[n - 1] == '\n')
		n--;
	if (n < 0)
		n = snprintf(comm, size, "?");
	comm[n] = '\0';
}

static const char *scan_error(int err)
{
	if (err == ENOENT || err == ESRCH)
		return "no such process";
	if (err == EACCES || err == EPERM)
		return "permission denied: audit your own processes, or run as root";
	return strerror(err);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "all", no_argument, NULL, 'a' },     { "range", required_argument, NULL, 'r' },
		{ "json", no_argument, NULL, 'j' },    { "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' }, { 0 }
	};
	struct audit_select sel = { 0 };
	struct audit_map *maps;
	struct totals t = { 0 };
	char comm[64], bad[300] = "", *end;
	unsigned searched = AUDIT_BY_NAME | AUDIT_BY_VMFLAGS;
	size_t n;
	int kpf, opt;
	long pid;

	opterr = 0; /* reported below, as JSON too when --json comes later */
	while ((opt = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (opt) {
		case 'a':
			sel.all = 1;
			break;
		case 'r':
			if (sscanf(optarg, "%lx-%lx%c", &sel.range_start, &sel.range_end, comm) !=
				    2 ||
			    sel.range_start >= sel.range_end)
				snprintf(bad, sizeof(bad),
					 "bad --range %s (hex START-END, START below END)", optarg);
			sel.have_range = 1;
			break;
		case 'j':
			json = 1;
			break;
		case 'h':
			usage(stdout);
			return EXIT_CLEAN;
		case 'V':
			printf("secbuf-audit (secbuf) %s\n", SECBUF_VERSION);
			return EXIT_CLEAN;
		case ':':
			snprintf(bad, sizeof(bad), "%s needs an argument", argv[optind - 1]);
			break;
		default:
			snprintf(bad, sizeof(bad), "unknown option %s", argv[optind - 1]);
			break;
		}
	}
	if (!bad[0] && optind != argc - 1)
		snprintf(bad, sizeof(bad), optind < argc ? "one PID only" : "which PID?");
	if (bad[0]) {
		if (!json)
			usage(stderr);
		return error(0, "%s", bad);
	}
	errno = 0;
	pid = strtol(argv[optind], &end, 10);
	if (errno || *end || pid <= 0 || pid > 0x7fffffff)
		return error(0, "bad PID %s", argv[optind]);
	if (sel.have_range)
		searched = AUDIT_BY_RANGE;
	else if (sel.all)
		searched |= AUDIT_BY_LOCKED;

	if (audit_scan(pid, &sel, &maps, &n, &kpf) < 0)
		return error(pid, "pid %ld: cannot read smaps or pagemap: %s", pid,
			     scan_error(errno));
	read_comm(pid, comm, sizeof(comm));
	for (size_t i = 0; i < n; i++) {
		t.pages += maps[i].pages;
		t.resident += maps[i].resident;
		t.locked += maps[i].locked;
		t.swapped += maps[i].swapped;
		t.unevictable += maps[i].unevictable;
		t.evictable += maps[i].evictable;
		t.dirty += is_dirty(&maps[i]);
		t.by |= maps[i].by;
	}
	if (json)
		print_json(pid, comm, maps, n, &t, kpf, searched);
	else
		print_text(pid, comm, maps, n, &t, kpf, searched);
	free(maps);
	if (fflush(stdout) != 0)
		return error(pid, "stdout: %s", strerror(errno));
	if (!n) {
		fprintf(stderr, "secbuf-audit: pid %ld: nothing audited: no mapping selected\n",
			pid);
		return EXIT_NOTHING;
	}
	return t.dirty ? EXIT_LEAK : EXIT_CLEAN;
}
