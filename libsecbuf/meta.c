/*
 * Metadata and canaries.  The metadata of every live buffer sits in a
 * registry outside the buffers, keyed by the user pointer, so a pointer the
 * library did not hand out (or already took back) is recognised.  Each entry
 * carries a MAC keyed with the per-process secret, so stray writes into the
 * heap cannot forge a size or a base; the canaries are keyed the same way.
 * The keyed mix stops accidents, not an attacker who can read the secret.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v;
	h *= 0x9e3779b97f4a7c15ull;
	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 29);
}

static uint64_t meta_mac(const struct sb_meta *m)
{
	const uint64_t *key = sb_caps()->secret;
	uint64_t h = key[0];

	h = mix(h, (uintptr_t)m->user);
	h = mix(h, m->size);
	h = mix(h, m->flags);
	h = mix(h, (uintptr_t)m->region.base);
	h = mix(h, m->region.map_len);
	h = mix(h, (uintptr_t)m->region.data);
	h = mix(h, m->region.data_len);
	h = mix(h, (uint64_t)m->region.method);
	return mix(h, key[1]);
}

/* 16 canary bytes in front of the pointer, then the tail padding pattern. */
static void canary_bytes(const struct sb_meta *m, unsigned char out[SB_CANARY_SIZE])
{
	const uint64_t *key = sb_caps()->secret;
	uint64_t w[2] = {
		mix(key[0], (uintptr_t)m->user),
		mix(key[1], ~(uintptr_t)m->user),
	};

	memcpy(out, w, SB_CANARY_SIZE);
}

static size_t tail_len(const struct sb_meta *m)
{
	return m->region.data + m->region.data_len - (m->user + m->size);
}

void sb_canary_fill(const struct sb_meta *m)
{
	unsigned char c[SB_CANARY_SIZE];
	unsigned char *tail = m->user + m->size;
	size_t i;

	canary_bytes(m, c);
	memcpy(m->user - SB_CANARY_SIZE, c, SB_CANARY_SIZE);
	for (i = 0; i < tail_len(m); i++)
		tail[i] = c[i % SB_CANARY_SIZE];
	sb_wipe(c, sizeof(c));
}

void sb_canary_check(const struct sb_meta *m, const char *fn)
{
	unsigned char c[SB_CANARY_SIZE];
	const unsigned char *tail = m->user + m->size;
	size_t i;

	canary_bytes(m, c);
	if (memcmp(m->user - SB_CANARY_SIZE, c, SB_CANARY_SIZE) != 0)
		sb_misuse("%s(%p): canary in front of the buffer is corrupted "
			  "(buffer underflow)", fn, (void *)m->user);
	for (i = 0; i < tail_len(m); i++)
		if (tail[i] != c[i % SB_CANARY_SIZE])
			sb_misuse("%s(%p): padding after byte %zu is corrupted "
				  "(buffer overflow)", fn, (void *)m->user, m->size);
	sb_wipe(c, sizeof(c));
}

/* Open addressing, linear probing; TOMB marks a removed entry. */
#define TOMB ((unsigned char *)1)

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sb_meta *reg_tab;
static size_t reg_cap, reg_live, reg_used;	/* used: live and tomb slots */

static size_t slot_of(const void *user, size_t cap)
{
	return mix(sb_caps()->secret[0], (uintptr_t)user) & (cap - 1);
}

static struct sb_meta *find(const void *user)
{
	size_t i, n;

	if (!reg_cap)
		return NULL;
	for (i = slot_of(user, reg_cap), n = 0; n < reg_cap; i = (i + 1) & (reg_cap - 1), n++) {
		if (!reg_tab[i].user)
			return NULL;
		if (reg_tab[i].user == user)
			return &reg_tab[i];
	}
	return NULL;
}

/* Returns 1 if an empty (not a tomb) slot was used. */
static int put(struct sb_meta *tab, size_t cap, const struct sb_meta *m)
{
	size_t i = slot_of(m->user, cap);
	int fresh;

	while (tab[i].user && tab[i].user != TOMB)
		i = (i + 1) & (cap - 1);
	fresh = !tab[i].user;
	tab[i] = *m;
	return fresh;
}

/*
 * Keep live and tomb slots at most half the table.  Rehashing drops the
 * tombs, so churn does not grow the table: only the number of live buffers.
 */
static int make_room(void)
{
	size_t cap = reg_cap ? reg_cap : 64, i;
	struct sb_meta *tab;

	if (reg_cap && (reg_used + 1) * 2 <= reg_cap)
		return 0;
	while ((reg_live + 1) * 4 > cap)
		cap *= 2;
	tab = calloc(cap, sizeof(*tab));
	if (!tab)
		return -1;
	for (i = 0; i < reg_cap; i++)
		if (reg_tab[i].user && reg_tab[i].user != TOMB)
			put(tab, cap, &reg_tab[i]);
	if (reg_tab)
		sb_wipe(reg_tab, reg_cap * sizeof(*reg_tab));
	free(reg_tab);
	reg_tab = tab;
	reg_cap = cap;
	reg_used = reg_live;
	return 0;
}

int sb_registry_add(struct sb_meta *m)
{
	int ret = 0;

	m->mac = meta_mac(m);
	pthread_mutex_lock(&reg_lock);
	if (make_room() < 0) {
		errno = ENOMEM;
		ret = -1;
	} else {
		reg_used += put(reg_tab, reg_cap, m);
		reg_live++;
	}
	pthread_mutex_unlock(&reg_lock);
	return ret;
}

/* The live buffer whose mapping holds p, for a sharper abort message. */
static const unsigned char *holder_of(const void *p)
{
	const unsigned char *c = p;
	size_t i;

	for (i = 0; i < reg_cap; i++) {
		const struct sb_region *r = &reg_tab[i].region;

		if (reg_tab[i].user && reg_tab[i].user != TOMB &&
		    c >= r->base && c < r->base + r->map_len)
			return reg_tab[i].user;
	}
	return NULL;
}

static void lookup(const void *user, struct sb_meta *out, const char *fn, int take)
{
	const unsigned char *holder = NULL;
	struct sb_meta *e;

	pthread_mutex_lock(&reg_lock);
	e = find(user);
	if (e) {
		*out = *e;
		if (take) {
			memset(e, 0, sizeof(*e));
			e->user = TOMB;
			reg_live--;
		}
	} else {
		holder = holder_of(user);
	}
	pthread_mutex_unlock(&reg_lock);
	if (holder)
		sb_misuse("%s(%p): foreign pointer: it points inside the live "
			  "buffer %p, not at its start", fn, user, (const void *)holder);
	if (!e)
		sb_misuse("%s(%p): not a live secbuf buffer (foreign pointer or "
			  "double free)", fn, user);
	if (out->mac != meta_mac(out))
		sb_misuse("%s(%p): buffer metadata is corrupted", fn, user);
}

void sb_registry_get(const void *user, struct sb_meta *out, const char *fn)
{
	lookup(user, out, fn, 0);
}

void sb_registry_take(const void *user, struct sb_meta *out, const char *fn)
{
	lookup(user, out, fn, 1);
}
