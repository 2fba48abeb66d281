/*
 * libsecbuf-openssl.so and pre-fork servers: a key made in the parent
 * signs in a forked child, whose copy of a secret page it writes is
 * locked again, also when other threads of the parent use the secure
 * heap at the moment of fork().  And the test binary's main.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include "openssl-tests.h"

static const unsigned char msg_to_sign[] = "a request a worker answers";

static int sign(EVP_PKEY *k, unsigned char *sig, size_t *len)
{
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	int ok = c && EVP_DigestSignInit(c, NULL, EVP_sha256(), NULL, k) == 1 &&
		 EVP_DigestSign(c, sig, len, msg_to_sign, sizeof(msg_to_sign)) == 1;

	EVP_MD_CTX_free(c);
	return ok;
}

static int verify(EVP_PKEY *k, const unsigned char *sig, size_t len)
{
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	int ok = c && EVP_DigestVerifyInit(c, NULL, EVP_sha256(), NULL, k) == 1 &&
		 EVP_DigestVerify(c, sig, len, msg_to_sign, sizeof(msg_to_sign)) == 1;

	EVP_MD_CTX_free(c);
	return ok;
}

/*
 * In a worker: sign with the parent's key (through a pipe to the parent,
 * which verifies it), and write a secret page of the parent's: it must
 * hold it locked.  Exit code = failed step.
 */
static int worker(EVP_PKEY *k, unsigned char *secret, int out)
{
	unsigned char sig[512];
	size_t len = sizeof(sig);
	char vmflags[160];
	long rss, locked;

	if (!sign(k, sig, &len))
		return 20;
	if (write(out, &len, sizeof(len)) != sizeof(len) || write(out, sig, len) != (ssize_t)len)
		return 21;
	if (secret[0] != 0x42)
		return 22; /* zeros: the parent's secure memory was not inherited */
	memset(secret, 0x24, 64);
	if (sbt_smaps(secret, &rss, &locked, vmflags, sizeof(vmflags)) < 0)
		return 23;
	if (ossl_locks() && (!strstr(vmflags, " lo ") || locked <= 0))
		return 24;
	OPENSSL_secure_clear_free(secret, 64);
	return 0;
}

/* Fork a worker; the parent checks its signature and exit. 0, or the failed step. */
static int run_worker(EVP_PKEY *k, unsigned char *secret)
{
	unsigned char sig[512];
	int fd[2], st;
	size_t len = 0;
	pid_t pid;

	if (pipe(fd) < 0)
		return 10;
	pid = fork();
	if (pid == 0) {
		signal(SIGALRM, SIG_DFL);
		alarm(20);
		_exit(worker(k, secret, fd[1]));
	}
	close(fd[1]);
	if (pid < 0 || read(fd[0], &len, sizeof(len)) != sizeof(len) || len > sizeof(sig) ||
	    read(fd[0], sig, len) != (ssize_t)len)
		len = 0;
	close(fd[0]);
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return 11;
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		return WIFEXITED(st) ? WEXITSTATUS(st) : 12;
	return len && verify(k, sig, len) ? 0 : 13;
}

static EVP_PKEY *parent_key(int i)
{
	return i % 2 ? EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256") :
		       EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048);
}

START_TEST(worker_signs_with_the_parents_key)
{
	char fails[512] = "";
	int i, step;

	sbt_need_method(); /* a forced method the kernel lacks fails every call */
	for (i = 0; i < 2; i++) {
		EVP_PKEY *k = parent_key(i);
		unsigned char *secret = OPENSSL_secure_malloc(64);

		ck_assert_ptr_nonnull(k);
		ck_assert_ptr_nonnull(secret);
		memset(secret, 0x42, 64);
		step = run_worker(k, secret);
		if (step)
			sbt_note(fails, sizeof(fails), "%s key: step %d failed", i ? "EC" : "RSA",
				 step);
		ck_assert_int_eq(secret[0], 0x42); /* the worker's write was its own */
		OPENSSL_secure_free(secret);
		EVP_PKEY_free(k);
	}
	ck_assert_msg(!*fails, "%s", fails);
}
END_TEST

static int stop;

/* Another thread of the server: keys and secure buffers come and go. */
static void *churn(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		size_t n = 1 + rand_r(&seed) % 3000;
		unsigned char *p = OPENSSL_secure_malloc(n);
		EVP_PKEY *k =
			rand_r(&seed) % 64 ? NULL : EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");

		if (!p)
			return (void *)1;
		memset(p, 0x5a, n);
		OPENSSL_secure_free(p);
		EVP_PKEY_free(k);
	}
	return NULL;
}

START_TEST(workers_forked_from_a_multithreaded_parent)
{
	EVP_PKEY *k = parent_key(1);
	unsigned char *secret = OPENSSL_secure_malloc(64);
	pthread_t t[3];
	int i, step = 0;
	void *ret;

	sbt_need_method(); /* a forced method the kernel lacks fails every call */
	ck_assert_ptr_nonnull(k);
	ck_assert_ptr_nonnull(secret);
	memset(secret, 0x42, 64);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, churn, (void *)(uintptr_t)(i + 1)), 0);
	for (i = 0; i < 20 && !step; i++)
		step = run_worker(k, secret);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(pthread_join(t[i], &ret), 0);
		ck_assert_ptr_null(ret);
	}
	ck_assert_msg(!step, "a worker failed at step %d", step);
	OPENSSL_secure_free(secret);
	EVP_PKEY_free(k);
}
END_TEST

const struct sbt_test openssl_fork_tests[] = {
	SBT(worker_signs_with_the_parents_key),
	SBT(workers_forked_from_a_multithreaded_parent),
	SBT_END,
};

int main(int argc, char **argv)
{
	static const struct sbt_test *const groups[] = {
		openssl_contract_tests,
		openssl_fault_tests,
		openssl_fork_tests,
		NULL,
	};
	static const struct sbt_mode modes[] = {
		{ "--foreign-free", ossl_foreign_free_main },
		{ "--foreign-in-block", ossl_foreign_in_block_main },
		{ "--foreign-large-chunks", ossl_foreign_large_chunks_main },
		{ "--refused", ossl_refused_main },
		{ "--strict", ossl_strict_main },
		{ "--packed", ossl_packed_main },
		{ NULL, NULL },
	};

	return sbt_main(argc, argv, "libsecbuf-openssl", groups, modes);
}
