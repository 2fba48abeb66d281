/*
 * libsecbuf-sodium.so, preloaded into this program, which is linked
 * against the real libsodium: every rule of libsecbuf-sodium(7), the abort
 * cases in children, and pointers made by the real libsodium handed to it.
 * Run by secbuf-run (make check); without the preload every test fails.
 * This file: the memory and its misuse; sodium-env-tests.c: what the
 * environment switches do, and main.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <sodium.h>
#include <secbuf.h>
#include "sodium-tests.h"

#ifndef MAP_LOCKONFAULT
#define MAP_LOCKONFAULT 0x400000
#endif
#ifndef MADV_WIPEONFORK
#define MADV_WIPEONFORK 18
#endif

static const size_t sizes[] = { 1, 15, 16, 17, 100, 4095, 4096, 4097, 65536, 100000 };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

/* The real libsodium's definition of a call, not the one the program sees. */
static void *real_sodium(const char *name)
{
	void *lib = dlopen("libsodium.so.23", RTLD_NOW | RTLD_NOLOAD);
	void *fn = lib ? dlsym(lib, name) : NULL;

	ck_assert_msg(fn, "libsodium.so.23 is not loaded: %s", dlerror());
	dlclose(lib);
	return fn;
}

static int mapped(const void *p)
{
	unsigned char vec;
	uintptr_t page = (uintptr_t)p & ~(uintptr_t)(sbt_page() - 1);

	return mincore((void *)page, 1, &vec) == 0;
}

/* Whether the lock method in effect locks sodium_malloc() memory. */
static int shim_locks(void)
{
	return sbt_method() == SECBUF_LOCK_MAP_LOCKONFAULT ||
	       sbt_method() == SECBUF_LOCK_MLOCK2_ONFAULT;
}

START_TEST(preload_in_effect)
{
	void *seen = dlsym(RTLD_DEFAULT, "sodium_malloc");

	ck_assert_ptr_nonnull(seen);
	ck_assert_msg(seen != real_sodium("sodium_malloc"),
		      "sodium_malloc is libsodium's: run under secbuf-run");
	ck_assert_msg(dlsym(RTLD_DEFAULT, "secbuf_alloc") != NULL, "harness lacks libsecbuf");
}
END_TEST

/*
 * libsecbuf-sodium(7), BUGS: a lookup through libsodium's own handle, as
 * FFI bindings make it (ctypes, JNA), finds libsodium's sodium_malloc and
 * bypasses the drop-in.  The ways round it that the page gives (the
 * program's global scope, the drop-in's own handle) find ours.  Should the
 * drop-in learn to intercept such lookups, this fails and the page must
 * change.
 */
START_TEST(handle_lookup_bypasses_the_drop_in)
{
	void *ours = dlsym(RTLD_DEFAULT, "sodium_malloc");
	void *sodium = dlopen("libsodium.so.23", RTLD_NOW | RTLD_LOCAL);
	void *dropin = dlopen("libsecbuf-sodium.so", RTLD_NOW | RTLD_NOLOAD);
	void *global = dlopen(NULL, RTLD_NOW);
	void *(*theirs)(size_t);
	unsigned char *p;
	char line[256];

	ck_assert_msg(sodium && dropin && global, "dlopen: %s", dlerror());
	*(void **)&theirs = dlsym(sodium, "sodium_malloc");
	ck_assert_ptr_nonnull(ours);
	ck_assert_msg(*(void **)&theirs != ours, "libsodium's handle finds the drop-in's");
	ck_assert_ptr_eq(dlsym(dropin, "sodium_malloc"), ours);
	ck_assert_ptr_eq(dlsym(global, "sodium_malloc"), ours);
	/* What the bypass hands out: libsodium's memory, filled, not ours. */
	ck_assert_int_ge(sodium_init(), 0);
	p = theirs(100);
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(p[0], 0xdb);
	ck_assert_int_eq(sbt_maps_line(p, line, sizeof(line)), 0);
	ck_assert_msg(!strstr(line, "secbuf"), "libsodium's buffer is in %s", line);
	sodium_free(p);
	dlclose(global);
	dlclose(dropin);
	dlclose(sodium);
}
END_TEST

/* Flush against the guard as libsodium places it: unaligned when the size is. */
START_TEST(last_byte_flush_against_guard)
{
	size_t i;

	sbt_need_method();
	for (i = 0; i < NSIZES; i++) {
		unsigned char *p = sodium_malloc(sizes[i]);

		ck_assert_ptr_nonnull(p);
		ck_assert_msg(((uintptr_t)p + sizes[i]) % sbt_page() == 0,
			      "size %zu: end %p is not at a page boundary", sizes[i],
			      (void *)(p + sizes[i]));
		ck_assert(sbt_exited_ok(sbt_poke(p, 1)));
		ck_assert(sbt_exited_ok(sbt_poke(p + sizes[i] - 1, 1)));
		ck_assert_msg(sbt_signalled(sbt_poke(p + sizes[i], 0), SIGSEGV),
			      "reading one byte past size %zu did not fault", sizes[i]);
		ck_assert_msg(sbt_signalled(sbt_poke(p + sizes[i], 1), SIGSEGV),
			      "writing one byte past size %zu did not fault", sizes[i]);
		sodium_free(p);
	}
}
END_TEST

START_TEST(zero_sizes_are_freeable)
{
	void *p;

	sbt_need_method();
	p = sodium_malloc(0);
	ck_assert_ptr_nonnull(p);
	sodium_free(p);
	sodium_free(sodium_allocarray(0, 0));
	sodium_free(sodium_allocarray(0, 1));
	sodium_free(sodium_allocarray(1, 0));
	p = sodium_allocarray(1000, 50);
	ck_assert_ptr_nonnull(p);
	memset(p, 0x11, 50000);
	sodium_free(p);
}
END_TEST

START_TEST(impossible_sizes_fail_with_enomem)
{
	int lines;

	sbt_need_method();
	sodium_free(sodium_malloc(1));	/* the probe's mappings are made */
	lines = sbt_maps_lines();
	errno = 0;
	ck_assert_ptr_null(sodium_malloc(SIZE_MAX - 1));
	ck_assert_int_eq(errno, ENOMEM);
	errno = 0;
	ck_assert_ptr_null(sodium_allocarray(SIZE_MAX / 2 + 1, SIZE_MAX / 2));
	ck_assert_int_eq(errno, ENOMEM);
	errno = 0;
	ck_assert_ptr_null(sodium_allocarray(3, SIZE_MAX / 3));
	ck_assert_int_eq(errno, ENOMEM);
	ck_assert_int_eq(sbt_maps_lines(), lines);
}
END_TEST

START_TEST(free_null_is_a_noop)
{
	void *volatile none = NULL;	/* libsodium declares the mprotect calls nonnull */

	errno = EILSEQ;
	sodium_free(NULL);
	ck_assert_int_eq(errno, EILSEQ);
	ck_assert_int_eq(sodium_mprotect_readonly(none), -1);
	ck_assert_int_eq(errno, EINVAL);
}
END_TEST

START_TEST(protection_and_free_at_any_protection)
{
	unsigned char *p;

	sbt_need_method();
	p = sodium_malloc(5000);
	ck_assert_ptr_nonnull(p);
	memset(p, 0x42, 5000);
	ck_assert_int_eq(sodium_mprotect_readonly(p), 0);
	ck_assert_int_eq(p[4999], 0x42);
	ck_assert(sbt_signalled(sbt_poke(p, 1), SIGSEGV));
	ck_assert_int_eq(sodium_mprotect_noaccess(p), 0);
	ck_assert(sbt_signalled(sbt_poke(p, 0), SIGSEGV));
	ck_assert_int_eq(sodium_mprotect_readwrite(p), 0);
	p[0] = 1;
	ck_assert_int_eq(sodium_mprotect_readonly(p), 0);
	sodium_free(p);
	ck_assert(!mapped(p));
	p = sodium_malloc(100);
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(sodium_mprotect_noaccess(p), 0);
	sodium_free(p);
	ck_assert(!mapped(p));
}
END_TEST

/* No 0xdb prefill: a 1 MiB buffer costs the pages used, locked on fault. */
START_TEST(zeros_not_0xdb_and_lock_on_fault)
{
	size_t len = 1024 * 1024, i;
	unsigned char *p;
	long rss, locked;
	char flags[160];

	sbt_need_method();
	p = sodium_malloc(len);
	ck_assert_ptr_nonnull(p);
	for (i = 1; i <= 3 * sbt_page(); i++)
		ck_assert_msg(p[len - i] == 0, "byte %zu is %#x", len - i, p[len - i]);
	memset(p + len - 3 * sbt_page(), 0x5a, 3 * sbt_page());
	ck_assert_int_eq(sbt_smaps(p + len - 1, &rss, &locked, flags, sizeof(flags)), 0);
	/* The three pages used, and the canary's (the same for this size). */
	ck_assert_msg(rss <= (long)(4 * sbt_page() / 1024), "Rss %ld kB for 3 pages used", rss);
	if (shim_locks())
		ck_assert_msg(locked == rss && rss > 0, "Locked %ld kB, Rss %ld kB", locked, rss);
	else
		ck_assert_int_eq(locked, 0);
	ck_assert_msg(strstr(flags, " dd ") != NULL, "not MADV_DONTDUMP: %s", flags);
	sodium_free(p);
}
END_TEST

START_TEST(forked_child_sees_zeros)
{
	unsigned char *p;
	pid_t pid;
	int st;

	sbt_need_method();
	p = sodium_malloc(64);
	ck_assert_ptr_nonnull(p);
	memset(p, 0x5a, 64);
	pid = fork();
	if (pid == 0)
		_exit(sbt_differs(p, 64, 0) ? 1 : 0);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(sbt_exited_ok(st), "the child saw the parent's bytes");
	ck_assert(!sbt_differs(p, 64, 0x5a));
	sodium_free(p);
}
END_TEST

/* As many live buffers of random sizes as libsodium's own test makes in turn. */
START_TEST(random_sizes_keep_their_bytes)
{
	enum { LIVE = 64, ROUNDS = 2000 };
	unsigned char *live[LIVE] = { 0 };
	size_t len[LIVE] = { 0 };
	unsigned int i, k;

	sbt_need_method();
	srand(13);
	for (i = 0; i < ROUNDS + LIVE; i++) {
		k = i % LIVE;
		if (live[k]) {
			ck_assert_msg(!sbt_differs(live[k], len[k], (unsigned char)k),
				      "buffer of %zu bytes changed", len[k]);
			sodium_free(live[k]);
			live[k] = NULL;
		}
		if (i >= ROUNDS)
			continue;
		len[k] = 1 + (size_t)rand() % 100000;
		live[k] = sodium_malloc(len[k]);
		ck_assert_ptr_nonnull(live[k]);
		memset(live[k], k, len[k]);
	}
}
END_TEST

enum misuse {
	UNDERFLOW_INTO_CANARY,
	UNDERFLOW_THEN_READONLY,	/* libsodium's own underflow test */
	DOUBLE_FREE,
	FREE_INSIDE_BUFFER,
	FREE_UNMAPPED,
	PROTECT_AFTER_FREE,
	FREE_INHERITED,
};

static void misuse(void *arg)
{
	enum misuse kind = *(enum misuse *)arg;
	unsigned char *p = sodium_malloc(100);
	pid_t pid;
	int st;

	if (!p)
		_exit(3);
	switch (kind) {
	case UNDERFLOW_INTO_CANARY:
		p[-1] ^= 0xff;
		sodium_free(p);
		break;
	case UNDERFLOW_THEN_READONLY:
		memset(p - 8, 0, 8);
		sodium_mprotect_readonly(p);
		sodium_free(p);
		break;
	case DOUBLE_FREE:
		sodium_free(p);
		sodium_free(p);
		break;
	case FREE_INSIDE_BUFFER:
		sodium_free(p + 1);
		break;
	case FREE_UNMAPPED:
		p = mmap(NULL, 4 * sbt_page(), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED || munmap(p, 4 * sbt_page()) < 0)
			_exit(3);
		sodium_free(p + 2 * sbt_page());
		break;
	case PROTECT_AFTER_FREE:
		sodium_free(p);
		sodium_mprotect_readonly(p);
		break;
	case FREE_INHERITED:
		/* The grandchild's status is this child's: it must abort. */
		pid = fork();
		if (pid == 0) {
			sodium_free(p);
			_exit(0);
		}
		waitpid(pid, &st, 0);
		if (WIFSIGNALED(st))
			raise(WTERMSIG(st));
		_exit(4);
	}
	_exit(0);
}

START_TEST(misuse_aborts_with_a_message)
{
	static const struct {
		enum misuse kind;
		const char *says;
	} cases[] = {
		{ UNDERFLOW_INTO_CANARY, "canary" },
		{ UNDERFLOW_THEN_READONLY, "canary" },
		{ DOUBLE_FREE, "double free" },
		{ FREE_INSIDE_BUFFER, "inside the live buffer" },
		{ FREE_UNMAPPED, "nothing is mapped" },
		{ PROTECT_AFTER_FREE, "nothing is mapped" },
		{ FREE_INHERITED, "before fork" },
	};
	char msg[1024], fails[2048] = "";
	size_t i;

	sbt_need_method();
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum misuse kind = cases[i].kind;
		int st = sbt_child(misuse, &kind, msg, sizeof(msg));

		if (!sbt_signalled(st, SIGABRT) || !strstr(msg, cases[i].says))
			sbt_note(fails, sizeof(fails), "case %zu: status %#x, expected \"%s\": %s",
				 i, st, cases[i].says, msg);
	}
	ck_assert_msg(!*fails, "%s", fails);
}
END_TEST

/* Memory from the real libsodium, through the drop-in's calls. */
START_TEST(real_libsodium_pointers_go_to_libsodium)
{
	void *(*real_malloc)(size_t);
	unsigned char *p;

	*(void **)&real_malloc = real_sodium("sodium_malloc");
	ck_assert_int_ge(sodium_init(), 0);
	p = real_malloc(100);
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(p[0], 0xdb);	/* libsodium's fill: it is theirs */
	ck_assert_int_eq(sodium_mprotect_readonly(p), 0);
	ck_assert(sbt_signalled(sbt_poke(p, 1), SIGSEGV));
	ck_assert_int_eq(sodium_mprotect_readwrite(p), 0);
	p[0] = 1;
	sodium_free(p);
	ck_assert_msg(!mapped(p), "libsodium's sodium_free did not unmap %p", (void *)p);
}
END_TEST

/* libsodium's own canary check stops it for its pointers, not ours. */
static void corrupt_real(void *arg)
{
	void *(*real_malloc)(size_t);
	unsigned char *p;

	(void)arg;
	*(void **)&real_malloc = real_sodium("sodium_malloc");
	if (sodium_init() < 0 || !(p = real_malloc(100)))
		_exit(3);
	p[-1] ^= 0xff;
	sodium_free(p);
	_exit(0);
}

START_TEST(real_libsodium_canary_checked_by_libsodium)
{
	char msg[512];
	int st = sbt_child(corrupt_real, NULL, msg, sizeof(msg));

	/* libsodium answers a bad canary with SIGSEGV; the drop-in would abort. */
	ck_assert_msg(sbt_signalled(st, SIGSEGV), "status %#x: %s", st, msg);
	ck_assert_msg(!strstr(msg, "libsecbuf"), "the drop-in, not libsodium, stopped it: %s", msg);
}
END_TEST

const struct sbt_test sodium_memory_tests[] = {
	SBT(preload_in_effect),
	SBT(handle_lookup_bypasses_the_drop_in),
	SBT(last_byte_flush_against_guard),
	SBT(zero_sizes_are_freeable),
	SBT(impossible_sizes_fail_with_enomem),
	SBT(free_null_is_a_noop),
	SBT(protection_and_free_at_any_protection),
	SBT(zeros_not_0xdb_and_lock_on_fault),
	SBT(forked_child_sees_zeros),
	SBT(random_sizes_keep_their_bytes),
	SBT(misuse_aborts_with_a_message),
	SBT(real_libsodium_pointers_go_to_libsodium),
	SBT(real_libsodium_canary_checked_by_libsodium),
	SBT_END,
};
