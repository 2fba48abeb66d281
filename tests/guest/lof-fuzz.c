// SPDX-License-Identifier: MIT
/*
 * A model-checked fuzzer of the lock-on-fault calls.  Random operations,
 * from a printed seed, over an arena of ARENA pages: mmap(MAP_FIXED) with
 * no lock, MAP_LOCKED or MAP_LOCKONFAULT, munmap(), writes, mprotect(),
 * mlock2() in both modes, munlock(), munlock2() with each flag set,
 * madvise(MADV_DONTNEED / MADV_DONTNEED_LOCKED), mremap() moving and
 * growing, mlockall() with every flag set, munlockall(), munlockall2()
 * and fork().  A model in user space says what each page must be: mapped,
 * writable, present, and unlocked, locked or locked on fault, and what
 * mlockall(MCL_FUTURE) makes new mappings.  Without CAP_IPC_LOCK it runs
 * under a small RLIMIT_MEMLOCK, and the model says which calls the limit
 * refuses: a call beyond it must fail, one within it succeed.  After
 * every step the kernel is checked against the model:
 *   - VmFlags "lo"/"lf" of every arena VMA in smaps;
 *   - each page's presence in pagemap;
 *   - as root, PG_mlocked of every present page in kpageflags, after
 *     draining this CPU's mlock batch;
 *   - VmLck of /proc/self/status against the locked VMAs of smaps, and the
 *     arena's share of it against the model;
 *   - the return value and errno of the call itself;
 *   - in a forked child: no lock inherited, the same pages present.
 * On a kernel without the series it runs the operations stock has.  A
 * mismatch prints the seed, the step, the last operations and what
 * differed, and exits 1: rerun with -s SEED -n STEP to replay it.
 *
 * usage: lof-fuzz [-s SEED] [-t SECONDS] [-n STEPS] [-l LIMIT_PAGES]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "kfacts.h"
#include "tap.h"

#ifndef MADV_DONTNEED_LOCKED
#define MADV_DONTNEED_LOCKED 24
#endif

#define ARENA	32 /* pages */
#define HISTORY 16

enum mode { UNLOCKED, LOCKED, ONFAULT };
static const char *const mode_name[] = { "unlocked", "locked", "on fault" };

struct page {
	bool mapped, writable, present;
	enum mode mode;
};

static struct page model[ARENA];
/* What mlockall(MCL_FUTURE [| MCL_ONFAULT]) makes new mappings */
static enum mode future = UNLOCKED;
static char *arena;
static long psize;
/* RLIMIT_MEMLOCK in pages; capable: CAP_IPC_LOCK, which ignores it */
static long limit_pages;
static bool patched, root, capable, lf_shown;
static unsigned long long rng;
static long step, calls;
static char history[HISTORY][96];

static unsigned long long next(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dULL;
}

static unsigned int pick(unsigned int n)
{
	return next() % n;
}

PRINTF_LIKE(1, 2) static void note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(history[step % HISTORY], sizeof(history[0]), fmt, ap);
	va_end(ap);
}

PRINTF_LIKE(1, 2) static void mismatch(const char *fmt, ...)
{
	char what[512];
	va_list ap;
	long s;

	tap_diag("last operations:");
	for (s = step > HISTORY - 1 ? step - HISTORY + 1 : 0; s <= step; s++)
		tap_diag("  step %ld: %s", s, history[s % HISTORY]);
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	tap_check(false, "model mismatch at step %ld: %s", step, what);
	tap_done();
	exit(1);
}

static char *page_at(unsigned int i)
{
	return arena + (size_t)i * psize;
}

/* Whether every page of [a, a + n) is mapped (and, if asked, writable). */
static bool all_mapped(unsigned int a, unsigned int n, bool writable)
{
	unsigned int i;

	for (i = a; i < a + n; i++)
		if (!model[i].mapped || (writable && !model[i].writable))
			return false;
	return true;
}

/* The kernel's mm->locked_vm, in pages: VmLck (checked against smaps) */
static long locked_pages(void)
{
	return proc_field_kb("/proc/self/status", "VmLck") * 1024 / psize;
}

/* Whether locking @more pages on top of what is locked passes the limit */
static bool within_limit(long more)
{
	return capable || locked_pages() + more <= limit_pages;
}

/* The mode a new mapping gets: its flag, and MCL_FUTURE's; on fault wins. */
static enum mode new_mode(enum mode flag)
{
	if (future == UNLOCKED)
		return flag;
	return flag == ONFAULT || future == ONFAULT ? ONFAULT : LOCKED;
}

/* Called with the call's return value: errno is still the call's. */
static void expect(long ret, long want, int want_err, const char *call)
{
	int err = errno;

	calls++;
	if (ret != want || (want == -1 && err != want_err))
		mismatch("%s returned %ld (%s), the model expects %ld%s%s", call, ret,
			 ret == -1 ? strerror(err) : "no error", want, want == -1 ? " with " : "",
			 want == -1 ? strerror(want_err) : "");
}

static void op_map(unsigned int a, unsigned int n)
{
	static const int flags[] = { 0, MAP_LOCKED, MAP_LOCKONFAULT };
	int f = flags[pick(patched ? 3 : 2)];
	enum mode mode = new_mode(f == MAP_LOCKED ? LOCKED : f ? ONFAULT : UNLOCKED);
	/* do_mmap() checks the limit before it unmaps what MAP_FIXED replaces */
	bool fits = mode == UNLOCKED || within_limit(n);
	unsigned int i;
	void *p;

	note("mmap(%u+%u, %s%s)", a, n,
	     f == MAP_LOCKED ? "MAP_LOCKED" :
	     f		     ? "MAP_LOCKONFAULT" :
			       "no lock",
	     future == UNLOCKED ? "" :
	     future == LOCKED	? ", MCL_FUTURE" :
				  ", MCL_FUTURE|MCL_ONFAULT");
	p = mmap(page_at(a), n * psize, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | f, -1, 0);
	expect(p == page_at(a) ? 0 : -1, fits ? 0 : -1, EAGAIN, "mmap");
	if (!fits)
		return;
	for (i = a; i < a + n; i++)
		model[i] = (struct page){ true, true, mode == LOCKED, mode };
}

static void op_unmap(unsigned int a, unsigned int n)
{
	unsigned int i;

	note("munmap(%u+%u)", a, n);
	expect(munmap(page_at(a), n * psize), 0, 0, "munmap");
	for (i = a; i < a + n; i++)
		model[i] = (struct page){ 0 };
}

static void op_touch(unsigned int a, unsigned int n)
{
	unsigned int i;

	note("write(%u+%u)", a, n);
	for (i = a; i < a + n; i++)
		if (model[i].mapped && model[i].writable) {
			*(volatile char *)page_at(i) = (char)step;
			model[i].present = true;
		}
}

static void op_mprotect(unsigned int a, unsigned int n)
{
	bool rw = pick(2);
	unsigned int i;

	if (!all_mapped(a, n, false))
		return;
	note("mprotect(%u+%u, %s)", a, n, rw ? "rw" : "none");
	expect(mprotect(page_at(a), n * psize, rw ? PROT_READ | PROT_WRITE : PROT_NONE), 0, 0,
	       "mprotect");
	for (i = a; i < a + n; i++) {
		/* mprotect_fixup() populates a locked private VMA made writable */
		if (rw && !model[i].writable && model[i].mode == LOCKED)
			model[i].present = true;
		model[i].writable = rw;
	}
}

static void op_mlock2(unsigned int a, unsigned int n)
{
	/* Populating a PROT_NONE page fails: lock those on fault only. */
	bool onfault = pick(2) || !all_mapped(a, n, true), fits;
	int flags = onfault ? MLOCK_ONFAULT : patched && pick(2) ? MLOCK_LOCKED : 0;
	unsigned int i, already = 0;

	if (!all_mapped(a, n, false))
		return;
	/* do_mlock(): what the range has locked already does not count twice */
	for (i = a; i < a + n; i++)
		already += model[i].mode != UNLOCKED;
	fits = within_limit(n - already);
	note("mlock2(%u+%u, %s)", a, n, onfault ? "MLOCK_ONFAULT" : flags ? "MLOCK_LOCKED" : "0");
	expect(syscall(SYS_mlock2, page_at(a), n * psize, flags), fits ? 0 : -1, ENOMEM, "mlock2");
	if (!fits)
		return;
	for (i = a; i < a + n; i++) {
		model[i].mode = onfault ? ONFAULT : LOCKED;
		if (!onfault)
			model[i].present = true;
	}
}

/*
 * munlock(), or munlock2() with one of its four flag sets.  The rule that
 * mlock2() shares: 0 is the classic call (munlock(): both modes), one flag
 * names the one mode to drop, and both flags in one call are EINVAL.
 */
static void op_munlock(unsigned int a, unsigned int n)
{
	static const unsigned int sets[] = { 0, MLOCK_LOCKED, MLOCK_ONFAULT,
					     MLOCK_LOCKED | MLOCK_ONFAULT };
	unsigned int flags = patched ? sets[pick(4)] : 0, drops, i;
	bool two = patched && pick(4);

	if (!all_mapped(a, n, false))
		return;
	if (!two) {
		note("munlock(%u+%u)", a, n);
		expect(munlock(page_at(a), n * psize), 0, 0, "munlock");
		flags = 0;
	} else if (flags == (MLOCK_LOCKED | MLOCK_ONFAULT)) {
		note("munlock2(%u+%u, %#x)", a, n, flags);
		expect(syscall(__NR_munlock2, page_at(a), n * psize, flags), -1, EINVAL,
		       "munlock2 with both modes");
		return;
	} else {
		note("munlock2(%u+%u, %#x)", a, n, flags);
		expect(syscall(__NR_munlock2, page_at(a), n * psize, flags), 0, 0, "munlock2");
	}
	drops = flags ? flags : MLOCK_LOCKED | MLOCK_ONFAULT;
	for (i = a; i < a + n; i++)
		if ((model[i].mode == LOCKED && (drops & MLOCK_LOCKED)) ||
		    (model[i].mode == ONFAULT && (drops & MLOCK_ONFAULT)))
			model[i].mode = UNLOCKED;
}

static void op_dontneed(unsigned int a, unsigned int n)
{
	bool locked_too = pick(2);
	unsigned int i, first_locked = a + n;
	long ret;

	if (!all_mapped(a, n, false))
		return;
	for (i = a; i < a + n && first_locked == a + n; i++)
		if (model[i].mode != UNLOCKED)
			first_locked = i;
	note("madvise(%u+%u, %s)", a, n, locked_too ? "MADV_DONTNEED_LOCKED" : "MADV_DONTNEED");
	ret = madvise(page_at(a), n * psize, locked_too ? MADV_DONTNEED_LOCKED : MADV_DONTNEED);
	if (locked_too || first_locked == a + n) {
		expect(ret, 0, 0, "madvise");
		first_locked = a + n;
	} else {
		/* The VMAs before the first locked one are zapped, then EINVAL. */
		expect(ret, -1, EINVAL, "madvise(MADV_DONTNEED) of a locked range");
	}
	for (i = a; i < first_locked; i++)
		model[i].present = false;
}

/*
 * mremap(MREMAP_MAYMOVE | MREMAP_FIXED) of [a, a + n), inside one VMA, to
 * [b, b + m) elsewhere in the arena, m >= n.  The pages move with their
 * state; a grown tail takes the VMA's, and is populated if locked eagerly.
 * A move that grows goes to a hole: 6.1 and 6.12 unmap the target before
 * they check the limit (mremap_to()), later kernels after, and a hole is
 * left a hole either way.
 */
static void op_mremap(unsigned int a, unsigned int n)
{
	unsigned int m = n + (pick(2) ? pick(4) : 0), b = pick(ARENA - m + 1), i;
	struct page moved[ARENA];
	struct smaps_vma v;
	bool fits;
	void *p;

	if (!all_mapped(a, n, false) || (b < a + n && a < b + m))
		return;
	for (i = b; i < b + m && m > n; i++)
		if (model[i].mapped)
			return;
	if (smaps_find(0, page_at(a), &v) < 0 || v.end < (uintptr_t)page_at(a + n))
		return; /* the model keeps no VMA bounds: ask for one VMA only */
	fits = m == n || model[a].mode == UNLOCKED || within_limit(m - n);
	note("mremap(%u+%u -> %u+%u)", a, n, b, m);
	p = mremap(page_at(a), n * psize, m * psize, MREMAP_MAYMOVE | MREMAP_FIXED, page_at(b));
	expect(p == page_at(b) ? 0 : -1, fits ? 0 : -1, EAGAIN, "mremap");
	if (!fits)
		return;
	memcpy(moved, model + a, n * sizeof(*moved));
	for (i = a; i < a + n; i++)
		model[i] = (struct page){ 0 };
	for (i = 0; i < m; i++) {
		model[b + i] = moved[i < n ? i : 0];
		if (i >= n)
			model[b + i].present = moved[0].mode == LOCKED && moved[0].writable;
	}
}

/* mlockall() with any flag set: every current mapping, the future, or both */
static void op_mlockall(void)
{
	static const int sets[] = { MCL_CURRENT,
				    MCL_FUTURE,
				    MCL_CURRENT | MCL_FUTURE,
				    MCL_CURRENT | MCL_ONFAULT,
				    MCL_FUTURE | MCL_ONFAULT,
				    MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT,
				    MCL_ONFAULT };
	int flags = sets[pick(7)];
	bool valid = flags & (MCL_CURRENT | MCL_FUTURE), fits = true;
	enum mode mode = flags & MCL_ONFAULT ? ONFAULT : LOCKED;
	unsigned int i;

	/* MCL_CURRENT needs the whole address space (VmSize) within the limit */
	if (valid && (flags & MCL_CURRENT) && !capable)
		fits = proc_field_kb("/proc/self/status", "VmSize") * 1024 / psize <= limit_pages;
	note("mlockall(%#x)", flags);
	expect(mlockall(flags), valid && fits ? 0 : -1, valid ? ENOMEM : EINVAL, "mlockall");
	if (!valid || !fits)
		return;
	/* Every mlockall() sets the future anew: MCL_CURRENT alone ends it */
	future = flags & MCL_FUTURE ? mode : UNLOCKED;
	if (!(flags & MCL_CURRENT))
		return;
	for (i = 0; i < ARENA; i++)
		if (model[i].mapped) {
			model[i].mode = mode;
			if (mode == LOCKED && model[i].writable)
				model[i].present = true;
		}
}

/* munlockall(), or munlockall2() with any flag set (and unknown bits) */
static void op_munlockall(void)
{
	int flags = MCL_CURRENT | MCL_FUTURE;
	bool valid = true, two = patched && pick(4);
	unsigned int i;

	if (!two) {
		note("munlockall()");
		expect(munlockall(), 0, 0, "munlockall");
	} else {
		flags = pick(8) | (pick(8) ? 0 : 0x40);
		valid = (flags & (MCL_CURRENT | MCL_FUTURE)) && !(flags & 0x40);
		note("munlockall2(%#x)", flags);
		expect(syscall(__NR_munlockall2, flags), valid ? 0 : -1, EINVAL, "munlockall2");
	}
	if (!valid)
		return;
	/* MCL_ONFAULT narrows both to what is locked on fault */
	if ((flags & MCL_FUTURE) && (!(flags & MCL_ONFAULT) || future == ONFAULT))
		future = UNLOCKED;
	if (flags & MCL_CURRENT)
		for (i = 0; i < ARENA; i++)
			if (!(flags & MCL_ONFAULT) || model[i].mode == ONFAULT)
				model[i].mode = UNLOCKED;
}

/* What one arena VMA of smaps says, for check_smaps() */
struct seen {
	long locked_kb, arena_locked_kb;
	enum mode mode[ARENA];
	bool mapped[ARENA];
};

static int collect(const struct smaps_vma *v, void *arg)
{
	struct seen *s = arg;
	uintptr_t lo = (uintptr_t)arena, hi = lo + ARENA * psize, p;
	bool locked = vmflag_has(v, "lo");
	enum mode mode = !locked ? UNLOCKED : vmflag_has(v, "lf") ? ONFAULT : LOCKED;

	if (locked)
		s->locked_kb += (v->end - v->start) / 1024;
	if (vmflag_has(v, "lf") && !locked)
		mismatch("VMA %lx-%lx shows lf without lo", v->start, v->end);
	for (p = v->start; p < v->end; p += psize)
		if (p >= lo && p < hi) {
			s->mapped[(p - lo) / psize] = true;
			s->mode[(p - lo) / psize] = mode;
			if (locked)
				s->arena_locked_kb += psize / 1024;
		}
	return 0;
}

/* Whether smaps names VM_LOCKONFAULT "lf" (6.1 without the series does not) */
static bool smaps_names_lf(void)
{
	struct smaps_vma v;
	bool lf = false;
	char *p = mmap(NULL, psize, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p != MAP_FAILED && !syscall(SYS_mlock2, p, psize, MLOCK_ONFAULT) &&
	    !smaps_find(0, p, &v))
		lf = vmflag_has(&v, "lf");
	if (p != MAP_FAILED)
		munmap(p, psize);
	return lf;
}

static void check(void)
{
	uint64_t pm[ARENA];
	struct seen s = { 0 };
	long vmlck, model_kb = 0;
	unsigned int i;

	if (smaps_each(0, collect, &s) < 0 || pagemap_read(arena, ARENA, pm) < 0)
		mismatch("cannot read smaps or pagemap: %s", strerror(errno));
	if (root && mlock_drain() < 0)
		mismatch("mlock_drain: %s", strerror(errno));
	for (i = 0; i < ARENA; i++) {
		const struct page *m = &model[i];
		bool present = pm[i] & PM_PRESENT;
		struct page_census c;

		if (s.mapped[i] != m->mapped)
			mismatch("page %u is %smapped, the model says %smapped", i,
				 s.mapped[i] ? "" : "not ", m->mapped ? "" : "not ");
		if (!m->mapped)
			continue;
		/* Stock 6.1 prints VM_LOCKONFAULT as "??": only "lo" tells there */
		if (lf_shown ? s.mode[i] != m->mode :
			       (s.mode[i] != UNLOCKED) != (m->mode != UNLOCKED))
			mismatch("page %u is %s in smaps, the model says %s", i,
				 mode_name[s.mode[i]], mode_name[m->mode]);
		if (m->mode != UNLOCKED)
			model_kb += psize / 1024;
		if (present != m->present)
			mismatch("page %u is %spresent, the model says %spresent (%s)", i,
				 present ? "" : "not ", m->present ? "" : "not ",
				 mode_name[m->mode]);
		if (!root || !present)
			continue;
		if (page_census(page_at(i), 1, &c) < 0 || c.flags_read != 1)
			mismatch("kpageflags of page %u unreadable", i);
		if (!!c.mlocked != (m->mode != UNLOCKED))
			mismatch("page %u is %sPG_mlocked, but %s", i, c.mlocked ? "" : "not ",
				 mode_name[m->mode]);
	}
	vmlck = proc_field_kb("/proc/self/status", "VmLck");
	if (vmlck != s.locked_kb)
		mismatch("VmLck %ld kB, the locked VMAs of smaps %ld kB", vmlck, s.locked_kb);
	if (s.arena_locked_kb != model_kb)
		mismatch("the arena's locked VMAs are %ld kB, the model's %ld kB",
			 s.arena_locked_kb, model_kb);
}

/* A child inherits no lock, and sees the parent's present pages. */
static void op_fork(void)
{
	int status;
	pid_t pid;

	note("fork()");
	pid = fork();
	if (pid < 0)
		mismatch("fork: %s", strerror(errno));
	if (!pid) {
		uint64_t pm[ARENA];
		struct smaps_vma v;
		unsigned int i;

		if (pagemap_read(arena, ARENA, pm) < 0)
			_exit(2);
		for (i = 0; i < ARENA; i++) {
			if (!model[i].mapped)
				continue;
			if (smaps_find(0, page_at(i), &v) < 0 || vmflag_has(&v, "lo"))
				_exit(3);
			if (!!(pm[i] & PM_PRESENT) != model[i].present)
				_exit(4);
		}
		_exit(0);
	}
	calls++;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		mismatch(
			"the forked child disagrees with the model (status %#x: 3 a lock was inherited, 4 presence)",
			status);
}

int main(int argc, char **argv)
{
	unsigned long long seed = 0;
	long steps = 0, seconds = 60, counts[10] = { 0 };
	struct timespec t0, t;
	struct rlimit rl;
	int opt;

	limit_pages = 16;
	while ((opt = getopt(argc, argv, "s:t:n:l:")) != -1) {
		switch (opt) {
		case 's':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 't':
			seconds = atol(optarg);
			break;
		case 'n':
			steps = atol(optarg);
			break;
		case 'l':
			limit_pages = atol(optarg);
			break;
		default:
			fprintf(stderr,
				"usage: lof-fuzz [-s SEED] [-t SECONDS] [-n STEPS] [-l LIMIT_PAGES]\n");
			return 2;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (!seed)
		seed = (unsigned long long)t0.tv_nsec * 2654435761u ^ (unsigned long long)getpid();
	rng = seed | 1;
	psize = sysconf(_SC_PAGESIZE);
	/* root has CAP_IPC_LOCK here; everyone else gets the small limit */
	capable = !geteuid();
	rl.rlim_cur = rl.rlim_max = limit_pages * psize;
	if (!capable && setrlimit(RLIMIT_MEMLOCK, &rl))
		return perror("setrlimit"), 1;
	/*
	 * Under mlockall(MCL_FUTURE) and the limit, a growing heap is refused:
	 * grow it now, and keep it, for the smaps and pagemap readers.
	 */
	mallopt(M_TRIM_THRESHOLD, 64 << 20);
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	free(malloc(4 << 20));
	patched = lockonfault_series();
	root = kpageflags_readable();
	lf_shown = smaps_names_lf();
	if (root && mlock_pin_cpu() < 0)
		return perror("sched_setaffinity"), 1;
	tap_diag("lof-fuzz seed %#llx, %s kernel, %s%s, %s; replay: lof-fuzz -s %#llx%s -n STEPS",
		 seed, patched ? "lock-on-fault" : "stock",
		 root ? "kpageflags checked" : "no kpageflags",
		 lf_shown ? "" : ", smaps without \"lf\"",
		 capable ? "CAP_IPC_LOCK" : "RLIMIT_MEMLOCK below", seed,
		 capable ? "" : " -l PAGES");
	if (!capable)
		tap_diag("RLIMIT_MEMLOCK %ld pages", limit_pages);
	/* The arena: reserved, then every page unmapped and so in the model. */
	arena = mmap(NULL, ARENA * psize, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (arena == MAP_FAILED || munmap(arena, ARENA * psize))
		return perror("arena"), 1;
	for (step = 0;; step++) {
		unsigned int a = pick(ARENA), n = 1 + pick(ARENA - a < 8 ? ARENA - a : 8),
			     op = pick(10);

		if (steps ? step >= steps :
			    (clock_gettime(CLOCK_MONOTONIC, &t), t.tv_sec - t0.tv_sec >= seconds))
			break;
		counts[op]++;
		switch (op) {
		case 0:
			op_map(a, n);
			break;
		case 1:
			op_unmap(a, n);
			break;
		case 2:
			op_touch(a, n);
			break;
		case 3:
			op_mprotect(a, n);
			break;
		case 4:
			op_mlock2(a, n);
			break;
		case 5:
			op_munlock(a, n);
			break;
		case 6:
			op_dontneed(a, n);
			break;
		case 7:
			if (pick(8))
				op_touch(a, n);
			else
				op_fork();
			break;
		case 8:
			op_mremap(a, n);
			break;
		default:
			if (pick(2))
				op_mlockall();
			else
				op_munlockall();
		}
		check();
	}
	tap_diag(
		"%ld steps, %ld calls checked: map %ld, unmap %ld, write %ld, mprotect %ld, mlock2 %ld, munlock %ld, madvise %ld, write/fork %ld, mremap %ld, (mun)lockall %ld",
		step, calls, counts[0], counts[1], counts[2], counts[3], counts[4], counts[5],
		counts[6], counts[7], counts[8], counts[9]);
	tap_report("lof-fuzz %s: %ld steps, %ld calls checked in %ld s, 0 mismatches",
		   capable ? "root" : "nobody", step, calls, seconds);
	tap_check(true, "%ld steps from seed %#llx agree with the model", step, seed);
	return tap_done();
}
