// SPDX-License-Identifier: MIT
/* The per-CPU mlock batch: one CPU, and one way to drain it (kfacts.h). */
#define _GNU_SOURCE
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>
#include "kfacts.h"

int mlock_pin_cpu(void)
{
	cpu_set_t set;
	int cpu = sched_getcpu();

	if (cpu < 0)
		return -1;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

int mlock_drain(void)
{
	size_t len = (size_t)sysconf(_SC_PAGESIZE);
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return -1;
	*(volatile char *)p = 1;
	/* unmapping drains this CPU's LRU batches, mlock's among them */
	return munmap(p, len);
}
