/*
 * Purging: every part that holds secrets registers how to wipe them (and,
 * for parts with guard pages, how to name the buffer an address belongs
 * to); a purge runs them all.  It runs from signal handlers, so it takes
 * no lock and calls only async-signal-safe functions; each part's purge
 * wipes what it can reach without waiting.
 *
 * The crash handlers purge, say what a fault hit (a guard page, a
 * protected or a freed buffer), put back the disposition they found and
 * raise the signal again, so core dumps and exit statuses are what they
 * would have been.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "process.h"

#define MAX_PARTS 4

static const struct sb_purge_hooks *parts[MAX_PARTS];
static unsigned int nparts;

static const int fatal[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
static struct sigaction before[sizeof(fatal) / sizeof(fatal[0])];
static int installed;
static int at_exit_registered;

int sb_purge_register(const struct sb_purge_hooks *h)
{
	if (nparts == MAX_PARTS) {
		errno = ENOSPC;
		return -1;
	}
	__atomic_store_n(&parts[nparts], h, __ATOMIC_RELEASE);
	__atomic_store_n(&nparts, nparts + 1, __ATOMIC_RELEASE);
	return 0;
}

void sb_purge(void)
{
	unsigned int i, n = __atomic_load_n(&nparts, __ATOMIC_ACQUIRE);

	for (i = 0; i < n; i++)
		parts[i]->purge();
}

/* A message without stdio or malloc: the heap may be what went wrong. */
struct line {
	char buf[320];
	size_t len;
};

static void put(struct line *l, const char *s)
{
	while (*s && l->len < sizeof(l->buf) - 1)
		l->buf[l->len++] = *s++;
}

static void put_num(struct line *l, unsigned long v, unsigned int base)
{
	char tmp[24];
	int n = 0;

	if (base == 16)
		put(l, "0x");
	do {
		tmp[n++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v && n < (int)sizeof(tmp));
	while (n && l->len < sizeof(l->buf) - 1)
		l->buf[l->len++] = tmp[--n];
}

/* What each kind of fault hit, before the buffer's address, and what it was, after its size. */
static const char *const fault_where[] = {
	[SB_FAULT_OVERFLOW] = ": in the guard page after the buffer ",
	[SB_FAULT_UNDERFLOW] = ": in the guard page before the buffer ",
	[SB_FAULT_PROTECTED] = ": in the buffer ",
	[SB_FAULT_FREED] = ": in the buffer ",
};
static const char *const fault_what[] = {
	[SB_FAULT_OVERFLOW] = " bytes): a buffer overflow",
	[SB_FAULT_UNDERFLOW] = " bytes): a buffer underflow",
	/* In parentheses: one string across two lines, not two array elements. */
	[SB_FAULT_PROTECTED] = (" bytes), read-only or no-access (secbuf_protect): a write to a "
				"read-only buffer, or a use of a no-access one"),
	[SB_FAULT_FREED] = " bytes), freed before: a use after free",
};

/*
 * Say which buffer addr belongs to and what the access did wrong, if one
 * part knows: the same diagnosis a debugger would give, which the purge
 * that ran first made impossible to get any other way.
 */
static void name_fault(int sig, const void *addr)
{
	struct sb_fault f;
	struct line l = { .len = 0 };
	unsigned int i, n = __atomic_load_n(&nparts, __ATOMIC_ACQUIRE);

	for (i = 0; i < n; i++)
		if (parts[i]->name_fault && parts[i]->name_fault(addr, &f))
			break;
	if (i == n)
		return;
	put(&l, "libsecbuf: ");
	put(&l, program_invocation_short_name);
	put(&l, "[");
	put_num(&l, (unsigned long)getpid(), 10);
	put(&l, sig == SIGBUS ? "]: SIGBUS at " : "]: SIGSEGV at ");
	put_num(&l, (unsigned long)addr, 16);
	put(&l, fault_where[f.kind]);
	put_num(&l, (unsigned long)f.user, 16);
	put(&l, " (");
	put_num(&l, f.size, 10);
	put(&l, fault_what[f.kind]);
	put(&l, "; every buffer was wiped\n");
	(void)!write(STDERR_FILENO, l.buf, l.len); /* dying either way */
}

static void on_crash(int sig, siginfo_t *si, void *uc)
{
	size_t i;
	int saved = errno;

	(void)uc;
	sb_purge();
	if ((sig == SIGSEGV || sig == SIGBUS) && si->si_code > 0) /* a fault, not a kill */
		name_fault(sig, si->si_addr);
	for (i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
		if (fatal[i] == sig)
			sigaction(sig, &before[i], NULL);
	/*
	 * Again, pending until the handler returns.  A sent signal (kill,
	 * raise, abort) needs it; so does a fault, which may not happen again
	 * on return: the purge made every buffer writable to wipe it, so a
	 * write to a read-only buffer would now go through and the program
	 * run on.
	 */
	raise(sig);
	errno = saved;
}

static void purge_at_exit(void)
{
	sb_purge();
}

int sb_purge_on_crash(int at_exit)
{
	struct sigaction sa;
	size_t i;

	if (at_exit && !__atomic_exchange_n(&at_exit_registered, 1, __ATOMIC_ACQ_REL) &&
	    atexit(purge_at_exit) != 0) {
		at_exit_registered = 0;
		errno = ENOMEM;
		return -1;
	}
	if (__atomic_exchange_n(&installed, 1, __ATOMIC_ACQ_REL))
		return 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_crash;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigfillset(&sa.sa_mask);
	for (i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++) {
		if (sigaction(fatal[i], &sa, &before[i]) < 0) {
			int err = errno;

			while (i-- > 0)
				sigaction(fatal[i], &before[i], NULL);
			installed = 0;
			errno = err;
			return -1;
		}
	}
	return 0;
}
