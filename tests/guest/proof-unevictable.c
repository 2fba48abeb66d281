// SPDX-License-Identifier: MIT
/*
 * proof-unevictable [--populate]: allocate a 64 MiB secbuf with the lock
 * method of the process (SECBUF_LOCK), touch a scattered set of pages and
 * check, from pagemap/kpageflags/smaps/meminfo rather than the library's own
 * stat, that exactly those pages are resident, mlocked and unevictable, and
 * that Mlocked returns to its baseline after secbuf_free().
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "kfacts.h"
#include "lib-census.h"
#include "tap.h"
#include "secbuf.h"

#define BUF_SIZE	(64UL << 20)
#define NTOUCH		48

int main(int argc, char **argv)
{
	bool populate = argc > 1 && !strcmp(argv[1], "--populate");
	size_t page = sysconf(_SC_PAGESIZE), npages, expect = 0, mism = 0, lib_pages = 0;
	int method = secbuf_lock_method();
	const char *name = secbuf_lock_method_name(method);
	struct page_census before, after;
	struct secbuf_stat st;
	struct smaps_vma v;
	uint64_t *pm0, *pm;
	unsigned char *p, *data;
	bool *want, ok = true;
	long base_kb, held_kb, freed_kb;

	tap_subject("unevictable", getenv("SECBUF_LOCK"));
	if (method < 0 || !name)
		tap_bail("secbuf_lock_method: %s", strerror(errno));
	tap_subject("unevictable", name);
	tap_diag("lock method %s%s", name, populate ? " + SECBUF_POPULATE" : "");
	if (mlock_pin_cpu() < 0)
		tap_bail("pin to one CPU: %s", strerror(errno));

	base_kb = meminfo_kb("Mlocked");
	p = secbuf_alloc_flags(BUF_SIZE, populate ? SECBUF_POPULATE : 0);
	if (!tap_check(p != NULL, "secbuf_alloc_flags(64 MiB) with %s", name))
		tap_bail("no buffer: %s", strerror(errno));
	if (secbuf_stat(p, &st) < 0)
		tap_bail("secbuf_stat: %s", strerror(errno));
	tap_check(st.lock_method == method, "the buffer uses the process method (%d)", st.lock_method);

	/* The data pages end at the page end of the user bytes (flush layout). */
	npages = st.mapped_bytes / page;
	data = (unsigned char *)(((uintptr_t)p + BUF_SIZE + page - 1) & ~(page - 1)) - st.mapped_bytes;
	pm0 = calloc(npages, sizeof(*pm0));
	pm = calloc(npages, sizeof(*pm));
	want = calloc(npages, sizeof(*want));
	if (!pm0 || !pm || !want || pagemap_read(data, npages, pm0) < 0)
		tap_bail("pagemap: %s", strerror(errno));

	/* Pages the library itself wrote at alloc time (the canary page, or
	 * all with SECBUF_POPULATE), plus a scattered, deterministic set of
	 * user pages. */
	for (size_t i = 0; i < npages; i++) {
		want[i] = pm0[i] & PM_PRESENT;
		lib_pages += want[i];
	}
	for (size_t k = 0; k < NTOUCH; k++) {
		size_t i = (k * 2654435761UL) % npages;
		unsigned char *a = data + i * page + page / 2;

		if (a < p)
			a = p;
		if (a >= p + BUF_SIZE)
			a = p + BUF_SIZE - 1;
		*a = (unsigned char)(k | 1);
		want[((uintptr_t)a - (uintptr_t)data) / page] = true;
	}
	for (size_t i = 0; i < npages; i++)
		expect += want[i];
	tap_diag("%zu data pages; %zu written by the library at alloc, %zu expected resident",
		 npages, lib_pages, expect);
	if (populate)
		ok &= tap_check(lib_pages == npages, "SECBUF_POPULATE faulted in every data page (%zu/%zu)",
				lib_pages, npages);

	if (page_census(data, npages, &before) < 0 || mlock_drain() < 0 ||
	    page_census(data, npages, &after) < 0 || pagemap_read(data, npages, pm) < 0)
		tap_bail("census: %s", strerror(errno));
	for (size_t i = 0; i < npages; i++)
		mism += !!(pm[i] & PM_PRESENT) != want[i];
	ok &= tap_check(mism == 0 && after.present == expect,
			"pagemap: exactly the %zu touched pages present (%zu present, %zu differ)",
			expect, after.present, mism);
	ok &= census_all_locked(&before, &after);

	ok &= smaps_locked(data, method != SECBUF_LOCK_MLOCK, expect * page / 1024, &v);
	held_kb = meminfo_kb("Mlocked");
	ok &= tap_check(held_kb - base_kb == (long)(expect * page / 1024),
			"meminfo Mlocked grew %ld kB == %zu kB touched", held_kb - base_kb,
			expect * page / 1024);
	if (secbuf_stat(p, &st) < 0)
		tap_bail("secbuf_stat: %s", strerror(errno));
	ok &= tap_check(st.locked_pages == expect && st.resident_pages == expect,
			"secbuf_stat agrees: %zu resident, %zu locked", st.resident_pages, st.locked_pages);

	secbuf_free(p);
	freed_kb = meminfo_kb("Mlocked");
	ok &= tap_check(freed_kb == base_kb, "Mlocked back to baseline after free (%ld kB, baseline %ld kB)",
			freed_kb, base_kb);

	tap_report("unevictable %s: %zu of %zu pages resident, %zu mlocked, %zu unevictable (%zu before drain), smaps Locked %ld kB, Mlocked +%ld kB, after free %+ld kB",
		   name, after.present, npages, after.mlocked, after.unevictable, before.unevictable,
		   v.locked_kb, held_kb - base_kb, freed_kb - base_kb);
	tap_summary("unevictable", name, ok,
		    "%zu/%zu touched pages mlocked+unevictable, %zu in THPs, VmFlags%s%s%s%s, Locked %ld kB, Mlocked %+ld kB after free",
		    after.unevictable, expect, after.huge, vmflag_has(&v, "lo") ? " lo" : "",
		    vmflag_has(&v, "lf") ? " lf" : "", vmflag_has(&v, "dd") ? " dd" : "",
		    vmflag_has(&v, "wf") ? " wf" : "", v.locked_kb, freed_kb - base_kb);
	free(pm0);
	free(pm);
	free(want);
	return tap_done();
}
