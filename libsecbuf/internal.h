/* Internal interfaces of libsecbuf: one section per source file. */
#ifndef SECBUF_INTERNAL_H
#define SECBUF_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include "secbuf.h"

#define SB_HIDDEN __attribute__((visibility("hidden")))
#define SB_API __attribute__((visibility("default")))
#define SB_CANARY_SIZE 16	/* also the pointer alignment */

/* probe.c: kernel capabilities and SECBUF_LOCK, probed once per process. */
struct sb_caps {
	int method;		/* process method, or -1 (errno in err) */
	int err;
	int lazy_err;		/* why a lazy buffer cannot be locked under method */
	int map_lockonfault;	/* 0 if proven, else the errno that stopped the proof */
	int mlock2_onfault;	/* likewise */
	size_t page;
	uint64_t secret[2];	/* per-process key for canaries and metadata */
};
SB_HIDDEN const struct sb_caps *sb_caps(void);

/* siphash.c: SipHash-2-4, by bytes or by little-endian words. */
struct sb_siphash {
	uint64_t v[4];
	uint64_t len;
};
SB_HIDDEN uint64_t sb_siphash24(const uint64_t key[2], const void *msg, size_t len);
SB_HIDDEN void sb_siphash_init(struct sb_siphash *s, const uint64_t key[2]);
SB_HIDDEN void sb_siphash_word(struct sb_siphash *s, uint64_t m);
SB_HIDDEN uint64_t sb_siphash_final(struct sb_siphash *s);

/* region.c: [guard][data][guard] mappings. */
struct sb_region {
	unsigned char *base;	/* leading guard page */
	size_t map_len;		/* guards included */
	unsigned char *data;
	size_t data_len;
	int method;		/* SECBUF_LOCK_* actually in effect */
};
SB_HIDDEN int sb_region_map(struct sb_region *r, size_t data_len, unsigned flags);
SB_HIDDEN int sb_region_protect(const struct sb_region *r, int prot);
SB_HIDDEN void sb_region_unmap(const struct sb_region *r);

/* resident.c: walk the resident pages of a range (mincore). */
typedef void (*sb_page_fn)(void *page, size_t len);
SB_HIDDEN int sb_resident_walk(unsigned char *start, size_t len, sb_page_fn fn,
			       size_t *count);

/* wipe.c */
SB_HIDDEN void sb_wipe(void *p, size_t len);
SB_HIDDEN int sb_wipe_resident(unsigned char *start, size_t len);

/* meta.c: metadata, canaries, registry of live buffers. */
struct sb_meta {
	unsigned char *user;
	size_t size;
	unsigned flags;
	struct sb_region region;
	uint64_t mac;		/* keyed over all fields above */
};
SB_HIDDEN void sb_canary_fill(const struct sb_meta *m);
SB_HIDDEN void sb_canary_check(const struct sb_meta *m, const char *fn);
SB_HIDDEN int sb_registry_add(struct sb_meta *m);
SB_HIDDEN void sb_registry_get(const void *user, struct sb_meta *out, const char *fn);
SB_HIDDEN void sb_registry_take(const void *user, struct sb_meta *out, const char *fn);

/* misuse.c: the single abort path. */
SB_HIDDEN __attribute__((noreturn, format(printf, 1, 2)))
void sb_misuse(const char *fmt, ...);

#endif
