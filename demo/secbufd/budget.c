/* budget.c - the daemon's RLIMIT_MEMLOCK arithmetic and its advice. */
#include "budget.h"

#include <linux/capability.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <sodium.h>
#include <secbuf-seal.h>

#include "keystore.h"

#define SECBUF_ALIGN	16	/* libsecbuf's canary size and pointer alignment */

static size_t round_up(size_t n, size_t to)
{
	return (n + to - 1) / to * to;
}

size_t secbuf_charge(size_t size)
{
	return round_up(round_up(size, SECBUF_ALIGN) + SECBUF_ALIGN, sysconf(_SC_PAGESIZE));
}

/* CAP_IPC_LOCK in the effective set: the kernel then ignores RLIMIT_MEMLOCK. */
static int can_ignore_limit(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	/* Raw syscall: glibc has no wrapper and libcap is not needed for one bit. */
	if (syscall(SYS_capget, &hdr, data) < 0)
		return 0;
	return !!(data[CAP_IPC_LOCK / 32].effective & (1U << (CAP_IPC_LOCK % 32)));
}

/*
 * The sealed keys' share, whatever their number: libsecbuf-seal's prekey
 * (SECBUF_SEAL_PREKEY bytes as a secbuf buffer, in secret memory where the
 * kernel has it, which the kernels that charge secret memory at all charge
 * to the same limit), and, for the one operation the daemon runs at a
 * time, the open key's buffer and the page libsecbuf-seal derives the key
 * that opens it in (kept, locked, for the next open).  A key being made
 * takes the same two pages: the buffer it is made in, and the derived
 * key's.  test-budget runs 256 keys under exactly this.
 */
static size_t sealed_keys(void)
{
	size_t open =
		secbuf_charge(ks_secret_bytes(KD_KEY_ED25519) > ks_secret_bytes(KD_KEY_X25519) ?
				      ks_secret_bytes(KD_KEY_ED25519) :
				      ks_secret_bytes(KD_KEY_X25519));

	return secbuf_charge(SECBUF_SEAL_PREKEY) + open + sysconf(_SC_PAGESIZE);
}

void budget_compute(struct lock_budget *b, size_t bufsize)
{
	struct rlimit rl;

	b->buffer = secbuf_charge(bufsize);
	b->keys = sealed_keys();
	b->library = sysconf(_SC_PAGESIZE);
	b->need = b->buffer + b->keys + b->library;
	b->unlimited = can_ignore_limit();
	if (getrlimit(RLIMIT_MEMLOCK, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
		b->unlimited = 1;
	else
		b->limit = rl.rlim_cur;
}

int budget_fits(const struct lock_budget *b)
{
	return b->unlimited || b->need <= b->limit;
}

void budget_explain(const struct lock_budget *b, const char *what, int opt_out)
{
	unsigned long long need_kb = b->need >> 10;

	fprintf(stderr, "secbufd: %s: RLIMIT_MEMLOCK is %llu kB, %llu kB needed\n", what,
		b->limit >> 10, need_kb);
	fprintf(stderr,
		"secbufd: (working buffer %zu kB + %zu kB for the sealed keys, whatever their number: the prekey "
		"and one key open + libsecbuf's key page %zu kB; the kernel charges a buffer's whole length when it is "
		"locked, not the pages used)\n",
		b->buffer >> 10, b->keys >> 10, b->library >> 10);
	fprintf(stderr, "secbufd: fix: raise the limit (LimitMEMLOCK=%lluK in the systemd unit, or "
		"ulimit -l %llu in the shell that starts secbufd), or use a smaller --buffer%s\n",
		need_kb, need_kb, opt_out ? "; --allow-unlocked runs with secrets that may be swapped out" : "");
}
