/*
 * abi.h - the lock-on-fault series' user ABI, for installed headers that
 * predate it.  The one copy of these numbers: libsecbuf and libkfacts
 * (and through it the tests, demo and benchmarks) include it.
 */
#ifndef SECBUF_ABI_H
#define SECBUF_ABI_H

#include <sys/mman.h>
#include <sys/syscall.h>

#ifndef MAP_LOCKONFAULT
#define MAP_LOCKONFAULT 0x400000
#endif
#ifndef MLOCK_ONFAULT
#define MLOCK_ONFAULT 0x01
#endif
#ifndef MLOCK_LOCKED
#define MLOCK_LOCKED 0x02
#endif
/* Kept far above mainline's numbers by the series (syscall_64.tbl). */
#ifndef __NR_munlock2
#define __NR_munlock2	 900
#define __NR_munlockall2 901
#endif

#endif
