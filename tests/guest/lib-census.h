/* TAP checks every locked-memory proof makes of a page census (lib-proc.h). */
#ifndef PROOF_LIB_CENSUS_H
#define PROOF_LIB_CENSUS_H

#include <stdbool.h>
#include "kfacts.h"

/*
 * Every present page mlocked, and unevictable once the mlock batch was
 * drained (before: the census taken before the drain), and none in a
 * transparent huge page.  Returns whether all three held.
 */
bool census_all_locked(const struct page_census *before, const struct page_census *after);

/*
 * The mapping holding addr (its smaps entry goes to *v): VmFlags lo, dd
 * and wf, lf when locked on fault, and smaps Locked == Rss == want_kb.
 * Returns whether both held; no such mapping is fatal.
 */
bool smaps_locked(const void *addr, bool onfault, long want_kb, struct smaps_vma *v);

#endif
