// SPDX-License-Identifier: MIT
/* TAP checks of a page census; see lib-census.h. */
#include "lib-census.h"
#include "tap.h"

bool census_all_locked(const struct page_census *before, const struct page_census *after)
{
	bool ok;

	ok = tap_check(after->mlocked == after->present,
		       "kpageflags MLOCKED on every present page (%zu/%zu)", after->mlocked,
		       after->present);
	ok &= tap_check(after->unevictable == after->present,
			"kpageflags UNEVICTABLE on every present page after the drain (%zu/%zu; %zu before it)",
			after->unevictable, after->present, before->unevictable);
	tap_diag("mlock batch drained: %s", MLOCK_DRAIN_HOW);
	ok &= tap_check(after->huge == 0, "no transparent huge pages (%zu pages in THPs)",
			after->huge);
	return ok;
}

bool smaps_locked(const void *addr, bool onfault, long want_kb, struct smaps_vma *v)
{
	bool ok;

	if (smaps_find(0, addr, v) < 0)
		tap_bail("smaps: no mapping at %p", addr);
	ok = tap_check(vmflag_has(v, "lo") && vmflag_has(v, "lf") == onfault &&
		       vmflag_has(v, "dd") && vmflag_has(v, "wf"),
		       "VmFlags has lo%s dd wf:%s", onfault ? " lf" : " (no lf)", v->vmflags);
	ok &= tap_check(v->locked_kb == want_kb && v->rss_kb == v->locked_kb,
			"smaps Locked %ld kB, Rss %ld kB == %ld kB in use", v->locked_kb, v->rss_kb,
			want_kb);
	return ok;
}
