/* Random 32-byte markers and where to find them.  Markers are written by
 * getrandom() straight into the memory under test, so no copy of a secret
 * exists anywhere else in the process (stack, stdio buffers). */
#ifndef PROOF_LIB_MARK_H
#define PROOF_LIB_MARK_H

#include <stddef.h>

#define MARK_LEN 32

/* Fill MARK_LEN bytes at p from getrandom(); 0 or -1/errno. */
int mark_fill(void *p);
/* "# KEEP: LABEL HEX" for the host scan; reads p byte by byte. */
void mark_keep(const char *label, const void *p);
/* Occurrences of the MARK_LEN bytes at mark within buf. */
size_t mark_count(const void *buf, size_t len, const void *mark);
/* Occurrences of the n bytes at needle within buf. */
size_t mark_count_n(const void *buf, size_t len, const void *needle, size_t n);
/* Read a whole file into a malloc'd buffer; NULL/errno on error. */
void *mark_slurp(const char *path, size_t *len);

#endif
