// SPDX-License-Identifier: MIT
/*
 * proof-unevictable-packed [--populate]: the packed-secret twin of
 * proof-unevictable.  A thread allocates 2,000 packed 32-byte secrets with
 * the lock method of the process (SECBUF_LOCK) and writes a random marker
 * into each.  From pagemap, kpageflags, smaps and meminfo (not the
 * library's own stat) the slab's pages holding them must be resident,
 * mlocked and unevictable, and pages beyond the ones handed out must not
 * be resident at all (lock on fault; with --populate under plain mlock, the
 * whole slab is).  The thread frees them and exits: its cached slots go
 * back, the slab is unmapped, and Mlocked returns to its baseline.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib-mark.h"
#include "lib-census.h"
#include "kfacts.h"
#include "tap.h"
#include "secbuf.h"

#define NSECRET		2000
#define SLAB_BLOCK	(256UL << 10)	/* libsecbuf's slab: aligned, guard pages included */
#define BIN_SLOTS	64		/* free slots a thread may hold beyond its secrets */

static bool populate;
static size_t page;
static int method;
static const char *name;

struct run {
	long base_kb;			/* Mlocked before */
	struct page_census after;	/* the slab's pages while the secrets live */
};

static void *run(void *arg)
{
	struct run *r = arg;
	unsigned flags = SECBUF_PACKED | (populate ? SECBUF_POPULATE : 0);
	unsigned char *p[NSECRET], *data, *lo, *hi;
	size_t npages, used_pages, mism = 0, bad_stat = 0, max_present;
	struct page_census before, after;
	struct secbuf_stat st;
	struct smaps_vma v;
	uint64_t *pm;
	bool ok = true;
	long held_kb;

	for (int i = 0; i < NSECRET; i++) {
		p[i] = secbuf_alloc_flags(32, flags);
		if (!p[i])
			tap_bail("packed secret %d: %s", i, strerror(errno));
		if (mark_fill(p[i]) < 0)
			tap_bail("getrandom: %s", strerror(errno));
	}
	/* The secrets' slab: one 256 KiB block, its data between two guard pages. */
	data = (unsigned char *)((uintptr_t)p[0] & ~(SLAB_BLOCK - 1)) + page;
	npages = SLAB_BLOCK / page - 2;
	lo = hi = p[0];
	for (int i = 1; i < NSECRET; i++) {
		if (p[i] < lo)
			lo = p[i];
		if (p[i] > hi)
			hi = p[i];
	}
	if (hi >= data + npages * page)
		tap_bail("the %d secrets do not fit one slab (%p-%p)", NSECRET, (void *)lo, (void *)hi);
	used_pages = ((uintptr_t)hi + 32 + 16 - 1) / page - ((uintptr_t)lo - 16) / page + 1;
	/* Lock on fault: the secrets' pages, and at most a thread's bin of slots more. */
	max_present = populate ? npages : used_pages + (BIN_SLOTS * 48 + page - 1) / page + 1;
	tap_check(hi - lo == (NSECRET - 1) * 48, "%d secrets side by side in one slab (%zu pages)",
		  NSECRET, used_pages);

	pm = calloc(npages, sizeof(*pm));
	if (!pm || page_census(data, npages, &before) < 0 || mlock_drain() < 0 ||
	    page_census(data, npages, &after) < 0 || pagemap_read(data, npages, pm) < 0)
		tap_bail("census: %s", strerror(errno));
	for (unsigned char *q = lo - 16; q < hi + 48; q += page)
		mism += !(pm[(uintptr_t)(q - data) / page] & PM_PRESENT);
	ok &= tap_check(mism == 0, "pagemap: every page holding a secret present (%zu missing)", mism);
	ok &= tap_check(populate ? after.present == npages : after.present <= max_present,
			"pagemap: %zu of the slab's %zu pages present (%s %zu)", after.present, npages,
			populate ? "want all" : "at most", max_present);
	ok &= census_all_locked(&before, &after);

	ok &= smaps_locked(data, method != SECBUF_LOCK_MLOCK, after.present * page / 1024, &v);
	held_kb = meminfo_kb("Mlocked");
	ok &= tap_check(held_kb - r->base_kb == (long)(after.present * page / 1024),
			"meminfo Mlocked grew %ld kB == %zu kB present", held_kb - r->base_kb,
			after.present * page / 1024);
	for (int i = 0; i < NSECRET; i++)
		bad_stat += secbuf_stat(p[i], &st) < 0 || st.lock_method != method ||
			    !st.locked_pages || st.locked_pages != st.resident_pages;
	ok &= tap_check(bad_stat == 0, "secbuf_stat agrees for every secret (%zu disagree)", bad_stat);
	for (int i = 0; i < NSECRET; i++)
		secbuf_free(p[i]);
	tap_report("unevictable %s packed: %d secrets on %zu pages, %zu of %zu slab pages present, %zu mlocked, %zu unevictable (%zu before drain), smaps Locked %ld kB, Mlocked +%ld kB",
		   name, NSECRET, used_pages, after.present, npages, after.mlocked, after.unevictable,
		   before.unevictable, v.locked_kb, held_kb - r->base_kb);
	free(pm);
	r->after = after;
	return (void *)(uintptr_t)ok;
}

int main(int argc, char **argv)
{
	struct run r;
	char label[64];
	pthread_t t;
	void *ok;
	long base_kb, freed_kb;
	bool fine;

	populate = argc > 1 && !strcmp(argv[1], "--populate");
	page = sysconf(_SC_PAGESIZE);
	method = secbuf_lock_method();
	name = secbuf_lock_method_name(method);
	tap_subject("unevictable", getenv("SECBUF_LOCK"));
	if (method < 0 || !name)
		tap_bail("secbuf_lock_method: %s", strerror(errno));
	snprintf(label, sizeof(label), "%s packed", name);
	tap_subject("unevictable", label);
	tap_diag("lock method %s%s, packed 32-byte secrets", name, populate ? " + SECBUF_POPULATE" : "");
	if (mlock_pin_cpu() < 0)
		tap_bail("pin to one CPU: %s", strerror(errno));
	/* The key page first, so that the baseline holds it. */
	secbuf_free(secbuf_alloc_flags(16, SECBUF_BEST_EFFORT));
	base_kb = meminfo_kb("Mlocked");
	r.base_kb = base_kb;
	if (pthread_create(&t, NULL, run, &r) || pthread_join(t, &ok))
		tap_bail("thread: %s", strerror(errno));
	fine = ok != NULL;
	freed_kb = meminfo_kb("Mlocked");
	fine &= tap_check(freed_kb == base_kb,
			  "all freed and the thread gone: the slab is unmapped, Mlocked back to baseline (%ld kB, baseline %ld kB)",
			  freed_kb, base_kb);
	tap_summary("unevictable", label, fine,
		    "%d secrets: %zu slab pages present, %zu mlocked+unevictable, %zu in THPs, Mlocked %+ld kB after free",
		    NSECRET, r.after.present, r.after.unevictable, r.after.huge, freed_kb - base_kb);
	return tap_done();
}
