// SPDX-License-Identifier: MIT
/*
 * proof-swap: in a cgroup with a small memory.max, write random markers into
 * a secbuf (lock method from SECBUF_LOCK), into packed secbuf secrets
 * (SECBUF_PACKED: 32 bytes each, sharing slab pages), into ordinary malloc
 * memory (the control), into a memfd_secret mapping and into the secret
 * tier (SECBUF_SECRET: a buffer and packed secrets), print them as
 * "# KEEP:" lines
 * for the host's scan of the raw swap image, then apply memory pressure in
 * the same cgroup (at least 3 x memory.max, more until pagemap shows the
 * control pages swapped out, at most 192 MiB).  The secbuf and packed
 * pages must still be present and unevictable; with SECBUF_LOCK=none
 * (the negative control) they must have been swapped out instead.  The
 * process exits without freeing anything; the guest then powers off without
 * swapoff, and qemu/scan-swap searches the image.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "lib-cgroup.h"
#include "lib-mark.h"
#include "kfacts.h"
#include "tap.h"
#include "secbuf.h"

#define CGROUP		"proof-swap"
#define MEMORY_MAX	"32M"
#define NMARK		64		/* marker pages per kind */
#define NSECRET		16		/* memfd_secret and secret-tier marker pages */
#define NPACKED		256		/* packed secrets, one marker each: 3 slab pages */
#define CHUNK		(4UL << 20)	/* pressure step */
#define PRESSURE_MIN	(96UL << 20)	/* 3 x memory.max: the whole group cycles */
#define PRESSURE_MAX	(192UL << 20)	/* the swap image is 256 MiB */

static size_t page;

struct region {
	unsigned char *start;	/* page-aligned */
	size_t npages;
};

/* One marker per page, at the same offset of every page from p. */
static struct region mark_pages(const char *label, unsigned char *p, size_t n)
{
	struct region r;

	for (size_t i = 0; i < n; i++) {
		if (mark_fill(p + i * page + 64) < 0)
			tap_bail("getrandom: %s", strerror(errno));
		mark_keep(label, p + i * page + 64);
	}
	/* The pages holding the markers, first to last. */
	r.start = (unsigned char *)(((uintptr_t)p + 64) & ~(page - 1));
	r.npages = ((uintptr_t)p + (n - 1) * page + 64 + MARK_LEN - 1 - (uintptr_t)r.start) / page + 1;
	return r;
}

/* Packed secrets, each filled with a marker; the region covers their slab pages. */
static struct region mark_packed_as(const char *label, unsigned flags)
{
	unsigned char *lo = NULL, *hi = NULL;
	struct region r;

	for (int i = 0; i < NPACKED; i++) {
		unsigned char *p = secbuf_alloc_flags(MARK_LEN, flags | SECBUF_PACKED);

		if (!p)
			tap_bail("packed secret %d: %s", i, strerror(errno));
		if (mark_fill(p) < 0)
			tap_bail("getrandom: %s", strerror(errno));
		mark_keep(label, p);
		if (!lo || p < lo)
			lo = p;
		if (!hi || p > hi)
			hi = p;
	}
	r.start = (unsigned char *)((uintptr_t)lo & ~(page - 1));
	r.npages = ((uintptr_t)hi + MARK_LEN - 1 - (uintptr_t)r.start) / page + 1;
	return r;
}

static struct page_census census(struct region r)
{
	struct page_census c;

	if (page_census(r.start, r.npages, &c) < 0)
		tap_bail("census: %s", strerror(errno));
	return c;
}

int main(void)
{
	int method = secbuf_lock_method();
	const char *name = secbuf_lock_method_name(method);
	bool negative = method == SECBUF_LOCK_NONE, ok = true, pok;
	struct page_census sc, cc, mc, pc, tc, tpc;
	struct region sr, cr, mr, pr, tr, tpr;
	unsigned flags;
	unsigned char *sec, *ctl, *smem, *tier;
	size_t pressure = 0;
	long swap_kb;
	char label[64];

	page = sysconf(_SC_PAGESIZE);
	tap_subject("swap-guest", getenv("SECBUF_LOCK"));
	if (!name)
		tap_bail("secbuf_lock_method: %s", strerror(errno));
	tap_subject("swap-guest", name);
	snprintf(label, sizeof(label), "%s packed", name);
	if (meminfo_kb("SwapTotal") <= 0)
		tap_bail("no swap device: run with --swap");
	if (cgroup_enter(CGROUP, MEMORY_MAX) < 0)
		tap_bail("cgroup " CGROUP ": %s", strerror(errno));
	if (mlock_pin_cpu() < 0)
		tap_bail("pin: %s", strerror(errno));
	tap_diag("lock method %s, cgroup %s memory.max %s", name, CGROUP, MEMORY_MAX);

	/* mlock is only offered with POPULATE, none only with BEST_EFFORT. */
	flags = method == SECBUF_LOCK_MLOCK ? SECBUF_POPULATE : negative ? SECBUF_BEST_EFFORT : 0;
	sec = secbuf_alloc_flags(NMARK * page, flags);
	ctl = aligned_alloc(page, NMARK * page);
	smem = secretmem_map(NSECRET * page);
	tier = secbuf_alloc_flags(NSECRET * page, SECBUF_SECRET);
	if (!sec || !ctl || smem == MAP_FAILED || !tier)
		tap_bail("alloc (secbuf %p, malloc %p, memfd_secret %p, SECBUF_SECRET %p): %s",
			 (void *)sec, (void *)ctl, (void *)smem, (void *)tier, strerror(errno));
	/* What qemu/scan-swap is to find in the swap image. */
	tap_keep("expect secbuf %s", negative ? "present" : "absent");
	tap_keep("expect packed %s", negative ? "present" : "absent");
	tap_keep("expect control present");
	tap_keep("expect memfd_secret absent");
	tap_keep("expect secret-tier absent");
	tap_keep("expect secret-packed absent");
	tap_keep("summary swap-scan|%s%s|secbuf,control", name, negative ? " (neg. control)" : "");
	tap_keep("summary swap-scan|%s packed%s|packed,control", name, negative ? " (neg. control)" : "");
	tap_keep("summary swap-scan|memfd_secret|memfd_secret,control");
	tap_keep("summary swap-scan|SECBUF_SECRET|secret-tier,secret-packed,control");
	sr = mark_pages("secbuf", sec, NMARK);
	pr = mark_packed_as("packed", flags);
	cr = mark_pages("control", ctl, NMARK);
	mr = mark_pages("memfd_secret", smem, NSECRET);
	tr = mark_pages("secret-tier", tier, NSECRET);
	tpr = mark_packed_as("secret-packed", SECBUF_SECRET);

	/* Pressure: new anonymous memory in the same cgroup, kept mapped. */
	do {
		unsigned char *q = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (q == MAP_FAILED)
			tap_bail("pressure mmap: %s", strerror(errno));
		for (size_t off = 0; off < CHUNK; off += page)
			q[off] = 0x5a;
		pressure += CHUNK;
		cc = census(cr);
		sc = census(sr);
		pc = census(pr);
	} while (pressure < PRESSURE_MIN || (pressure < PRESSURE_MAX &&
		 (cc.swapped < cr.npages ||
		  (negative && (sc.swapped < sr.npages || pc.swapped < pr.npages)))));

	/* Let swap writeback finish before the guest powers off. */
	for (int i = 0; i < 50 && meminfo_kb("Writeback") > 0; i++)
		usleep(100000);
	if (mlock_drain() < 0)
		tap_bail("drain: %s", strerror(errno));
	sc = census(sr);
	cc = census(cr);
	mc = census(mr);
	pc = census(pr);
	tc = census(tr);
	tpc = census(tpr);
	swap_kb = meminfo_kb("SwapTotal") - meminfo_kb("SwapFree");

	ok &= tap_check(cc.swapped > 0, "control pages swapped out (%zu/%zu) after %zu MiB of pressure%s",
			cc.swapped, cr.npages, pressure >> 20, cc.swapped ? "" : ": inconclusive");
	if (negative) {
		ok &= tap_check(sc.swapped > 0,
				"negative control: unlocked secbuf pages swapped out (%zu/%zu)",
				sc.swapped, sr.npages);
		pok = tap_check(pc.swapped > 0,
				"negative control: unlocked packed slab pages swapped out (%zu/%zu)",
				pc.swapped, pr.npages);
	} else {
		ok &= tap_check(sc.present == sr.npages && sc.swapped == 0,
				"secbuf pages all present, none swapped (%zu/%zu present, %zu swapped)",
				sc.present, sr.npages, sc.swapped);
		ok &= tap_check(sc.unevictable == sc.present && sc.mlocked == sc.present,
				"secbuf pages unevictable and mlocked (%zu, %zu of %zu)",
				sc.unevictable, sc.mlocked, sc.present);
		pok = tap_check(pc.present == pr.npages && pc.swapped == 0,
				"packed slab pages all present, none swapped (%zu/%zu present, %zu swapped)",
				pc.present, pr.npages, pc.swapped);
		pok &= tap_check(pc.unevictable == pc.present && pc.mlocked == pc.present,
				 "packed slab pages unevictable and mlocked (%zu, %zu of %zu)",
				 pc.unevictable, pc.mlocked, pc.present);
	}
	pok &= cc.swapped > 0;
	tap_check(mc.present == mr.npages && mc.swapped == 0,
		  "memfd_secret pages all present, none swapped (%zu/%zu present, %zu swapped)",
		  mc.present, mr.npages, mc.swapped);
	tap_check(
		tc.present == tr.npages && tc.swapped == 0 && tpc.present == tpr.npages &&
			tpc.swapped == 0,
		"secret tier pages all present, none swapped (buffer %zu/%zu, packed %zu/%zu present; %zu, %zu swapped)",
		tc.present, tr.npages, tpc.present, tpr.npages, tc.swapped, tpc.swapped);
	tap_diag("mlock batch drained: %s", MLOCK_DRAIN_HOW);

	tap_report("swap %s: %zu MiB pressure in memory.max=%s, %ld kB swapped; control %zu/%zu pages swapped; secbuf %zu present, %zu swapped, %zu unevictable of %zu; memfd_secret %zu present, %zu swapped of %zu",
		   name, pressure >> 20, MEMORY_MAX, swap_kb, cc.swapped, cr.npages, sc.present,
		   sc.swapped, sc.unevictable, sr.npages, mc.present, mc.swapped, mr.npages);
	tap_report("swap %s packed: %d secrets on %zu slab pages: %zu present, %zu swapped, %zu unevictable",
		   name, NPACKED, pr.npages, pc.present, pc.swapped, pc.unevictable);
	tap_summary("swap-guest", negative ? "none (neg. control)" : name, ok, "control %zu/%zu swapped; secbuf %zu swapped, %zu/%zu unevictable",
		    cc.swapped, cr.npages, sc.swapped, sc.unevictable, sr.npages);
	tap_summary("swap-guest", negative ? "none packed (neg. control)" : label, pok,
		    "control %zu/%zu swapped; packed slab %zu swapped, %zu/%zu unevictable",
		    cc.swapped, cr.npages, pc.swapped, pc.unevictable, pr.npages);
	/* No free, no swapoff: the image keeps whatever reached it. */
	return tap_done();
}
