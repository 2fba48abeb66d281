/*
 * smaps: a process's smaps, pagemap and kpageflags as the audit reads them
 * (audit_scan_files(): kfacts' smaps_each_fd() and page_census_fds()).
 *
 * Structure-aware: valid smaps skeletons whose names, permissions, sizes,
 * VmFlags and extra lines come from the fuzzer, with pagemap entries that
 * point into a small kpageflags file, so that the selection rules and the
 * page census are reached, not only the first header check.  An input
 * whose first byte is odd is taken as raw smaps text instead.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "kfacts.h"
#include "../../demo/audit/scan.h"

#define PAGES	  64 /* the address space: pages 0 to 63 */
#define FRAMES	  32 /* kpageflags entries */
#define SMAPS_MAX 16384

static const char *const names[] = {
	"",
	"[anon:secbuf]",
	"[anon:secbuf:maplockonfault]",
	"[anon:secbuf:mlock2]",
	"[anon:secbuf:mlock]",
	"[anon:secbuf:none]",
	"[anon:secbuf:secretmem]",
	"[anon:secbuf:",
	"[anon:secbuf:]",
	"[anon:secbuf:x]",
	"/secretmem (deleted)",
	"[heap]",
	"[stack]",
	"[vvar]",
	"/usr/lib/libc.so.6",
	"[anon:other]",
};
static const char *const flags[] = { "rd", "wr", "ex", "sh", "mr", "mw", "me", "ms", "lo", "lf",
				     "dd", "wf", "io", "pf", "ac", "nr", "sd", "hg", "nh", "mg" };
static const char *const perms[] = { "rw-p", "r--p", "---p", "rw-s", "r-xp", "rwxp" };
static const char *const fields[] = { "Rss", "Locked", "Swap", "Size", "Pss" };

struct text {
	char buf[SMAPS_MAX];
	size_t len;
};

static void put(struct text *t, const char *s, size_t n)
{
	if (n > sizeof(t->buf) - t->len)
		n = sizeof(t->buf) - t->len;
	memcpy(t->buf + t->len, s, n);
	t->len += n;
}

static void puts_(struct text *t, const char *s)
{
	put(t, s, strlen(s));
}

static void mapping(struct text *t, struct fuzz_in *in)
{
	unsigned long page = sysconf(_SC_PAGESIZE), first = fuzz_below(in, PAGES);
	unsigned long n = 1 + fuzz_below(in, 8);
	uint32_t bits = fuzz_u32(in);
	char line[160];
	size_t nlen;
	const uint8_t *name;

	snprintf(line, sizeof(line), "%lx-%lx %s 00000000 00:00 0 ", first * page,
		 (first + n) * page, perms[fuzz_below(in, sizeof(perms) / sizeof(perms[0]))]);
	puts_(t, line);
	if (bits & 1) { /* a name of the fuzzer's own */
		name = fuzz_bytes(in, 300, &nlen);
		put(t, (const char *)name, strnlen((const char *)name, nlen));
	} else {
		puts_(t, names[(bits >> 1) % (sizeof(names) / sizeof(names[0]))]);
	}
	puts_(t, "\n");
	for (unsigned i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		if (bits & (1U << (6 + i)))
			continue;
		snprintf(line, sizeof(line), "%s: %8ld kB\n", fields[i],
			 (long)(int32_t)fuzz_u32(in));
		puts_(t, line);
	}
	puts_(t, "VmFlags:");
	for (unsigned i = 0, f = fuzz_u32(in); i < sizeof(flags) / sizeof(flags[0]); i++)
		if (f & (1U << i)) {
			puts_(t, " ");
			puts_(t, flags[i]);
		}
	puts_(t, bits & (1U << 12) ? "" : " ");
	puts_(t, "\n");
}

static void structured(struct fuzz_in *in, struct text *t, uint64_t *pm, uint64_t *kpf)
{
	unsigned n = 1 + fuzz_below(in, 8);

	for (unsigned i = 0; i < PAGES; i++) {
		uint8_t b = fuzz_u8(in);

		pm[i] = (b & 1 ? PM_PRESENT : 0) | (b & 2 ? PM_SWAPPED : 0) | (b >> 2) % FRAMES;
	}
	for (unsigned i = 0; i < FRAMES; i++) {
		uint8_t b = fuzz_u8(in);

		kpf[i] = (b & 1 ? 1ULL << KPF_COMPOUND_TAIL : 0) | (b & 2 ? 1ULL << KPF_THP : 0) |
			 (b & 4 ? 1ULL << KPF_UNEVICTABLE : 0) | (b & 8 ? 1ULL << KPF_MLOCKED : 0);
	}
	for (unsigned i = 0; i < n; i++)
		mapping(t, in);
	if (in->len) /* the rest: lines of the fuzzer's own after the mappings */
		put(t, (const char *)in->p, in->len);
}

/*
 * Once: the same readers on this process's own files, through the forms
 * that open them (audit_scan(), smaps_find(), smaps_count(), page_census()),
 * so that what wraps the fuzzed readers runs too.
 */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct audit_select all = { .all = 1, .likely = 1 };
	struct audit_map *maps;
	struct page_census c;
	struct smaps_vma v;
	size_t n;
	int kpf;

	(void)argc;
	(void)argv;
	if (audit_scan(getpid(), &all, &maps, &n, &kpf) < 0 || smaps_find(0, &all, &v) < 0 ||
	    smaps_count(0) <= 0)
		abort();
	free(maps);
	/* Without root, page_census() refuses: it wants lock bits only kpageflags has. */
	if (page_census((void *)(v.start), 1, &c) < 0 && errno != EACCES)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct text t;
	struct fuzz_in in = { data, size };
	uint64_t pm[PAGES] = { 0 }, kpf[FRAMES] = { 0 };
	struct audit_select sel = { 0 };
	struct audit_map *maps;
	char path[64];
	uint8_t mode = fuzz_u8(&in);
	size_t n;
	int sfd, pfd, kfd;

	t.len = 0;
	sel.all = mode & 2;
	sel.likely = mode & 4;
	if (mode & 8) {
		sel.have_range = 1;
		sel.range_start = fuzz_below(&in, PAGES) * sysconf(_SC_PAGESIZE);
		sel.range_end = sel.range_start + (1 + fuzz_below(&in, 16)) * sysconf(_SC_PAGESIZE);
	}
	if (mode & 1)
		put(&t, (const char *)in.p, in.len);
	else
		structured(&in, &t, pm, kpf);
	sfd = fuzz_file(t.buf, t.len, path);
	pfd = fuzz_file(pm, sizeof(pm), path);
	kfd = mode & 16 ? -1 : fuzz_file(kpf, sizeof(kpf), path);
	if (audit_scan_files(sfd, pfd, kfd, &sel, &maps, &n) == 0) {
		for (size_t i = 0; i < n; i++) {
			const struct audit_map *m = &maps[i];

			/* The census never counts more than the pages it read. */
			if (m->resident > m->pages || m->locked > m->resident ||
			    m->evictable > m->resident || m->name[sizeof(m->name) - 1] ||
			    m->vmflags[sizeof(m->vmflags) - 1])
				abort();
		}
		free(maps);
	}
	close(sfd);
	close(pfd);
	if (kfd >= 0)
		close(kfd);
	return 0;
}
