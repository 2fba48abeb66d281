// SPDX-License-Identifier: MIT
/*
 * proof-fork: a child of a process holding secbuf secrets, buffers and
 * packed ones (SECBUF_PACKED), reads zeros from both (MADV_WIPEONFORK) and
 * their mappings are not locked, while the same child still reads the
 * parent's ordinary malloc memory (the control, which shows that the
 * child's read would see inherited data).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "lib-mark.h"
#include "kfacts.h"
#include "tap.h"
#include "secbuf.h"

#define NPAGES 16
#define NPACKED 64

struct child_view {
	size_t secbuf_nonzero, control_nonzero, packed_nonzero;
	int smaps_ok, packed_smaps_ok;
	struct smaps_vma v, pv;
};

static size_t nonzero(const unsigned char *p, size_t len)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++)
		n += p[i] != 0;
	return n;
}

int main(void)
{
	size_t page = sysconf(_SC_PAGESIZE), len = NPAGES * page;
	const char *name = secbuf_lock_method_name(secbuf_lock_method());
	unsigned char *sec, *ctl, *packed[NPACKED];
	struct child_view cv;
	struct smaps_vma pv;
	int fds[2], status;
	bool ok = true, pok = true;
	char label[64];
	pid_t pid;

	tap_subject("fork", getenv("SECBUF_LOCK"));
	if (!name)
		tap_bail("secbuf_lock_method: %s", strerror(errno));
	tap_subject("fork", name);
	snprintf(label, sizeof(label), "%s packed", name);
	sec = secbuf_alloc(len);
	ctl = malloc(len);
	if (!sec || !ctl)
		tap_bail("alloc: %s", strerror(errno));
	for (int i = 0; i < NPACKED; i++)
		if (!(packed[i] = secbuf_alloc_flags(MARK_LEN, SECBUF_PACKED)) || mark_fill(packed[i]) < 0)
			tap_bail("packed secret %d: %s", i, strerror(errno));
	for (size_t off = 0; off + MARK_LEN <= len; off += page / 2)
		if (mark_fill(sec + off) < 0 || mark_fill(ctl + off) < 0)
			tap_bail("getrandom: %s", strerror(errno));
	if (smaps_find(0, sec, &pv) < 0 || pipe(fds) < 0)
		tap_bail("setup: %s", strerror(errno));
	tap_check(vmflag_has(&pv, "lo") == (secbuf_lock_method() != SECBUF_LOCK_NONE) &&
		  (pv.locked_kb > 0) == vmflag_has(&pv, "lo"),
		  "parent mapping as locked as its method says (Locked %ld kB):%s", pv.locked_kb, pv.vmflags);

	pid = fork();
	if (pid < 0)
		tap_bail("fork: %s", strerror(errno));
	if (pid == 0) {
		memset(&cv, 0, sizeof(cv));
		cv.smaps_ok = smaps_find(0, sec, &cv.v) == 0;
		if (cv.smaps_ok)
			cv.secbuf_nonzero = nonzero(sec, len);
		cv.control_nonzero = nonzero(ctl, len);
		cv.packed_smaps_ok = smaps_find(0, packed[0], &cv.pv) == 0;
		for (int i = 0; cv.packed_smaps_ok && i < NPACKED; i++)
			cv.packed_nonzero += nonzero(packed[i], MARK_LEN);
		_exit(write(fds[1], &cv, sizeof(cv)) == sizeof(cv) ? 0 : 1);
	}
	close(fds[1]);
	if (read(fds[0], &cv, sizeof(cv)) != sizeof(cv))
		memset(&cv, 0, sizeof(cv));
	if (waitpid(pid, &status, 0) < 0)
		tap_bail("waitpid: %s", strerror(errno));
	ok &= tap_check(WIFEXITED(status) && WEXITSTATUS(status) == 0 && cv.smaps_ok,
			"child exited 0 and still has the mapping (wipe-on-fork, not dont-fork)");
	ok &= tap_check(cv.smaps_ok && cv.secbuf_nonzero == 0,
			"child reads zeros from the secbuf: %zu of %zu bytes non-zero", cv.secbuf_nonzero, len);
	ok &= tap_check(cv.smaps_ok && !vmflag_has(&cv.v, "lo") && !vmflag_has(&cv.v, "lf") &&
			cv.v.locked_kb == 0,
			"child mapping not locked (Locked %ld kB):%s", cv.v.locked_kb, cv.v.vmflags);
	ok &= tap_check(cv.control_nonzero > 0,
			"control: child reads the parent's malloc data (%zu of %zu bytes non-zero)",
			cv.control_nonzero, len);
	ok &= tap_check(nonzero(sec, len) > 0, "parent's secbuf still holds its secrets");
	pok &= tap_check(cv.packed_smaps_ok && cv.packed_nonzero == 0,
			 "child reads zeros from %d packed secrets: %zu of %d bytes non-zero", NPACKED,
			 cv.packed_nonzero, NPACKED * MARK_LEN);
	pok &= tap_check(cv.packed_smaps_ok && !vmflag_has(&cv.pv, "lo") && cv.pv.locked_kb == 0,
			 "child's packed slab not locked (Locked %ld kB):%s", cv.pv.locked_kb,
			 cv.pv.vmflags);
	pok &= tap_check(cv.control_nonzero > 0 && nonzero(packed[NPACKED - 1], MARK_LEN) > 0,
			 "control and the parent's packed secrets still non-zero");

	tap_report("fork %s: child sees %zu non-zero secbuf bytes (control %zu of %zu), child Locked %ld kB",
		   name, cv.secbuf_nonzero, cv.control_nonzero, len, cv.v.locked_kb);
	tap_summary("fork", name, ok, "child: secbuf %zu non-zero bytes, control %zu, Locked %ld kB",
		    cv.secbuf_nonzero, cv.control_nonzero, cv.v.locked_kb);
	tap_summary("fork", label, pok, "child: %d packed secrets %zu non-zero bytes, control %zu, slab Locked %ld kB",
		    NPACKED, cv.packed_nonzero, cv.control_nonzero, cv.pv.locked_kb);
	for (int i = 0; i < NPACKED; i++)
		secbuf_free(packed[i]);
	secbuf_free(sec);
	free(ctl);
	return tap_done();
}
