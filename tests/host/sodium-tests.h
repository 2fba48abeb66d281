/* The libsodium drop-in's test binary: its files' groups of tests. */
#ifndef SECBUF_SODIUM_TESTS_H
#define SECBUF_SODIUM_TESTS_H

#include "harness.h"

extern const struct sbt_test sodium_memory_tests[]; /* sodium-tests.c */

#endif
