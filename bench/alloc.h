/* SPDX-License-Identifier: MIT */
/*
 * The secure allocators the benchmarks race, behind one interface:
 * secbuf, libsodium's sodium_malloc, OpenSSL's secure heap and plain
 * malloc + mlock.  Each frees with the wipe its users get by default.
 */
#ifndef BENCH_ALLOC_H
#define BENCH_ALLOC_H

#include <stddef.h>

struct allocator {
	const char *name;
	/* Prepare for buffers of up to heap bytes in total (OpenSSL sizes its
	 * arena from it); 0 on success, -1 with a message on stderr. */
	int (*setup)(size_t heap);
	void *(*alloc)(size_t size);
	void (*free)(void *ptr, size_t size);
	void (*teardown)(void);
	/* How it keeps pages locked, for the tables. */
	const char *(*method)(void);
};

extern const struct allocator allocators[];
extern const int nallocators;

#endif
