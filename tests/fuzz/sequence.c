/*
 * sequence: the model-checked sequence fuzzer of libsecbuf.  The fuzzer's
 * bytes choose calls: alloc and alloc_flags (every flag combination, sizes
 * from 0 to 3 MiB), free, protect, size, stat, purge, writes, reads, a
 * fork() whose child checks what it may and may not see, and a thread.  A
 * model keeps what every buffer must hold, its access and the pages it
 * touched; after each step the buffer the step used is checked against it:
 *   - its contents, byte for byte (when readable);
 *   - its access, tried with process_vm_readv/writev, which fail with
 *     EFAULT where the process may not read or write, without a fault;
 *   - its guard pages (unreadable), and that freed memory is gone;
 *   - secbuf_stat() against /proc: resident pages against pagemap, the
 *     lock state against smaps' VmFlags, locked pages against the method,
 *     and nothing resident that was never touched (without
 *     SECBUF_POPULATE).
 * Every buffer is checked again at the end, then freed.  The lock method
 * is the process's: run it once per method with SECBUF_LOCK (make fuzz).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuzz.h"
#include "kfacts.h"
#include "secbuf.h"

#define SLOTS	12
#define STEPS	48
#define CANARY	32 /* bytes in front of the pointer the library may write at alloc */
#define BIG_MAX (3U << 20)

struct slot {
	unsigned char *p;
	size_t size;
	unsigned flags;
	int access;	      /* SECBUF_NOACCESS, _READONLY, _READWRITE */
	bool packed, secret;  /* as secbuf_stat() says it was made */
	unsigned char *model; /* what it must hold */
	bool *touched;	      /* per data page, for guarded buffers */
	size_t pages;
	uintptr_t data; /* first data page (guarded) */
};

static struct slot slots[SLOTS];
static size_t page;
static int method;
static bool trace; /* SEQUENCE_TRACE=1: each step on stderr, to read a reproducer */

static void fail(const char *what, const struct slot *s)
{
	fprintf(stderr, "sequence: %s (buffer %p, %zu bytes, flags %#x, access %d, method %s)\n",
		what, s ? (void *)s->p : NULL, s ? s->size : 0, s ? s->flags : 0,
		s ? s->access : -1, secbuf_lock_method_name(method));
	abort();
}

/* 0 when len bytes at addr can be read (into out), -1 with errno EFAULT when not. */
static int peek(uintptr_t addr, void *out, size_t len)
{
	struct iovec local = { out, len }, remote = { (void *)addr, len };

	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -1;
}

static int poke(uintptr_t addr, const void *in, size_t len)
{
	struct iovec local = { (void *)in, len }, remote = { (void *)addr, len };

	return process_vm_writev(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -1;
}

static void touch(struct slot *s, uintptr_t from, size_t len)
{
	if (s->packed || !len)
		return;
	for (uintptr_t a = from & ~(page - 1); a < from + len; a += page)
		if (a >= s->data && a < s->data + s->pages * page)
			s->touched[(a - s->data) / page] = true;
}

/*
 * Byte for byte, where readable.  Secret memory is read directly (no other
 * process, nor process_vm_readv, may read it); of a guarded buffer, only
 * the pages touched so far: reading the others would map them, and their
 * being absent is what check_stat() proves of them.
 */
static void check_contents(const struct slot *s)
{
	static unsigned char buf[BIG_MAX];
	uintptr_t from = (uintptr_t)s->p, end = from + s->size;

	if (s->access == SECBUF_NOACCESS)
		return;
	if (s->secret || s->packed) {
		if (s->secret ? memcmp(s->p, s->model, s->size) :
				peek(from, buf, s->size) < 0 || memcmp(buf, s->model, s->size))
			fail("contents differ from the model", s);
		return;
	}
	while (from < end) {
		uintptr_t next = (from & ~(page - 1)) + page;
		size_t len = (next < end ? next : end) - from;

		if (s->touched[(from - s->data) / page] &&
		    (peek(from, buf, len) < 0 ||
		     memcmp(buf, s->model + (from - (uintptr_t)s->p), len)))
			fail("contents differ from the model", s);
		from += len;
	}
}

static void check_access(const struct slot *s)
{
	unsigned char c;

	if (s->secret)
		return; /* process_vm_readv cannot read secret memory at all */
	if (s->access == SECBUF_NOACCESS && peek((uintptr_t)s->p, &c, 1) == 0)
		fail("a NOACCESS buffer can be read", s);
	if (s->access != SECBUF_NOACCESS && peek((uintptr_t)s->p, &c, 1) < 0)
		fail("a readable buffer cannot be read", s);
	if (s->access == SECBUF_READONLY && poke((uintptr_t)s->p, &c, 1) == 0)
		fail("a READONLY buffer can be written", s);
	if (s->packed)
		return;
	if (peek(s->data - 1, &c, 1) == 0 || peek(s->data + s->pages * page, &c, 1) == 0)
		fail("a guard page can be read", s);
}

static void check_stat(const struct slot *s)
{
	struct secbuf_stat st;
	struct smaps_vma v;
	uint64_t pm[BIG_MAX / 4096 + 2];
	size_t present = 0, untouched = 0;

	if (secbuf_stat(s->p, &st) < 0)
		fail("secbuf_stat failed", s);
	if (st.size != s->size || secbuf_size(s->p) != s->size)
		fail("secbuf_stat or secbuf_size gives another size", s);
	if (!(s->flags & SECBUF_BEST_EFFORT) && !s->secret && method != SECBUF_LOCK_NONE &&
	    st.lock_method != method)
		fail("a strict buffer is not locked with the process's method", s);
	if (st.locked_pages != (st.lock_method == SECBUF_LOCK_NONE ? 0 : st.resident_pages))
		fail("locked pages are not the resident pages of a locked buffer", s);
	if (s->packed || s->secret)
		return; /* a slab's pages are shared; secret memory's VmFlags vary by kernel */
	if (st.mapped_bytes != s->pages * page || pagemap_read((void *)s->data, s->pages, pm) < 0)
		fail("mapped bytes or pagemap", s);
	for (size_t i = 0; i < s->pages; i++) {
		present += !!(pm[i] & PM_PRESENT);
		untouched += (pm[i] & PM_PRESENT) && !s->touched[i];
	}
	if (present != st.resident_pages)
		fail("secbuf_stat's resident pages differ from pagemap's", s);
	if (!(s->flags & SECBUF_POPULATE) && untouched) {
		for (size_t i = 0; i < s->pages; i++)
			fprintf(stderr, "%zu:%d%d ", i, !!(pm[i] & PM_PRESENT), s->touched[i]);
		fprintf(stderr, "data %#lx p %p\n", (unsigned long)s->data, (void *)s->p);
		fail("a page never touched is resident", s);
	}
	if (smaps_find(0, (void *)s->data, &v) < 0)
		fail("no smaps entry for the data", s);
	if (vmflag_has(&v, "lo") != (st.lock_method != SECBUF_LOCK_NONE))
		fail("VmFlags lo disagrees with the buffer's lock method", s);
}

static void check(struct slot *s)
{
	check_stat(s);
	check_access(s);
	check_contents(s);
}

static size_t pick_size(struct fuzz_in *in)
{
	uint8_t k = fuzz_u8(in);

	switch (k % 8) {
	case 0:
		return k / 8; /* 0 to 31 */
	case 1:
	case 2:
		return 1 + fuzz_below(in, 300); /* around SECBUF_PACKED_MAX */
	case 3:
	case 4:
		return 1 + fuzz_below(in, 3 * 4096);
	case 5:
	case 6:
		return 1 + fuzz_below(in, 64 << 10);
	}
	return 1 + fuzz_u32(in) % BIG_MAX;
}

static void do_alloc(struct slot *s, struct fuzz_in *in, bool with_flags)
{
	/* 0x20: an unknown flag; SECBUF_INHERIT (children keep it) is not modelled yet */
	unsigned flags = with_flags ? fuzz_u8(in) & 0x2f : 0;
	size_t size = pick_size(in);
	struct secbuf_stat st;

	errno = 0;
	s->p = with_flags ? secbuf_alloc_flags(size, flags) : secbuf_alloc(size);
	if (!s->p) {
		if (!errno || ((size == 0 || flags & 0x20) && errno != EINVAL))
			fail("a failed allocation without its errno", NULL);
		return;
	}
	if (size == 0 || flags & 0x20)
		fail("an allocation of 0 bytes or unknown flags succeeded", NULL);
	s->size = size;
	s->flags = flags;
	s->access = SECBUF_READWRITE;
	if (secbuf_stat(s->p, &st) < 0)
		fail("secbuf_stat of a new buffer", s);
	s->packed = st.flags & SECBUF_PACKED && size <= SECBUF_PACKED_MAX;
	s->secret = st.lock_method == SECBUF_LOCK_SECRETMEM;
	s->model = calloc(1, size);
	s->pages = st.mapped_bytes / page;
	s->data = (((uintptr_t)s->p + size + page - 1) & ~(page - 1)) - st.mapped_bytes;
	s->touched = calloc(s->pages ? s->pages : 1, sizeof(bool));
	if (!s->model || !s->touched)
		abort();
	touch(s, (uintptr_t)s->p - CANARY, CANARY + 1);
	touch(s, (uintptr_t)s->p + size - 1, 16); /* the padding up to the guard */
	check(s);
}

static void do_free(struct slot *s)
{
	uintptr_t p = (uintptr_t)s->p;
	unsigned char c = 0;
	bool packed = s->packed;

	secbuf_free(s->p);
	free(s->model);
	free(s->touched);
	memset(s, 0, sizeof(*s));
	/* A guarded buffer is unmapped; a packed slot is zero, or its slab gone. */
	if (!packed && peek(p, &c, 1) == 0)
		fail("a freed buffer can still be read", NULL);
	if (packed && peek(p, &c, 1) == 0 && c)
		fail("a freed packed secret is not wiped", NULL);
}

static void do_write(struct slot *s, struct fuzz_in *in)
{
	size_t off = fuzz_u32(in) % s->size, len = 1 + fuzz_u32(in) % (s->size - off);
	uint8_t seed = fuzz_u8(in);

	if (s->access != SECBUF_READWRITE)
		return;
	for (size_t i = 0; i < len; i++)
		s->model[off + i] = (uint8_t)(seed + i * 131);
	memcpy(s->p + off, s->model + off, len);
	touch(s, (uintptr_t)s->p + off, len);
}

static void do_read(struct slot *s)
{
	if (s->access == SECBUF_NOACCESS)
		return;
	if (memcmp(s->p, s->model, s->size))
		fail("contents differ from the model", s);
	touch(s, (uintptr_t)s->p, s->size);
}

static void do_protect(struct slot *s, struct fuzz_in *in)
{
	int access = fuzz_below(in, 4); /* 3: a bad mode */
	int rc = secbuf_protect(s->p, access);

	if (access > SECBUF_READWRITE || s->packed) {
		if (rc == 0 || errno != EINVAL)
			fail("a bad mode, or protect of a packed secret, did not fail with EINVAL",
			     s);
		return;
	}
	if (rc < 0)
		fail("secbuf_protect failed", s);
	s->access = access;
}

static void do_purge(void)
{
	secbuf_purge();
	for (int i = 0; i < SLOTS; i++) {
		if (!slots[i].p)
			continue;
		memset(slots[i].model, 0, slots[i].size);
		if (!slots[i].packed)
			slots[i].access = SECBUF_READWRITE;
	}
}

/* The child sees every buffer as zeros (secret memory not at all), and its own memory as it was. */
static void do_fork(void)
{
	static const char mark[] = "ordinary memory stays";
	char *plain = strdup(mark);
	int status;
	pid_t pid, rc;

	if (!plain)
		abort();
	pid = fork();
	if (pid < 0)
		abort();
	if (pid == 0) {
		unsigned char c;
		int bad = strcmp(plain, mark) != 0;

		for (int i = 0; i < SLOTS; i++) {
			struct slot *s = &slots[i];

			if (!s->p)
				continue;
			if (s->secret) { /* gone: unmapped, or only an inaccessible placeholder */
				struct smaps_vma v;

				if (smaps_find(0, s->p, &v) == 0 &&
				    (strcmp(v.perms, "---p") || strstr(v.name, "secretmem"))) {
					fprintf(stderr,
						"sequence: child: secret memory at %p is there: %s %s\n",
						(void *)s->p, v.perms, v.name);
					bad = 1;
				}
				continue;
			}
			for (size_t k = 0; k < s->size && s->access != SECBUF_NOACCESS;
			     k += k < 64 ? 1 : 997)
				if (peek((uintptr_t)s->p + k, &c, 1) < 0 || c) {
					fprintf(stderr,
						"sequence: child: byte %zu of %p (%zu bytes, flags %#x) %s\n",
						k, (void *)s->p, s->size, s->flags,
						c ? "is not zero" : "cannot be read");
					bad = 1;
					break;
				}
		}
		_exit(bad);
	}
	free(plain);
	/* libFuzzer's timeout alarm interrupts the wait (EINTR): not the child's verdict */
	while ((rc = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
		;
	if (rc != pid)
		fail("waitpid for the forked child failed", NULL);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		fail("the forked child saw a secret, or not its own memory", NULL);
}

/* A thread's own packed secret and guarded buffer, made, used and freed; its exit hooks run. */
static void *worker(void *arg)
{
	size_t size = (uintptr_t)arg;
	unsigned char *a = secbuf_alloc_flags(size % SECBUF_PACKED_MAX + 1,
					      SECBUF_PACKED | SECBUF_BEST_EFFORT);
	unsigned char *b = secbuf_alloc_flags(size + 1, SECBUF_BEST_EFFORT);

	if (a) {
		memset(a, 0x5a, size % SECBUF_PACKED_MAX + 1);
		secbuf_free(a);
	}
	if (b) {
		memset(b, 0xa5, size + 1);
		if (b[size] != 0xa5)
			abort();
		secbuf_free(b);
	}
	return NULL;
}

static void do_thread(struct fuzz_in *in)
{
	pthread_t t;

	if (pthread_create(&t, NULL, worker, (void *)(uintptr_t)fuzz_below(in, 8192)) != 0 ||
	    pthread_join(t, NULL) != 0)
		abort();
}

/* A method this kernel does not give is not fuzzed: exit FUZZ_UNAVAILABLE, with why. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *forced = getenv("SECBUF_LOCK");

	(void)argc;
	(void)argv;
	trace = getenv("SEQUENCE_TRACE") != NULL;
	page = sysconf(_SC_PAGESIZE);
	method = secbuf_lock_method();
	if (method < 0) {
		fprintf(stderr, "sequence: SECBUF_LOCK=%s is not available here: %s\n",
			forced ? forced : "", strerror(errno));
		exit(FUZZ_UNAVAILABLE);
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	bool forked = false;

	for (int step = 0; step < STEPS && in.len; step++) {
		uint8_t op = fuzz_u8(&in);
		struct slot *s = &slots[fuzz_below(&in, SLOTS)];

		if (trace)
			fprintf(stderr, "step %d: op %d, buffer %d\n", step, op % 12,
				(int)(s - slots));

		if (op % 12 == 0 || op % 12 == 1) {
			if (!s->p)
				do_alloc(s, &in, op % 12 == 1);
			continue;
		}
		if (op % 12 == 8) {
			do_purge();
			continue;
		}
		if (op % 12 == 9) {
			if (!forked) /* one fork per input: each costs a copy of the address space */
				do_fork();
			forked = true;
			continue;
		}
		if (op % 12 == 10) {
			do_thread(&in);
			continue;
		}
		if (!s->p)
			continue;
		switch (op % 12) {
		case 2:
			do_free(s);
			continue;
		case 3:
			do_protect(s, &in);
			break;
		case 4:
		case 5:
			do_write(s, &in);
			break;
		case 6:
			do_read(s);
			break;
		case 7:
		case 11:
			break; /* size and stat: the checks below */
		}
		check(s);
	}
	for (int i = 0; i < SLOTS; i++)
		if (slots[i].p) {
			check(&slots[i]);
			do_free(&slots[i]);
		}
	return 0;
}
