/*
 * The secret-memory tier (SECBUF_SECRET): buffers and packed secrets in
 * memfd_secret pages, which a read through /proc/PID/mem or
 * process_vm_readv cannot reach, with the usual guard pages around them;
 * a forked child without them; strict errors when the kernel or a
 * seccomp filter refuses the tier, and the fallback under best effort.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
#include <secbuf.h>
#include "kfacts.h"
#include "tests.h"

static const unsigned char marker[16] = "secbuf-secret-1";

/* The 256 KiB block of the slab holding a packed secret. */
static uintptr_t slab_block_of(const void *p)
{
	return (uintptr_t)p & ~(((uintptr_t)256 << 10) - 1);
}

/* The same through process_vm_readv on this process: 0 or the errno. */
static int vm_read_err(const void *p, size_t n)
{
	unsigned char buf[64];
	struct iovec local = { buf, n }, remote = { (void *)p, n };

	if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)n)
		return memcmp(buf, p, n) ? -1 : 0;
	return errno;
}

/* The reader finds the marker in an ordinary buffer: the control of each test. */
static void control_is_readable(void)
{
	unsigned char *c = secbuf_alloc_flags(64, sbt_flags(0));

	ck_assert_ptr_nonnull(c);
	memcpy(c, marker, sizeof(marker));
	ck_assert_int_eq(sbt_mem_read_err(c, sizeof(marker)), 0);
	ck_assert_int_eq(vm_read_err(c, sizeof(marker)), 0);
	secbuf_free(c);
}

START_TEST(secret_buffer_unreadable_through_the_kernel)
{
	struct secbuf_stat st;
	unsigned char *p;
	char line[512];
	int err;

	sbt_need_method();
	sbt_need_secretmem();
	control_is_readable();
	p = secbuf_alloc_flags(100, SECBUF_SECRET);
	ck_assert_ptr_nonnull(p);
	memcpy(p, marker, sizeof(marker));
	ck_assert_int_eq(secbuf_stat(p, &st), 0);
	ck_assert_int_eq(st.lock_method, SECBUF_LOCK_SECRETMEM);
	ck_assert_str_eq(secbuf_lock_method_name(st.lock_method), "secretmem");
	ck_assert_uint_eq(st.flags, SECBUF_SECRET);
	ck_assert_uint_eq(st.resident_pages, 1);
	ck_assert_uint_eq(st.locked_pages, 1);
	err = sbt_mem_read_err(p, sizeof(marker));
	ck_assert_msg(err == EIO, "/proc/self/mem read: %s",
		      err < 0 ? "wrong bytes" : strerror(err));
	err = vm_read_err(p, sizeof(marker));
	ck_assert_msg(err == EFAULT, "process_vm_readv: %s",
		      err < 0 ? "wrong bytes" : strerror(err));
	ck_assert_int_eq(sbt_maps_line(p, line, sizeof(line)), 0);
	ck_assert_msg(strstr(line, "/secretmem"), "the data's mapping: %s", line);
	/* Guard pages on both sides, as for any buffer. */
	ck_assert(sbt_signalled(sbt_poke(p + 100, 0), SIGSEGV));
	ck_assert(sbt_signalled(sbt_poke(sbt_data_start(p) - 1, 0), SIGSEGV));
	secbuf_free(p);
}
END_TEST

/* Worst-case size, cost of what is used: pages appear when first touched. */
START_TEST(secret_buffer_is_lazy)
{
	struct secbuf_stat st;
	unsigned char *p;

	sbt_need_method();
	sbt_need_secretmem();
	p = secbuf_alloc_flags(MiB, SECBUF_SECRET);
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(secbuf_stat(p, &st), 0);
	ck_assert_uint_eq(st.resident_pages, 1); /* the canary's */
	p[0] = 1;
	p[MiB - 1] = 1;
	ck_assert_int_eq(secbuf_stat(p, &st), 0);
	ck_assert_uint_eq(st.resident_pages, 3);
	secbuf_free(p);
	p = secbuf_alloc_flags(3 * sbt_page(), SECBUF_SECRET | SECBUF_POPULATE);
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(secbuf_stat(p, &st), 0);
	ck_assert_uint_eq(st.resident_pages, 4); /* the canary's page too */
	secbuf_free(p);
}
END_TEST

START_TEST(secret_packed_share_pages_out_of_reach)
{
	enum { N = 1000 };
	static unsigned char *s[N];
	struct secbuf_stat st;
	size_t i, pages = 0;
	int err;

	sbt_need_method();
	sbt_need_secretmem();
	for (i = 0; i < N; i++) {
		s[i] = secbuf_alloc_flags(32, SECBUF_PACKED | SECBUF_SECRET);
		ck_assert_ptr_nonnull(s[i]);
		memcpy(s[i], marker, sizeof(marker));
	}
	ck_assert_int_eq(secbuf_stat(s[0], &st), 0);
	ck_assert_int_eq(st.lock_method, SECBUF_LOCK_SECRETMEM);
	ck_assert_uint_eq(st.flags, SECBUF_PACKED | SECBUF_SECRET);
	ck_assert_uint_eq(secbuf_size(s[0]), 32);
	err = sbt_mem_read_err(s[N / 2], sizeof(marker));
	ck_assert_msg(err == EIO, "/proc/self/mem read: %s",
		      err < 0 ? "wrong bytes" : strerror(err));
	/* Many to a page: a thousand 32-byte secrets in a few dozen pages. */
	for (i = 0; i < N; i++)
		if (i == 0 || ((uintptr_t)s[i] ^ (uintptr_t)s[i - 1]) >= sbt_page())
			pages++;
	ck_assert_msg(pages * 64 <= N * 3, "%zu page changes for %d secrets", pages, N);
	/* Secret and locked slabs are never mixed. */
	{
		unsigned char *l = secbuf_alloc_flags(32, packed_flags());

		ck_assert_ptr_nonnull(l);
		ck_assert_int_eq(secbuf_stat(l, &st), 0);
		ck_assert_int_ne(st.lock_method, SECBUF_LOCK_SECRETMEM);
		ck_assert_int_eq(sbt_mem_read_err(l, 16), 0);
		secbuf_free(l);
	}
	for (i = 0; i < N; i++)
		secbuf_free(s[i]);
}
END_TEST

/* In a forked child: fresh secrets of its own, from slabs of its own. Exit code = failed step. */
static void child_allocates(void *arg)
{
	unsigned char *q = arg, *mine[2];
	struct secbuf_stat st;

	mine[0] = secbuf_alloc_flags(32, SECBUF_SECRET | SECBUF_PACKED);
	mine[1] = secbuf_alloc_flags(100, SECBUF_SECRET);
	if (!mine[0] || !mine[1])
		_exit(2);
	if (slab_block_of(mine[0]) == slab_block_of(q))
		_exit(3);
	memcpy(mine[0], marker, sizeof(marker));
	memcpy(mine[1], marker, sizeof(marker));
	if (secbuf_stat(mine[0], &st) < 0 || st.lock_method != SECBUF_LOCK_SECRETMEM)
		_exit(4);
	secbuf_free(mine[0]);
	secbuf_free(mine[1]);
	_exit(0);
}

/* A child does not get the secret pages: the read faults. */
START_TEST(secret_not_in_forked_child)
{
	unsigned char *p, *q;
	char msg[256];
	int st;

	sbt_need_method();
	sbt_need_secretmem();
	p = secbuf_alloc_flags(100, SECBUF_SECRET);
	q = secbuf_alloc_flags(32, SECBUF_SECRET | SECBUF_PACKED);
	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_nonnull(q);
	memcpy(p, marker, sizeof(marker));
	memcpy(q, marker, sizeof(marker));
	ck_assert(sbt_signalled(sbt_poke(p, 0), SIGSEGV));
	ck_assert(sbt_signalled(sbt_poke(q, 0), SIGSEGV));
	ck_assert_int_eq(memcmp(p, marker, sizeof(marker)), 0);
	st = sbt_child(child_allocates, q, msg, sizeof(msg));
	ck_assert_msg(sbt_exited_ok(st),
		      "a child's own secrets: status %#x (exit %d = failed step) %s", st,
		      WIFEXITED(st) ? WEXITSTATUS(st) : -1, msg);
	secbuf_free(q);
	secbuf_free(p);
}
END_TEST

struct refusal {
	int err;
	int packed;
};

/*
 * Exit code = failed step.  memfd_secret answered err by a seccomp filter:
 * a strict allocation fails with err and maps nothing; a best-effort one
 * gets what the same flags without SECBUF_SECRET get.
 */
static void refused_child(void *arg)
{
	const struct refusal *r = arg;
	const struct sbt_deny deny = { SYS_memfd_secret, -1, 0, 0, r->err };
	unsigned packed = r->packed ? SECBUF_PACKED : 0;
	size_t size = r->packed ? 32 : 3 * 4096;
	struct secbuf_stat st, want;
	void *p, *w = secbuf_alloc_flags(size, sbt_flags(packed)); /* warm-up and the control */
	int lines;

	if (!w || secbuf_stat(w, &want) < 0 || sbt_deny_syscalls(&deny, 1) < 0)
		_exit(10);
	lines = sbt_maps_lines();
	errno = 0;
	if (secbuf_alloc_flags(size, SECBUF_SECRET | packed))
		_exit(11);
	if (errno != r->err)
		_exit(12);
	if (sbt_maps_lines() != lines)
		_exit(13);
	p = secbuf_alloc_flags(size, sbt_flags(packed) | SECBUF_SECRET | SECBUF_BEST_EFFORT);
	if (!p || secbuf_stat(p, &st) < 0)
		_exit(14);
	if (st.lock_method != want.lock_method && st.lock_method != SECBUF_LOCK_NONE)
		_exit(15);
	secbuf_free(p);
	secbuf_free(w);
	_exit(0);
}

START_TEST(secret_refused_is_an_error)
{
	static const int errs[] = { ENOSYS, EPERM };
	char fails[1024] = "";
	size_t i;
	int packed;

	sbt_need_method();
	sbt_need_no_valgrind("seccomp filters would also act on valgrind itself");
	for (i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		for (packed = 0; packed <= 1; packed++) {
			struct refusal r = { errs[i], packed };
			char msg[512];
			int st = sbt_child(refused_child, &r, msg, sizeof(msg));

			if (!sbt_exited_ok(st))
				sbt_note(fails, sizeof(fails), "%s%s: status %#x (exit %d) %s",
					 strerrorname_np(errs[i]), packed ? " (packed)" : "", st,
					 WIFEXITED(st) ? WEXITSTATUS(st) : -1, msg);
		}
	}
	ck_assert_msg(!fails[0], "%s", fails);
}
END_TEST

/*
 * Whether this kernel charges memfd_secret memory to RLIMIT_MEMLOCK: it
 * does where its mappings are VM_LOCKED ("lo" in VmFlags), as 6.18's are;
 * Debian's 6.1 and 6.12 keep the pages unevictable without VM_LOCKED and
 * charge nothing.
 */
static int secret_memory_charged(void)
{
	void *p = secretmem_map(sbt_page());
	char flags[160] = "";
	long rss, locked;

	ck_assert_ptr_ne(p, MAP_FAILED);
	ck_assert_int_eq(sbt_smaps(p, &rss, &locked, flags, sizeof(flags)), 0);
	munmap(p, sbt_page());
	return strstr(flags, " lo ") != NULL;
}

/* 64 KiB, or 3 pages where that is more (a buffer's page, the key's, one spare). */
static size_t small_memlock(void)
{
	return 3 * sbt_page() > 64 * 1024 ? 3 * sbt_page() : 64 * 1024;
}

static void nobody_small_memlock(void)
{
	struct rlimit small = { small_memlock(), small_memlock() };

	if (setrlimit(RLIMIT_MEMLOCK, &small) < 0 || setgid(65534) < 0 || setuid(65534) < 0)
		_exit(124);
}

/*
 * Runs as "secbuf-tests --secret-memlock" as nobody with RLIMIT_MEMLOCK
 * small_memlock(): secret memory is charged to it whole at mmap time, so
 * a larger buffer or a packed slab (256 KiB) is EAGAIN with nothing
 * mapped, and a small buffer fits.
 */
int secret_memlock_main(void)
{
	/* Warm-up: the thread's bins and the slab map are made once, and stay. */
	void *p = secbuf_alloc_flags(32, SECBUF_PACKED | SECBUF_BEST_EFFORT);
	struct secbuf_stat st;
	int lines;

	secbuf_free(p);
	lines = sbt_maps_lines();
	if (!p)
		return 2;
	errno = 0;
	if (secbuf_alloc_flags(MiB, SECBUF_SECRET) || errno != EAGAIN) {
		fprintf(stderr, "1 MiB secret buffer: %s\n", errno ? strerror(errno) : "made");
		return 3;
	}
	errno = 0;
	if (secbuf_alloc_flags(32, SECBUF_SECRET | SECBUF_PACKED) || errno != EAGAIN) {
		fprintf(stderr, "packed secret: %s\n", errno ? strerror(errno) : "made");
		return 4;
	}
	if (sbt_maps_lines() != lines)
		return 5;
	p = secbuf_alloc_flags(4096, SECBUF_SECRET);
	if (!p || secbuf_stat(p, &st) < 0 || st.lock_method != SECBUF_LOCK_SECRETMEM)
		return 6;
	secbuf_free(p);
	return 0;
}

START_TEST(secret_over_memlock_is_eagain)
{
	const struct sbt_self se = { .mode = "--secret-memlock",
				     .before_exec = nobody_small_memlock };
	char msg[512];
	int st;

	sbt_need_method();
	sbt_need_secretmem();
	sbt_need_root();
	if (!secret_memory_charged())
		sbt_skip(
			"this kernel does not charge memfd_secret to RLIMIT_MEMLOCK (no VM_LOCKED)");
	st = sbt_run_self(&se, msg, sizeof(msg));
	ck_assert_msg(sbt_exited_ok(st), "status %#x (exit %d = failed step) %s", st,
		      WIFEXITED(st) ? WEXITSTATUS(st) : -1, msg);
}
END_TEST

START_TEST(secret_unknown_flag_is_einval)
{
	int lines = sbt_maps_lines();

	errno = 0;
	ck_assert_ptr_null(secbuf_alloc_flags(32, SECBUF_SECRET | 0x10u));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(sbt_maps_lines(), lines);
}
END_TEST

/*
 * The library counts the process's own secret bytes and refuses a mapping
 * that would take them past RLIMIT_MEMLOCK (EAGAIN), whatever the kernel:
 * Debian's 6.1 and 6.12 charge at each page's first touch, sparing nobody,
 * and answer the write past the limit with SIGBUS.  Root (CAP_IPC_LOCK),
 * whom a kernel that charges at mmap time spares, under a 64 KiB limit:
 * 32 KiB fit, 48 KiB more do not, until the 32 KiB are freed.
 */
static void secret_room(void *arg)
{
	struct rlimit rl = { 64 * 1024, 64 * 1024 };
	void *p, *q;

	(void)arg;
	if (setrlimit(RLIMIT_MEMLOCK, &rl) < 0)
		_exit(2);
	p = secbuf_alloc_flags(32 * 1024, SECBUF_SECRET);
	if (!p)
		_exit(3);
	memset(p, 1, 32 * 1024);
	errno = 0;
	q = secbuf_alloc_flags(48 * 1024, SECBUF_SECRET);
	if (q || errno != EAGAIN) {
		fprintf(stderr, "48 KiB more secret memory: %s\n", q ? "made" : strerror(errno));
		_exit(4);
	}
	secbuf_free(p);
	q = secbuf_alloc_flags(48 * 1024, SECBUF_SECRET);
	if (!q)
		_exit(5);
	memset(q, 1, 48 * 1024); /* every page touched: no SIGBUS */
	secbuf_free(q);
	_exit(0);
}

START_TEST(secret_past_memlock_is_refused_before_any_touch)
{
	char msg[512];
	int st;

	sbt_need_method(); /* a forced method the kernel lacks fails every call */
	sbt_need_secretmem();
	sbt_need_root();
	st = sbt_child(secret_room, NULL, msg, sizeof(msg));
	ck_assert_msg(sbt_exited_ok(st), "status %#x (exit %d = failed step): %s", st,
		      WIFEXITED(st) ? WEXITSTATUS(st) : -1, msg);
}
END_TEST

const struct sbt_test secret_tests[] = {
	SBT(secret_buffer_unreadable_through_the_kernel),
	SBT(secret_buffer_is_lazy),
	SBT(secret_packed_share_pages_out_of_reach),
	SBT(secret_not_in_forked_child),
	SBT(secret_refused_is_an_error),
	SBT(secret_over_memlock_is_eagain),
	SBT(secret_past_memlock_is_refused_before_any_touch),
	SBT(secret_unknown_flag_is_einval),
	SBT_END,
};
