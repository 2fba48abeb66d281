/* libsecbuf-seal's test binary: its files' groups of tests and modes. */
#ifndef SECBUF_SEAL_TESTS_H
#define SECBUF_SEAL_TESTS_H

#include <stddef.h>
#include <secbuf-seal.h>
#include "harness.h"

#define MiB (1024UL * 1024)

/* Seal flags under which opens succeed with the method in effect (best effort under none). */
unsigned seal_flags(unsigned flags);
/* The same in a mode's fresh process, where the harness has not probed. */
unsigned seal_flags_fresh(unsigned flags);
/* The bytes of test secret i from offset (a multiple of 64): made again to check. */
void seal_pattern(unsigned char *p, size_t n, size_t i, size_t offset);

extern const struct sbt_test seal_api_tests[];	  /* seal-tests.c */
extern const struct sbt_test seal_memory_tests[]; /* seal-memory-tests.c */

/* Modes run in a fresh process (seal-memory-tests.c). */
int seal_fallback_main(void);
int seal_room_main(void);
int seal_budget_main(void);
int seal_partial_read_main(void);

#endif
