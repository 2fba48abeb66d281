// SPDX-License-Identifier: MIT
/* Whether the kernel has the lock-on-fault series, by libsecbuf's proof. */
#include <unistd.h>
#include "kfacts.h"
#include "os/os.h"

bool lockonfault_series(void)
{
	return sb_prove_map_lockonfault(sysconf(_SC_PAGESIZE)) == 0;
}
