/* SPDX-License-Identifier: MIT */
/*
 * The secure allocators the benchmarks race, behind one interface:
 * secbuf (buffers and packed secrets), libsodium's sodium_malloc,
 * OpenSSL's secure heap and plain malloc + mlock; and the syscall floor
 * of a large buffer, what any lock-on-fault allocator must at least do.
 * Each frees with the wipe its users get by default.
 */
#ifndef BENCH_ALLOC_H
#define BENCH_ALLOC_H

#include <stddef.h>

struct allocator {
	const char *name;
	size_t max_size;	/* the largest size it serves; 0: any */
	int large_only;		/* a syscall sequence per buffer: no small-secret jobs */
	/* One-time process set-up a long-running program pays once (probe,
	 * keys, vectors), done before the clock starts; or NULL. */
	void (*warmup)(size_t heap);
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
