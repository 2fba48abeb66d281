/*
 * key-patterns: secbuf-audit --key's pattern builder and its search
 * (demo/audit/key/patterns.c: key_patterns_add(), key_patterns_index();
 * match.c: key_match(); stream.c: key_stream()), held against a naive
 * search of the plain bytes.
 *
 * Structure-aware: the fuzzer's bytes give up to 24 patterns (each its
 * order, length, anchor limit, an EC scalar's field width, its bytes), a
 * buffer to search, and copies of some patterns planted in it, so that
 * hits happen.  Two searches, each compared with the naive one, hit for
 * hit: key_match() over the buffer at an absolute base the fuzzer picks,
 * and, for one input in two, key_stream() over a file of the buffer, read
 * from an offset and in short reads the fuzzer picks (pread() is wrapped),
 * or, for one of those in four, over a sparse file that holds the buffer
 * across the first chunk boundary (KEY_CHUNK): a copy cut by a boundary
 * must be found, once, and whole where it is whole.  Every anchor's occurrence
 * must be one hit, and every hit an occurrence; a hit is whole exactly
 * when the whole encoding is there, and its form (big-endian padded to a
 * field, BIGNUM limbs of 64 or 32 bits) what the bytes around it say.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "../../demo/audit/key/key.h"

#define MAX_PATTERNS 24
#define MAX_LEN	     160 /* longer than KEY_LINE_MAX, and than the window */
#define BUF_MAX	     4096
#define MAX_HITS     4096

struct plain {
	uint8_t bytes[MAX_LEN];
	size_t len;
	int added; /* its index in the set, or -1 (refused or a duplicate) */
};

/*
 * pread() as stream.c calls it (linked with --wrap=pread): at most
 * read_max bytes at a time when it is set, as a read of /proc/PID/mem or
 * an interrupted one may return.
 */
ssize_t __real_pread(int fd, void *buf, size_t n, off_t off);
ssize_t __wrap_pread(int fd, void *buf, size_t n, off_t off);
static size_t read_max;

ssize_t __wrap_pread(int fd, void *buf, size_t n, off_t off)
{
	return __real_pread(fd, buf, read_max && n > read_max ? read_max : n, off);
}

struct seen {
	size_t n;
	struct key_hit h[MAX_HITS];
	int overflow;
};

static void on_hit(void *ctx, const struct key_hit *h)
{
	struct seen *s = ctx;

	if (s->n == MAX_HITS) {
		s->overflow = 1;
		return;
	}
	s->h[s->n++] = *h;
}

static int zeros(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

/* Where the anchor of a hit starts (absolute), from what the hit says. */
static uint64_t anchor_of(const struct key_patterns *ps, const struct key_hit *h)
{
	const struct key_pattern *p = &ps->p[h->pattern];

	if (!h->whole)
		return h->at;
	if (h->form == FORM_BE_FIXED)
		return h->at + (p->fixed - p->len) + p->at;
	return h->at + p->at;
}

/*
 * The naive verdict on pattern k's anchor at absolute P, in bytes mem
 * covering [lo, hi): whether the whole encoding is there, and its form.
 */
static void naive(const struct key_patterns *ps, const struct plain *pl, size_t k,
		  const uint8_t *mem, uint64_t lo, uint64_t hi, uint64_t P, int *whole,
		  enum key_form *form)
{
	static const enum key_form plain_form[] = { [ORDER_BE] = FORM_BE,
						    [ORDER_LE] = FORM_LE,
						    [ORDER_RAW] = FORM_RAW,
						    [ORDER_TEXT] = FORM_TEXT };
	const struct key_pattern *p = &ps->p[k];
	uint64_t s = P - p->at;
	size_t pad;

	*form = plain_form[p->order];
	*whole = P >= lo + p->at && s + p->len <= hi && !memcmp(mem + (s - lo), pl->bytes, p->len);
	if (!*whole)
		return;
	if (p->order == ORDER_BE && p->fixed > p->len) {
		pad = p->fixed - p->len;
		if (s >= lo + pad && zeros(mem + (s - lo) - pad, pad))
			*form = FORM_BE_FIXED;
	} else if (p->order == ORDER_LE) {
		pad = (8 - p->len % 8) % 8;
		if (s % 8 == 0 && s + p->len + pad <= hi && zeros(mem + (s - lo) + p->len, pad)) {
			*form = FORM_LIMBS64;
			return;
		}
		pad = (4 - p->len % 4) % 4;
		if (s % 4 == 0 && s + p->len + pad <= hi && zeros(mem + (s - lo) + p->len, pad))
			*form = FORM_LIMBS32;
	}
}

/*
 * Every hit in s against the naive search of mem ([lo, hi), anchors from
 * [from, to)): the same set of (pattern, anchor) pairs, each once, each
 * hit whole and of the form the naive search says.
 */
static void compare(const struct key_patterns *ps, const struct plain *pl, size_t npl,
		    const struct seen *s, const uint8_t *mem, uint64_t lo, uint64_t hi,
		    uint64_t from, uint64_t to)
{
	size_t expected = 0;

	if (s->overflow)
		return; /* more than the harness keeps: nothing to hold it against */
	for (size_t i = 0; i < s->n; i++) {
		const struct key_hit *h = &s->h[i];
		uint64_t P;
		int whole;
		enum key_form form;

		if (h->pattern >= ps->n)
			abort();
		P = anchor_of(ps, h);
		const struct key_pattern *p = &ps->p[h->pattern];
		const struct plain *q = NULL;

		for (size_t j = 0; j < npl; j++)
			if (pl[j].added == (int)h->pattern)
				q = &pl[j];
		if (!q || P < from || P >= to || P + p->alen > hi ||
		    memcmp(mem + (P - lo), q->bytes + p->at, p->alen))
			abort(); /* a hit that is no occurrence */
		naive(ps, q, h->pattern, mem, lo, hi, P, &whole, &form);
		if (whole != h->whole || form != h->form)
			abort();
		if (h->whole && h->span < p->len)
			abort();
		for (size_t j = 0; j < i; j++)
			if (s->h[j].pattern == h->pattern && anchor_of(ps, &s->h[j]) == P)
				abort(); /* the same copy twice */
	}
	/* Every occurrence a hit: count them. */
	for (size_t j = 0; j < npl; j++) {
		const struct key_pattern *p;

		if (pl[j].added < 0)
			continue;
		p = &ps->p[pl[j].added];
		for (uint64_t P = from; P < to && P + p->alen <= hi; P++)
			if (!memcmp(mem + (P - lo), pl[j].bytes + p->at, p->alen))
				expected++;
	}
	if (expected != s->n)
		abort(); /* an occurrence missed */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct plain pl[MAX_PATTERNS];
	static struct seen seen;
	static uint8_t buf[BUF_MAX];
	struct fuzz_in in = { data, size };
	struct key_patterns ps;
	uint8_t flags = fuzz_u8(&in);
	size_t npl = 1 + fuzz_below(&in, MAX_PATTERNS), have;
	uint32_t cut_at, read_len, plant_at[MAX_PATTERNS];
	uint64_t base;
	int zero_anchor = 0;

	if (key_patterns_init(&ps) < 0)
		return 0; /* no secbuf memory here */
	for (size_t i = 0; i < npl; i++) {
		struct key_pattern meta = { .key = fuzz_below(&in, 4) };
		uint8_t how = fuzz_u8(&in);
		const uint8_t *bytes;
		size_t n, before = ps.n, anchor_max;
		int rc;

		meta.order = (enum key_order)(how % 4);
		if (meta.order == ORDER_BE && how & 4)
			meta.fixed = 1 + fuzz_below(&in, MAX_LEN + 8); /* an EC scalar's field */
		meta.line = how >> 3;
		/* KEY_WINDOW at least: a longer value's anchor is its window (key.h). */
		anchor_max = how & 0x40 ? KEY_LINE_MAX :
			     how & 0x80 ? KEY_WINDOW + fuzz_below(&in, 64) :
					  KEY_WINDOW;
		bytes = fuzz_bytes(&in, MAX_LEN, &n);
		memcpy(pl[i].bytes, bytes, n);
		pl[i].len = n;
		pl[i].added = -1;
		errno = 0;
		rc = key_patterns_add(&ps, &meta, pl[i].bytes, n, anchor_max);
		if (rc < 0 && errno == ENOMEM)
			goto out; /* no memory here: the harness's, not the builder's */
		if (rc < 0 && (n >= 8 || errno != EINVAL))
			abort(); /* only a pattern shorter than 8 is refused */
		if (rc == 0 && ps.n == before + 1) {
			const struct key_pattern *p = &ps.p[before];

			if (p->len != n || p->alen < 8 || p->alen > n || p->at + p->alen > n ||
			    (n <= anchor_max && (p->alen != n || p->at)) ||
			    (n > anchor_max && p->alen != KEY_WINDOW))
				abort();
			pl[i].added = (int)before;
			if (zeros(pl[i].bytes + p->at, p->alen))
				zero_anchor = 1;
		} else if (rc == 0 && ps.n != before) {
			abort();
		}
		if (rc == 0 && ps.n == before) { /* a duplicate: the same bytes, order and length */
			int dup = 0;

			for (size_t j = 0; j < i; j++)
				if (pl[j].added >= 0 && ps.p[pl[j].added].order == meta.order &&
				    pl[j].len == n && !memcmp(pl[j].bytes, pl[i].bytes, n))
					dup = 1;
			if (!dup && n >= 8)
				abort();
		}
	}
	if (key_patterns_index(&ps) < 0)
		goto out;

	/*
	 * Where the search starts (an absolute base: where a process's
	 * mapping or a file's range would), where the chunk boundary cuts the
	 * buffer, and where each pattern is planted; then the buffer, the rest.
	 */
	base = fuzz_u64(&in) & ((1ULL << 47) - 1);
	cut_at = fuzz_u32(&in);
	read_len = fuzz_u32(&in);
	for (size_t i = 0; i < npl; i++)
		plant_at[i] = fuzz_u32(&in);
	have = in.len < BUF_MAX ? in.len : BUF_MAX;
	memcpy(buf, in.p, have);
	for (size_t i = 0; i < npl && have; i++) {
		size_t at = plant_at[i] % have, n = pl[i].len;

		if (flags >> (i % 8) & 1 && n) {
			n = at + n > have ? have - at : n; /* cut at the end: a partial copy */
			memcpy(buf + at, pl[i].bytes, n);
		}
	}
	memset(&seen, 0, sizeof(seen));
	key_match(&ps, buf, have, base, base, base + have, on_hit, &seen);
	compare(&ps, pl, npl, &seen, buf, base, base + have, base,
		have >= 7 ? base + have - 7 : base);

	/*
	 * The stream, for one input in two: either the buffer across the
	 * first chunk boundary (KEY_CHUNK) of a sparse file, or, three times
	 * in four, the buffer alone, read from an offset the fuzzer picks
	 * with short reads of a length it picks (pread() may return less than
	 * asked: each short read is a boundary, anywhere).
	 */
	if (flags & 1 && have) {
		struct key_reader r;
		int big = (flags & 0x60) == 0x60, fd = memfd_create("stream", MFD_CLOEXEC), rc;
		uint64_t off = big ? KEY_CHUNK - cut_at % have : 0, end = off + have, stop;
		uint64_t start = big ? 0 : cut_at % have;
		/* A big file's untouched pages: zeros, never written. */
		uint8_t *file = big ? calloc(1, end) : buf;

		if (!file || fd < 0 || ftruncate(fd, (off_t)end) < 0 ||
		    pwrite(fd, buf, have, (off_t)off) != (ssize_t)have)
			abort(); /* the harness's */
		if (big)
			memcpy(file + off, buf, have);
		/*
		 * A big file's zeros: each occurrence of an anchor not all
		 * zeros touches the buffer's bytes, so the naive search need
		 * only look from MAX_LEN before them.
		 */
		if ((!big || !zero_anchor) && key_reader_init(&r, &ps) == 0) {
			memset(&seen, 0, sizeof(seen));
			read_max = big ? 0 : 1 + read_len % (have + 8);
			rc = key_stream(&r, &ps, fd, start, end, &stop, on_hit, &seen);
			read_max = 0;
			if (rc != 0 || stop != end)
				abort();
			compare(&ps, pl, npl, &seen, file + start, start, end,
				big ? off - MAX_LEN : start, end);
			key_reader_free(&r);
		}
		close(fd);
		if (big)
			free(file);
	}
out:
	key_patterns_free(&ps);
	return 0;
}
