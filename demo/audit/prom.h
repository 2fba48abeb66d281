/*
 * prom.h - a host scan in the Prometheus text exposition format, for
 * node_exporter's textfile collector.
 */
#ifndef SECBUF_AUDIT_PROM_H
#define SECBUF_AUDIT_PROM_H

#include <stdio.h>

#include "host.h"

/*
 * The scan errors counted so far, by outcome (HOST_VANISHED and up), as
 * the file path written last time says; zeros if it is missing or says
 * nothing of them.  The file is the counter's only memory between runs.
 */
void prom_carry(const char *path, unsigned long long errors[HOST_OUTCOMES]);

/*
 * Print hs to f: the secbuf_audit_* series of the scan, with errors[] plus
 * this scan's added to the counter, and the secbuf_secret_* series of the
 * processes holding secret memory, summed by name (comm).  ok is whether
 * the scan ran to its end; without it only the secbuf_audit_* series are
 * printed.
 */
void prom_print(FILE *f, struct host_scan *hs, int ok,
		const unsigned long long errors[HOST_OUTCOMES]);

#endif
