/*
 * cloop.c - the C API's side of bench.py: the same loops as the Python
 * side, timed here, in the same process and on the same libsecbuf.so.
 * Loaded with ctypes; one call per round, so ctypes' cost is not counted.
 */
#include <string.h>
#include <time.h>

#include <secbuf.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Seconds for n secbuf_alloc_flags(size, flags) + secbuf_free pairs; -1 on failure. */
double cloop_pairs(size_t size, unsigned flags, long n)
{
	double t0 = now();

	for (long i = 0; i < n; i++) {
		void *p = secbuf_alloc_flags(size, flags);

		if (!p)
			return -1;
		secbuf_free(p);
	}
	return now() - t0;
}

/* Seconds for n rounds of alloc(size), a write to its first 4 KiB, free. */
double cloop_touch(size_t size, long n)
{
	double t0 = now();

	for (long i = 0; i < n; i++) {
		unsigned char *p = secbuf_alloc(size);

		if (!p)
			return -1;
		memset(p, 1, 4096);
		secbuf_free(p);
	}
	return now() - t0;
}
