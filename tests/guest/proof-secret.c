// SPDX-License-Identifier: MIT
/*
 * proof-secret: the secret tier (SECBUF_SECRET) against a root reader.
 *
 * A target process holds four secrets, each a random marker written by
 * getrandom() straight into its memory: a SECBUF_SECRET buffer, a packed
 * SECBUF_SECRET secret, and the negative controls, a lock-on-fault buffer
 * and a packed lock-on-fault secret.  It hands the reader (this process,
 * root) their addresses and the markers XORed with a mask, never in
 * clear.  The reader then tries, on each:
 *   - pread(2) of /proc/PID/mem: fails on secret memory, finds the controls;
 *   - process_vm_readv(2): the same;
 *   - /proc/kcore, all RAM the kernel's direct map holds: no hit of a
 *     secret marker, at least one of each control's.
 * Then the target frees everything and exits: no secret marker is left in
 * RAM (kcore), where a malloc buffer it marked then and freed unwiped
 * still is (the control).  Last, a child forked from a process holding a
 * secret cannot read it (it faults), where it reads its parent's malloc
 * memory (the control).
 *
 * proof-secret --disabled: on a 6.1 kernel booted without
 * secretmem.enable=1, SECBUF_SECRET fails with ENOSYS and maps nothing,
 * SECBUF_BEST_EFFORT falls back to the lock method, which still works.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
#include "lib-kcore.h"
#include "lib-mark.h"
#include "kfacts.h"
#include "tap.h"
#include "secbuf.h"

enum { T_SECRET, T_SECRET_PACKED, T_LOCKED, T_LOCKED_PACKED, T_MALLOC, T_COUNT };
static const char *const what[T_COUNT] = { "secret buffer", "packed secret", "lock-on-fault buffer",
					   "packed lock-on-fault", "malloc (freed unwiped)" };

static int is_secret(int i)
{
	return i == T_SECRET || i == T_SECRET_PACKED;
}

/* The unwiped control: above malloc's mmap threshold, one marker per page. */
#define CONTROL_LEN (1 << 20)

struct handover {
	uintptr_t at[T_COUNT];
	unsigned char masked[T_COUNT][MARK_LEN];
};

/* The flags that lock a buffer on fault under the process's method. */
static unsigned lock_flags(void)
{
	return secbuf_lock_method() == SECBUF_LOCK_MLOCK ? SECBUF_POPULATE : 0;
}

/*
 * The target: allocate and mark, hand over, then wait for the word to
 * free and exit.  Exit code = failed step.
 */
/* Mask the marker at p into out, a byte at a time: no whole marker in a register. */
static void mask_marker(const unsigned char *p, unsigned char *out)
{
	const volatile unsigned char *clear = p;

	for (int b = 0; b < MARK_LEN; b++)
		out[b] = clear[b] ^ KCORE_MASK;
}

static void __attribute__((noreturn)) target(int out, int in)
{
	unsigned char *m[T_COUNT];
	struct handover h;
	char go;

	m[T_SECRET] = secbuf_alloc_flags(4096, SECBUF_SECRET);
	m[T_SECRET_PACKED] = secbuf_alloc_flags(MARK_LEN, SECBUF_SECRET | SECBUF_PACKED);
	m[T_LOCKED] = secbuf_alloc_flags(4096, lock_flags());
	m[T_LOCKED_PACKED] = secbuf_alloc_flags(MARK_LEN, lock_flags() | SECBUF_PACKED);
	m[T_MALLOC] = malloc(CONTROL_LEN); /* its own mapping: freed to the kernel at once */
	memset(&h, 0, sizeof(h));
	for (int i = 0; i < T_MALLOC; i++) {
		if (!m[i] || mark_fill(m[i]) < 0)
			_exit(10 + i);
		h.at[i] = (uintptr_t)m[i];
		mask_marker(m[i], h.masked[i]);
	}
	if (!m[T_MALLOC] || write(out, &h, sizeof(h)) != sizeof(h))
		_exit(2);
	if (read(in, &go, 1) != 1)
		_exit(3);
	/*
	 * The control of the last scan, marked only now: the reader's scans
	 * of the live target (whose bounce buffers leave copies of what they
	 * read in kernel memory) never saw it.
	 */
	if (mark_fill(m[T_MALLOC]) < 0)
		_exit(15);
	/*
	 * One marker in every page: a single freed page is often taken
	 * again and overwritten before the scan reaches it.
	 */
	for (size_t off = 4096; off < CONTROL_LEN; off += 4096)
		memcpy(m[T_MALLOC] + off, m[T_MALLOC], MARK_LEN);
	mask_marker(m[T_MALLOC], h.masked[T_MALLOC]);
	if (write(out, h.masked[T_MALLOC], MARK_LEN) != MARK_LEN)
		_exit(4);
	for (int i = 0; i < T_MALLOC; i++)
		secbuf_free(m[i]);
	free(m[T_MALLOC]);
	_exit(0);
}

static void mask_in_place(unsigned char *p)
{
	for (int b = 0; b < MARK_LEN; b++)
		p[b] ^= KCORE_MASK;
}

/* pread of /proc/PID/mem at at: 1 if it returned the marker, 0 if it failed. */
static int mem_finds(pid_t pid, uintptr_t at, const unsigned char *masked, int *err)
{
	unsigned char got[MARK_LEN];
	char path[64];
	int fd, found = 0;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	*err = 0;
	if (fd < 0 || pread(fd, got, MARK_LEN, (off_t)at) != MARK_LEN) {
		*err = errno;
	} else {
		mask_in_place(got);
		found = !memcmp(got, masked, MARK_LEN);
	}
	if (fd >= 0)
		close(fd);
	explicit_bzero(got, sizeof(got));
	return found;
}

/* process_vm_readv at at: 1 if it returned the marker, 0 if it failed. */
static int vm_finds(pid_t pid, uintptr_t at, const unsigned char *masked, int *err)
{
	unsigned char got[MARK_LEN];
	struct iovec local = { got, MARK_LEN }, remote = { (void *)at, MARK_LEN };
	int found = 0;

	*err = 0;
	if (process_vm_readv(pid, &local, 1, &remote, 1, 0) != MARK_LEN) {
		*err = errno;
	} else {
		mask_in_place(got);
		found = !memcmp(got, masked, MARK_LEN);
	}
	explicit_bzero(got, sizeof(got));
	return found;
}

static struct kcore_needles needles_of(const struct handover *h)
{
	struct kcore_needles nd = { .len = MARK_LEN, .n = T_MALLOC };

	for (int i = 0; i < T_MALLOC; i++)
		memcpy(nd.masked[i], h->masked[i], MARK_LEN);
	return nd;
}

/* The physical address of at in pid, from its pagemap (root: PFNs shown); 0 if unknown. */
static unsigned long long phys_of(pid_t pid, uintptr_t at)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned long long e = 0;
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || pread(fd, &e, sizeof(e), (off_t)(at / page) * 8) != sizeof(e))
		e = 0;
	if (fd >= 0)
		close(fd);
	if (!(e >> 63) || !(e & ((1ULL << 55) - 1)))
		return 0;
	return (e & ((1ULL << 55) - 1)) * page + at % page;
}

/* Where a hit was found, against where the secret is: the same page or a copy. */
static void explain_hits(pid_t pid, const struct handover *h, const struct kcore_needles *nd)
{
	for (int i = 0; i < T_COUNT; i++)
		if (nd->count[i])
			tap_diag(
				"%s: %zu hits, the first at physical 0x%llx; the target's page at 0x%llx",
				what[i], nd->count[i], nd->first_phys[i], phys_of(pid, h->at[i]));
}

/* Row 1: the reader against a live target. */
static void read_live(pid_t pid, const struct handover *h, struct kcore_needles *nd)
{
	bool mem_ok = true, vm_ok = true, kcore_ok;
	int err;

	for (int i = 0; i < T_MALLOC; i++) {
		int found = mem_finds(pid, h->at[i], h->masked[i], &err);

		mem_ok &= tap_check(is_secret(i) ? !found && err : found,
				    "/proc/%d/mem at the %s: %s", (int)pid, what[i],
				    found ? "marker read" : strerror(err));
		found = vm_finds(pid, h->at[i], h->masked[i], &err);
		vm_ok &= tap_check(is_secret(i) ? !found && err : found,
				   "process_vm_readv at the %s: %s", what[i],
				   found ? "marker read" : strerror(err));
	}
	if (kcore_scan(nd) < 0)
		tap_bail("/proc/kcore: %s", strerror(errno));
	explain_hits(pid, h, nd);
	kcore_ok = tap_check(nd->count[T_SECRET] == 0 && nd->count[T_SECRET_PACKED] == 0,
			     "/proc/kcore (%zu MiB of direct map): secret markers %zu and %zu hits",
			     nd->scanned_mib, nd->count[T_SECRET], nd->count[T_SECRET_PACKED]);
	kcore_ok &=
		tap_check(nd->count[T_LOCKED] > 0 && nd->count[T_LOCKED_PACKED] > 0,
			  "control: /proc/kcore finds the lock-on-fault markers (%zu and %zu hits)",
			  nd->count[T_LOCKED], nd->count[T_LOCKED_PACKED]);
	tap_summary("secret-reader", "/proc/PID/mem", mem_ok,
		    "secret: EIO, packed: EIO; controls read");
	tap_summary("secret-reader", "process_vm_readv", vm_ok,
		    "secret and packed refused; controls read");
	tap_summary("secret-reader", "/proc/kcore", kcore_ok,
		    "secret %zu+%zu hits, controls %zu+%zu hits in %zu MiB", nd->count[T_SECRET],
		    nd->count[T_SECRET_PACKED], nd->count[T_LOCKED], nd->count[T_LOCKED_PACKED],
		    nd->scanned_mib);
}

/* Row 5: after the target freed everything and exited. */
static void read_after_exit(struct kcore_needles *nd)
{
	bool ok;

	if (kcore_scan(nd) < 0)
		tap_bail("/proc/kcore: %s", strerror(errno));
	for (int i = 0; i < T_COUNT; i++)
		if (nd->count[i])
			tap_diag("after exit: %s: %zu hits, the first at physical 0x%llx", what[i],
				 nd->count[i], nd->first_phys[i]);

	ok = tap_check(nd->count[T_SECRET] == 0 && nd->count[T_SECRET_PACKED] == 0,
		       "after free and exit, /proc/kcore: secret markers %zu and %zu hits",
		       nd->count[T_SECRET], nd->count[T_SECRET_PACKED]);
	/*
	 * Not a check: the reader's own reads of the controls (/proc/PID/mem
	 * and /proc/kcore read through kernel bounce pages, freed unwiped)
	 * leave copies in RAM that secbuf's wipe cannot reach.
	 */
	tap_diag("after free and exit, the lock-on-fault markers: %zu and %zu hits (not a check: "
		 "the reader's own reads may leave copies in kernel bounce pages)",
		 nd->count[T_LOCKED], nd->count[T_LOCKED_PACKED]);
	if (kcore_freed_pages_zeroed() == 1)
		tap_skip("this kernel zeroes pages as it frees them (init_on_free)",
			 "control: a malloc buffer marked and freed unwiped is still in RAM "
			 "(%zu hits)",
			 nd->count[T_MALLOC]);
	else
		ok &= tap_check(nd->count[T_MALLOC] > 0,
				"control: a malloc buffer marked and freed unwiped after the live "
				"scans is still in RAM (%zu hits)",
				nd->count[T_MALLOC]);
	tap_summary("secret-reader", "after free+exit", ok,
		    "secret %zu+%zu hits, unwiped control %zu", nd->count[T_SECRET],
		    nd->count[T_SECRET_PACKED], nd->count[T_MALLOC]);
}

/* Read one byte at p in a forked child: its wait status. */
static int child_reads(const volatile unsigned char *p, unsigned char *seen)
{
	int fds[2], status;
	pid_t pid;

	*seen = 0;
	if (pipe(fds) < 0 || (pid = fork()) < 0)
		tap_bail("fork: %s", strerror(errno));
	if (pid == 0) {
		unsigned char b = p[0] ^ KCORE_MASK;

		_exit(write(fds[1], &b, 1) == 1 ? 0 : 1);
	}
	close(fds[1]);
	if (read(fds[0], seen, 1) == 1)
		*seen ^= KCORE_MASK;
	close(fds[0]);
	waitpid(pid, &status, 0);
	return status;
}

/* Row 4: a forked child cannot read its parent's secret; it reads malloc memory. */
static void fork_child(void)
{
	unsigned char *s = secbuf_alloc_flags(4096, SECBUF_SECRET);
	unsigned char *sp = secbuf_alloc_flags(MARK_LEN, SECBUF_SECRET | SECBUF_PACKED);
	unsigned char *c = malloc(4096), seen;
	int st, pst, cst;
	bool ok;

	if (!s || !sp || !c)
		tap_bail("alloc: %s", strerror(errno));
	s[0] = sp[0] = c[0] = 0x5a;
	st = child_reads(s, &seen);
	ok = tap_check(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV,
		       "a forked child's read of the secret buffer faults (status 0x%x)", st);
	pst = child_reads(sp, &seen);
	ok &= tap_check(WIFSIGNALED(pst) && WTERMSIG(pst) == SIGSEGV,
			"a forked child's read of the packed secret faults (status 0x%x)", pst);
	cst = child_reads(c, &seen);
	ok &= tap_check(WIFEXITED(cst) && WEXITSTATUS(cst) == 0 && seen == 0x5a,
			"control: the child reads its parent's malloc memory (0x%02x)", seen);
	ok &= tap_check(s[0] == 0x5a && sp[0] == 0x5a, "the parent still reads its secrets");
	tap_summary("secret-fork", "child read", ok,
		    "secret: SIGSEGV, packed: SIGSEGV; control read");
	secbuf_free(sp);
	secbuf_free(s);
	free(c);
}

/* 6.1 booted without secretmem.enable=1: a clear error, and nothing else changes. */
static int disabled(void)
{
	struct secbuf_stat st;
	int lines = 0, after = 0, method = secbuf_lock_method();
	unsigned char *p;
	bool ok;

	tap_subject("secret-disabled", secbuf_lock_method_name(method));
	/* Warm-up: the thread's bins and the registry are made once, and stay. */
	secbuf_free(secbuf_alloc_flags(MARK_LEN, lock_flags() | SECBUF_PACKED));
	secbuf_free(secbuf_alloc_flags(4096, lock_flags()));
	lines = smaps_count(0);
	errno = 0;
	p = secbuf_alloc_flags(4096, SECBUF_SECRET);
	ok = tap_check(!p && errno == ENOSYS, "SECBUF_SECRET: NULL, errno %s",
		       strerrorname_np(errno));
	errno = 0;
	p = secbuf_alloc_flags(MARK_LEN, SECBUF_SECRET | SECBUF_PACKED);
	ok &= tap_check(!p && errno == ENOSYS, "SECBUF_SECRET | SECBUF_PACKED: NULL, errno %s",
			strerrorname_np(errno));
	after = smaps_count(0);
	ok &= tap_check(after == lines, "nothing left mapped (%d mappings before, %d after)", lines,
			after);
	p = secbuf_alloc_flags(4096, SECBUF_SECRET | SECBUF_BEST_EFFORT | lock_flags());
	ok &= tap_check(p && secbuf_stat(p, &st) == 0 && st.lock_method == method,
			"SECBUF_SECRET | SECBUF_BEST_EFFORT: the %s tier instead",
			secbuf_lock_method_name(method));
	secbuf_free(p);
	p = secbuf_alloc_flags(4096, lock_flags());
	ok &= tap_check(p && secbuf_stat(p, &st) == 0 && st.lock_method == method,
			"the lock tier still works (%s)", secbuf_lock_method_name(method));
	secbuf_free(p);
	tap_summary("secret-disabled", "6.1, no secretmem.enable", ok,
		    "ENOSYS, nothing mapped, best effort falls back to %s",
		    secbuf_lock_method_name(method));
	return tap_done();
}

int main(int argc, char **argv)
{
	int to_reader[2], to_target[2], status;
	struct kcore_needles nd;
	struct handover h;
	pid_t pid;

	if (argc == 2 && !strcmp(argv[1], "--disabled"))
		return disabled();
	tap_subject("secret-reader", "default");
	if (geteuid() != 0)
		tap_bail("needs root: it reads another process and /proc/kcore");
	if (pipe(to_reader) < 0 || pipe(to_target) < 0)
		tap_bail("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		tap_bail("fork: %s", strerror(errno));
	if (pid == 0) {
		close(to_reader[0]);
		close(to_target[1]);
		target(to_reader[1], to_target[0]);
	}
	close(to_reader[1]);
	close(to_target[0]);
	if (read(to_reader[0], &h, sizeof(h)) != sizeof(h)) {
		waitpid(pid, &status, 0);
		tap_bail("the target set nothing up (exit %d: 10+i = secret i failed)",
			 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	}
	nd = needles_of(&h);
	read_live(pid, &h, &nd);
	if (write(to_target[1], "f", 1) != 1 ||
	    read(to_reader[0], nd.masked[T_MALLOC], MARK_LEN) != MARK_LEN ||
	    waitpid(pid, &status, 0) != pid)
		tap_bail("the target: %s", strerror(errno));
	nd.n = T_COUNT;
	tap_check(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "the target freed its secrets and exited 0 (status 0x%x)", status);
	read_after_exit(&nd);
	fork_child();
	return tap_done();
}
