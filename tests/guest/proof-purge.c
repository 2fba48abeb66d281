// SPDX-License-Identifier: MIT
/*
 * proof-purge: what a crashed process leaves in RAM.  Two children each
 * hold COPIES guarded buffers and COPIES packed secrets, all with one
 * random marker, and die of SIGABRT; the kernel frees their pages without
 * clearing them.  One child called secbuf_purge_on_crash(), the other (the
 * control) did not.  The host scans the guest's RAM, kept in a file
 * (qemu/run-guest --ram-file, qemu/scan-ram): the purged marker must be
 * nowhere, the control's somewhere, or the scan proves nothing.
 *
 * A marker goes from getrandom() into the first buffer and from there to
 * the others and, as hex text, to the console: no other copy of its bytes
 * exists in the guest.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "lib-mark.h"
#include "secbuf.h"
#include "tap.h"

#define COPIES 16

static void __attribute__((noreturn)) child(const char *group, int purge, unsigned flags)
{
	unsigned char *buf[2 * COPIES];
	int i;

	if (purge && secbuf_purge_on_crash(0) < 0)
		_exit(2);
	for (i = 0; i < 2 * COPIES; i++) {
		buf[i] = secbuf_alloc_flags(i < COPIES ? 4096 : MARK_LEN,
					    flags | (i < COPIES ? 0 : SECBUF_PACKED));
		if (!buf[i])
			_exit(3);
	}
	if (mark_fill(buf[0]) < 0)
		_exit(4);
	for (i = 1; i < 2 * COPIES; i++)
		memcpy(buf[i], buf[0], MARK_LEN);
	mark_keep(group, buf[0]);
	fflush(stdout);
	abort();
}

int main(void)
{
	static const struct {
		const char *group;
		int purge;
	} runs[] = { { "purged", 1 }, { "control", 0 } };
	int method = secbuf_lock_method(), status;
	const char *name = secbuf_lock_method_name(method);
	unsigned flags = method == SECBUF_LOCK_MLOCK ? SECBUF_POPULATE :
			 method == SECBUF_LOCK_NONE  ? SECBUF_BEST_EFFORT :
						       0;
	pid_t pid;

	if (!name)
		tap_bail("secbuf_lock_method: %s", strerror(errno));
	tap_subject("purge", name);
	tap_keep("expect purged absent");
	tap_keep("expect control present");
	tap_keep("summary crash-ram|%s|purged,control", name);
	for (size_t r = 0; r < sizeof(runs) / sizeof(runs[0]); r++) {
		fflush(stdout);
		pid = fork();
		if (pid < 0)
			tap_bail("fork: %s", strerror(errno));
		if (pid == 0)
			child(runs[r].group, runs[r].purge, flags);
		if (waitpid(pid, &status, 0) < 0)
			tap_bail("waitpid: %s", strerror(errno));
		tap_check(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT,
			  "%s child died of SIGABRT holding %d buffers and %d packed secrets "
			  "(status 0x%x; exit 2+: a step failed)",
			  runs[r].group, COPIES, COPIES, status);
	}
	return tap_done();
}
