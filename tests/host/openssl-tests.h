/* The OpenSSL drop-in's test binary: its files' groups, modes and helpers. */
#ifndef SECBUF_OPENSSL_TESTS_H
#define SECBUF_OPENSSL_TESTS_H

#include <stddef.h>
#include "harness.h"

extern const struct sbt_test openssl_contract_tests[]; /* openssl-tests.c */
extern const struct sbt_test openssl_fault_tests[];    /* openssl-fault-tests.c */
extern const struct sbt_test openssl_fork_tests[];     /* openssl-fork-tests.c */

/* Modes, each a fresh process: exit code = failed step (openssl-fault-tests.c). */
int ossl_foreign_free_main(void);
int ossl_foreign_in_block_main(void);
int ossl_foreign_large_chunks_main(void);
int ossl_refused_main(void);
int ossl_strict_main(void);
int ossl_packed_main(void);

/* Whether p lies in a mapping left out of core dumps (VmFlags dd), as all of libsecbuf's. */
int ossl_dontdump(const void *p);
/* Whether anything is mapped at p. */
int ossl_mapped(const void *p);
/* Whether the lock method in effect locks lazily allocated memory. */
int ossl_locks(void);
/* Occurrences of needle in s. */
int ossl_count(const char *s, const char *needle);

#endif
