// SPDX-License-Identifier: MIT
/*
 * proof-core: a child holding a secbuf secret, a packed secbuf secret
 * (SECBUF_PACKED), secrets of the secret tier (SECBUF_SECRET, buffer and
 * packed), a raw memfd_secret secret and a control secret in malloc memory
 * dies of SIGABRT with core dumps on.  The core file must hold the control
 * marker (so the search works) and none of the others, nor
 * libsecbuf's key (the first 16 bytes of its page,
 * [anon:secbuf-key]), which would let a reader of the core predict canaries.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "lib-mark.h"
#include "kfacts.h"
#include "tap.h"
#include "secbuf.h"

#define CORE_PATTERN	"/tmp/proof-core.%p"
#define KEY_LEN		16
#define PATTERN_FILE	"/proc/sys/kernel/core_pattern"

enum { M_SECBUF, M_PACKED, M_SECRETMEM, M_SECRET, M_SECRET_PACKED, M_CONTROL, M_COUNT };
static const char *const mark_name[M_COUNT] = {
	"secbuf", "packed", "memfd_secret", "secret tier", "secret packed", "control",
};

static int is_key_page(const struct smaps_vma *v, void *arg)
{
	if (strcmp(v->perms, "rw-p") || strcmp(v->name, "[anon:secbuf-key]"))
		return 0;
	*(unsigned long *)arg = v->start;
	return 1;
}

/* libsecbuf's key page, found by its name (its guards have it too); NULL if none. */
static const unsigned char *key_page(void)
{
	unsigned long start = 0;

	smaps_each(0, is_key_page, &start);
	return (const unsigned char *)start;
}

/* The child: secrets go from getrandom() to their memory and from there
 * straight into the pipe, so the parent learns them without a copy in the
 * child; so does the key, from its page.  The secbuf allocation drew it. */
static void __attribute__((noreturn)) child(int fd, int method)
{
	struct rlimit unlimited = { RLIM_INFINITY, RLIM_INFINITY };
	unsigned flags = method == SECBUF_LOCK_MLOCK ? SECBUF_POPULATE :
			 method == SECBUF_LOCK_NONE ? SECBUF_BEST_EFFORT : 0;
	unsigned char *m[M_COUNT];

	if (setrlimit(RLIMIT_CORE, &unlimited) < 0)
		_exit(2);
	m[M_SECBUF] = secbuf_alloc_flags(4096, flags);
	m[M_PACKED] = secbuf_alloc_flags(MARK_LEN, flags | SECBUF_PACKED);
	m[M_SECRETMEM] = secretmem_map(4096);
	m[M_SECRET] = secbuf_alloc_flags(4096, SECBUF_SECRET);
	m[M_SECRET_PACKED] = secbuf_alloc_flags(MARK_LEN, SECBUF_SECRET | SECBUF_PACKED);
	m[M_CONTROL] = malloc(4096);
	for (int i = 0; i < M_COUNT; i++) {
		if (!m[i] || m[i] == MAP_FAILED || mark_fill(m[i]) < 0 ||
		    write(fd, m[i], MARK_LEN) != MARK_LEN)
			_exit(3 + i);
	}
	if (!key_page() || write(fd, key_page(), KEY_LEN) != KEY_LEN)
		_exit(3 + M_COUNT);
	close(fd);
	abort();
}

static int write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

int main(void)
{
	int method = secbuf_lock_method();
	const char *name = secbuf_lock_method_name(method);
	unsigned char marks[M_COUNT][MARK_LEN], key[KEY_LEN];
	size_t hits[M_COUNT], key_hits, core_len = 0;
	char old_pattern[256] = "core", core_path[64], label[64];
	int fds[2], status;
	unsigned char *core;
	bool ok = true;
	FILE *f;
	pid_t pid;

	tap_subject("core", getenv("SECBUF_LOCK"));
	if (!name)
		tap_bail("secbuf_lock_method: %s", strerror(errno));
	tap_subject("core", name);
	f = fopen(PATTERN_FILE, "re");
	if (f) {
		if (fgets(old_pattern, sizeof(old_pattern), f))
			old_pattern[strcspn(old_pattern, "\n")] = '\0';
		fclose(f);
	}
	if (write_text(PATTERN_FILE, CORE_PATTERN) < 0 || pipe(fds) < 0)
		tap_bail("core_pattern: %s", strerror(errno));

	pid = fork();
	if (pid < 0)
		tap_bail("fork: %s", strerror(errno));
	if (pid == 0) {
		close(fds[0]);
		child(fds[1], method);
	}
	close(fds[1]);
	for (int i = 0; i < M_COUNT; i++)
		if (read(fds[0], marks[i], MARK_LEN) != MARK_LEN)
			memset(marks[i], 0, MARK_LEN);
	if (read(fds[0], key, KEY_LEN) != KEY_LEN)
		memset(key, 0, KEY_LEN);
	if (waitpid(pid, &status, 0) < 0)
		tap_bail("waitpid: %s", strerror(errno));
	write_text(PATTERN_FILE, old_pattern);
	if (!tap_check(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT && WCOREDUMP(status),
		       "child died of SIGABRT and dumped core (status 0x%x)", status))
		tap_bail(
			"no core to search (exit %d: 3+i = allocating marker i failed, 9: no key page)",
			WIFEXITED(status) ? WEXITSTATUS(status) : -1);

	snprintf(core_path, sizeof(core_path), "/tmp/proof-core.%d", (int)pid);
	core = mark_slurp(core_path, &core_len);
	if (!tap_check(core != NULL, "core file %s read (%zu kB)", core_path, core_len / 1024))
		tap_bail("%s: %s", core_path, strerror(errno));
	for (int i = 0; i < M_COUNT; i++)
		hits[i] = mark_count(core, core_len, marks[i]);
	key_hits = mark_count_n(core, core_len, key, KEY_LEN);
	ok &= tap_check(hits[M_CONTROL] > 0, "control marker found in the core (%zu hits): the search works",
			hits[M_CONTROL]);
	ok &= tap_check(hits[M_SECBUF] == 0, "secbuf marker not in the core (%zu hits)", hits[M_SECBUF]);
	tap_check(hits[M_PACKED] == 0, "packed secbuf marker not in the core (%zu hits)",
		  hits[M_PACKED]);
	ok &= tap_check(memcmp(key, (unsigned char[KEY_LEN]){ 0 }, KEY_LEN) != 0,
			"libsecbuf key read from [anon:secbuf-key] (not all zero)");
	ok &= tap_check(key_hits == 0, "libsecbuf key not in the core (%zu hits)", key_hits);
	tap_check(hits[M_SECRETMEM] == 0, "memfd_secret marker not in the core (%zu hits)",
		  hits[M_SECRETMEM]);
	tap_check(
		hits[M_SECRET] == 0 && hits[M_SECRET_PACKED] == 0,
		"secret tier markers (SECBUF_SECRET, buffer and packed) not in the core (%zu, %zu hits)",
		hits[M_SECRET], hits[M_SECRET_PACKED]);
	free(core);
	unlink(core_path);

	for (int i = 0; i < M_COUNT; i++)
		tap_report("core %s: %s marker %zu hits in a %zu kB core", name, mark_name[i], hits[i],
			   core_len / 1024);
	tap_report("core %s: libsecbuf key %zu hits", name, key_hits);
	tap_summary("core", name, ok, "secbuf %zu hits, key %zu hits, control %zu hits (%zu kB core)",
		    hits[M_SECBUF], key_hits, hits[M_CONTROL], core_len / 1024);
	snprintf(label, sizeof(label), "%s packed", name);
	tap_summary("core", label, hits[M_PACKED] == 0 && hits[M_CONTROL] > 0,
		    "packed %zu hits, control %zu hits (%zu kB core)", hits[M_PACKED],
		    hits[M_CONTROL], core_len / 1024);
	tap_summary("core", "memfd_secret", hits[M_SECRETMEM] == 0 && hits[M_CONTROL] > 0,
		    "memfd_secret %zu hits, control %zu hits", hits[M_SECRETMEM], hits[M_CONTROL]);
	tap_summary("core", "SECBUF_SECRET",
		    hits[M_SECRET] == 0 && hits[M_SECRET_PACKED] == 0 && hits[M_CONTROL] > 0,
		    "buffer %zu hits, packed %zu hits, control %zu hits", hits[M_SECRET],
		    hits[M_SECRET_PACKED], hits[M_CONTROL]);
	return tap_done();
}
