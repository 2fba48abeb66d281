/* spawn.h - start and watch the programs under test. */
#ifndef DEMO_SPAWN_H
#define DEMO_SPAWN_H

#include <stddef.h>
#include <sys/types.h>

/* The directory holding the binaries under test (argv[1] of the test). */
extern const char *bindir;

/*
 * Start bindir/secbufd on socket with extra args (NULL-terminated) and env
 * entries "K=V" (NULL-terminated, may be NULL); stderr goes to errlog.
 * Waits until the socket answers; returns the pid, or -1.
 */
pid_t daemon_start(const char *socket, const char *const *args, const char *const *env, const char *errlog);

/* Wait up to timeout_ms for pid to exit; its wait status, or -1 on timeout. */
int wait_exit(pid_t pid, int timeout_ms);

/* SIGTERM, wait; the wait status (SIGKILL and -1 after 5 s). */
int daemon_stop(pid_t pid);

/* Run bindir/prog with args, capture stdout into out; the exit status, or -1. */
int run_capture(const char *prog, const char *const *args, char *out, size_t outsz);

/* A fresh directory under /tmp readable by everyone (for uid 65534 tests). */
char *test_dir(void);

#endif
