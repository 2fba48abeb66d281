/*
 * Attacks on the library's own metadata, as a red team with an arbitrary
 * write would make them: this binary links libsecbuf's objects directly,
 * so that it can reach the slab map and lay out a forged record exactly.
 * Each attack must end in an abort that says what was forged, where
 * before the checks a forged slab made secbuf_free() accept a foreign
 * pointer (and the next strict secret come from unlocked memory), and a
 * forged pin made secbuf_free() wait for ever.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "packed/slab.h"
#include "tests.h"

/* SECBUF_PACKED with what makes it succeed under the method in effect. */
static unsigned packed(void)
{
	return sbt_flags(SECBUF_PACKED | (sbt_method() == SECBUF_LOCK_MLOCK ? SECBUF_POPULATE : 0));
}

/* A copy of p's slab record, claiming an aligned block of the attacker's. */
static void forge_slab(void *arg)
{
	unsigned char *p = secbuf_alloc_flags(32, packed()), *raw, *block;
	const struct sb_slab *real = p ? sb_slab_of(p) : NULL;
	struct sb_slab *fake = aligned_alloc(64, sizeof(*fake));
	uint64_t g[2];
	void *victim, *next;

	(void)arg;
	raw = mmap(NULL, 2 * SB_SLAB_BLOCK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		   0);
	if (!real || !fake || raw == MAP_FAILED)
		_exit(2);
	block = (unsigned char *)(((uintptr_t)raw + SB_SLAB_BLOCK - 1) & ~(SB_SLAB_BLOCK - 1));
	memcpy(fake, real, sizeof(*fake));
	fake->block = (uintptr_t)block;
	fake->region.base = block;
	fake->region.data = block + sbt_page();
	fake->region.method = real->region.method;
	memset(fake->live, 0, sizeof(fake->live));
	fake->live[0].bits = 1;
	fake->info[0] = 32;
	/* The guard bytes a real slab with these keys would have. */
	sb_slab_guard(fake, 0, g);
	memcpy(fake->region.data, g, SB_GUARD);
	sb_slab_guard(fake, 1, g);
	memcpy(fake->region.data + fake->stride, g, SB_GUARD);
	if (sb_slabmap_set(fake->block, fake) < 0)
		_exit(3);
	victim = fake->region.data + SB_GUARD;
	secbuf_free(victim);
	next = secbuf_alloc_flags(32, packed());
	fprintf(stderr, "secbuf_free() took the forged secret %p; the next secret %p%s\n", victim,
		next, next == victim ? " is the attacker's memory" : "");
	_exit(0);
}

START_TEST(forged_slab_record_aborts)
{
	char msg[512];
	int st;

	sbt_need_method();
	st = sbt_child(forge_slab, NULL, msg, sizeof(msg));
	msg[strcspn(msg, "\n")] = 0;
	printf("# REPORT: %s\n", msg);
	ck_assert_msg(sbt_signalled(st, SIGABRT) && strstr(msg, "corrupted (or forged)"),
		      "status %#x: %s", st, msg);
}
END_TEST

/* The registry's entry of user: its first words are the pointer and the size. */
static unsigned char *find_entry(const void *user, size_t size)
{
	unsigned long lo, hi;
	char line[512];
	FILE *maps = fopen("/proc/self/maps", "r");
	unsigned char *at = NULL;

	while (maps && !at && fgets(line, sizeof(line), maps)) {
		if (!strstr(line, "[heap]") || sscanf(line, "%lx-%lx", &lo, &hi) != 2)
			continue;
		for (uintptr_t a = lo; a + 2 * sizeof(uint64_t) <= hi; a += sizeof(uint64_t)) {
			const uint64_t *w = (const uint64_t *)a;

			if (w[0] == (uintptr_t)user && w[1] == size)
				at = (unsigned char *)a;
		}
	}
	if (maps)
		fclose(maps);
	return at;
}

/* A heap write of pins = 1 into p's registry entry, then a free. */
static void forge_pin(void *arg)
{
	void *p = secbuf_alloc_flags(1000, sbt_flags(0));
	unsigned char *entry = p ? find_entry(p, 1000) : NULL;

	(void)arg;
	if (!entry)
		_exit(2);
	/* struct slot: the buffer's metadata, then the pin count. */
	*(unsigned int *)(entry + sizeof(struct sb_meta)) = 1;
	alarm(10); /* a free that waits for the forged pin ends as SIGALRM */
	secbuf_free(p);
	fprintf(stderr, "secbuf_free() returned\n");
	_exit(0);
}

START_TEST(forged_pin_aborts)
{
	char msg[512];
	int st;

	sbt_need_method();
	if (sbt_under_asan())
		sbt_skip("ASan's allocator keeps the registry off the [heap] mapping");
	sbt_need_no_valgrind("valgrind's allocator keeps the registry off the [heap] mapping");
	st = sbt_child(forge_pin, NULL, msg, sizeof(msg));
	msg[strcspn(msg, "\n")] = 0;
	printf("# REPORT: %s\n", msg);
	ck_assert_msg(sbt_signalled(st, SIGABRT) && strstr(msg, "metadata is corrupted"),
		      "status %#x: %s", st, msg);
}
END_TEST

static const struct sbt_test whitebox_tests[] = {
	SBT(forged_slab_record_aborts),
	SBT(forged_pin_aborts),
	SBT_END,
};

int main(int argc, char **argv)
{
	static const struct sbt_test *const groups[] = { whitebox_tests, NULL };
	static const struct sbt_mode modes[] = { { NULL, NULL } };

	return sbt_main(argc, argv, "libsecbuf-whitebox", groups, modes);
}
