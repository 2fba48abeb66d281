/*
 * Which public call each thread is in.  libsecbuf is not async-signal-safe
 * (it takes locks and calls malloc); a call from a signal handler that
 * interrupted another call in the same thread would deadlock on the
 * registry lock, or worse, so it aborts with a message instead.
 */
#include "core.h"

__thread const char *sb_running_call __attribute__((tls_model("initial-exec")));

void sb_reentered(const char *fn)
{
	sb_misuse("%s() called while %s() was running in the same thread (from a "
		  "signal handler?): libsecbuf functions are not async-signal-safe",
		  fn, sb_running_call);
}
