/*
 * The top of libsecbuf: init.c wires the parts together, secbuf.c and
 * sodium/ are the APIs on them.
 *
 * May use: every part (packed/, guarded/, process/, core/, os/).
 */
#ifndef SECBUF_INIT_H
#define SECBUF_INIT_H

#include "packed/packed.h"

/*
 * Before anything new is made with these flags: the fork and thread-exit
 * hooks once per process, the probe's answer, the key once per process
 * and per forked child, and unless best effort, the key's page locked
 * where the method locks.  0, or -1 with errno (no lock method, no key).
 */
SB_HIDDEN int sb_ready(unsigned flags);
/* Only the hooks, once per process: 0, or -1 with errno. */
SB_HIDDEN int sb_wired(void);

#endif
