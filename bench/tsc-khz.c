// SPDX-License-Identifier: MIT
/*
 * Print this machine's TSC rate in kHz.  The Makefile bakes it into the
 * guest as bench-host-tsc-khz: a TCG guest's TSC runs at the host's rate,
 * and its own clocks may be too coarse to measure it (common.c).
 */
#include "common.h"

#include <stdio.h>

int main(void)
{
	double khz = tsc_khz();

	if (khz <= 0)
		die("no TSC on this machine");
	printf("%.0f\n", khz);
	return 0;
}
