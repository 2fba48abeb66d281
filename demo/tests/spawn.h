/* spawn.h - start and watch the programs under test. */
#ifndef DEMO_SPAWN_H
#define DEMO_SPAWN_H

#include <stddef.h>
#include <sys/types.h>

/* The directory holding the binaries under test (argv[1] of the test). */
extern const char *bindir;

/* Whom the daemon runs as: a uid (with gid = uid) and an RLIMIT_MEMLOCK. */
struct run_as {
	uid_t uid;
	unsigned long long memlock;	/* bytes, soft and hard */
	int no_secretmem;		/* memfd_secret answers ENOSYS (seccomp), as on
					   a kernel without secret memory */
};

/*
 * Start bindir/secbufd on socket with extra args (NULL-terminated) and env
 * entries "K=V" (NULL-terminated, may be NULL); stdout and stderr go to
 * errlog.  With as, as that uid under that RLIMIT_MEMLOCK.  Returns the
 * pid (not waiting for it), or -1.
 */
pid_t daemon_spawn(const char *socket, const char *const *args, const char *const *env, const char *errlog,
		   const struct run_as *as);

/*
 * Wait until the daemon answers on socket: 0; or -1 when it exited first
 * (its wait status in *status) or did not answer in 5 s (*status = -1).
 */
int daemon_ready(pid_t pid, const char *socket, int *status);

/* daemon_spawn() as the caller, then daemon_ready(): the pid, or -1. */
pid_t daemon_start(const char *socket, const char *const *args, const char *const *env, const char *errlog);

/* Wait up to timeout_ms for pid to exit; its wait status, or -1 on timeout. */
int wait_exit(pid_t pid, int timeout_ms);

/* SIGTERM, wait; the wait status (SIGKILL and -1 after 5 s). */
int daemon_stop(pid_t pid);

/* Run bindir/prog with args, capture stdout into out; the exit status, or -1. */
int run_capture(const char *prog, const char *const *args, char *out, size_t outsz);
/* The same with stderr captured into out too, as a user's terminal shows both. */
int run_capture_both(const char *prog, const char *const *args, char *out, size_t outsz);

/* A fresh directory under /tmp readable by everyone (for uid 65534 tests). */
char *test_dir(void);

/* The whole (text) file, NUL-terminated and cut to size - 1 bytes; "" if unreadable. */
char *read_text(const char *path, char *buf, size_t size);

#endif
