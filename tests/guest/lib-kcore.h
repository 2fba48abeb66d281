/*
 * Counting byte strings in the guest's RAM as the kernel's direct map
 * shows it (/proc/kcore), without the scanner making a copy: needles are
 * kept XORed with KCORE_MASK, and each window of RAM is masked while it is
 * searched and unmasked after, so the scanner's own pages (which it reads
 * too) never hold a needle in clear, nor the image of a masked one.
 */
#ifndef PROOF_LIB_KCORE_H
#define PROOF_LIB_KCORE_H

#include <stddef.h>

#define KCORE_MASK	  0xa5
#define KCORE_MAX_NEEDLES 8

/* n needles of len bytes each, every byte XORed with KCORE_MASK. */
struct kcore_needles {
	unsigned char masked[KCORE_MAX_NEEDLES][64];
	size_t len, n;
	size_t count[KCORE_MAX_NEEDLES];		  /* filled by kcore_scan() */
	unsigned long long first_phys[KCORE_MAX_NEEDLES]; /* of the first hit, or 0 */
	unsigned long long first_off[KCORE_MAX_NEEDLES];  /* its offset in /proc/kcore */
	size_t scanned_mib;
};

/*
 * Count every needle in the direct map's RAM segments of /proc/kcore
 * (root, CONFIG_PROC_KCORE).  Pages the direct map does not hold, such as
 * memfd_secret's, read as zeros.  0, or -1 with errno.
 */
int kcore_scan(struct kcore_needles *nd);

/*
 * Whether the kernel zeroes pages as it frees them (init_on_free, or
 * CONFIG_INIT_ON_FREE_DEFAULT_ON), from the "mem auto-init:" line it logs
 * at boot: 1 or 0, or -1 with errno when the log does not say.  Then no
 * freed unwiped page is left for a scan to find.
 */
int kcore_freed_pages_zeroed(void);

#endif
