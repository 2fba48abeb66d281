/*
 * test-audit - secbuf-audit against mappings whose state the test controls,
 * and against running secbufd daemons, locked and not.  The test's own
 * "secret" mappings carry secbuf's VmFlags signature (MADV_DONTDUMP and
 * MADV_WIPEONFORK) and, where the kernel can name mappings, the name
 * [anon:secbuf]; on kernels without CONFIG_ANON_VMA_NAME (such as many
 * distribution kernels) the audit must find them by the signature alone.
 * usage: test-audit BINDIR   (prints TAP)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../secbufctl/client.h"
#include "kfacts.h"
#include "spawn.h"
#include "tap.h"

#ifndef PR_SET_VMA
#define PR_SET_VMA		0x53564d41
#define PR_SET_VMA_ANON_NAME	0
#endif
#ifndef MLOCK_ONFAULT
#define MLOCK_ONFAULT		0x01
#endif
#ifndef MADV_WIPEONFORK
#define MADV_WIPEONFORK		18
#endif

#define PAGES 8

static int names_work, have_python;
static char out[1 << 16], pidstr[16];

/* The raw syscall: under ASan mlock() is intercepted and does nothing. */
static int lock(void *p, size_t len)
{
	return syscall(SYS_mlock, p, len);
}

/* secbuf-audit with args (NULL-terminated); its exit status, stdout in out. */
static int audit(const char *const *args)
{
	return run_capture("secbuf-audit", args, out, sizeof(out));
}

/* A mapping as libsecbuf makes one: dd and wf, named where the kernel names. */
static void *secret_mapping(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	if (madvise(p, len, MADV_DONTDUMP) != 0 || madvise(p, len, MADV_WIPEONFORK) != 0 ||
	    (names_work && prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, p, len, "secbuf") != 0)) {
		munmap(p, len);
		return NULL;
	}
	return p;
}

/* The audit's output as TAP comments, for a failed check. */
static void show_out(void)
{
	char copy[sizeof(out)], *line, *save;

	snprintf(copy, sizeof(copy), "%s", out);
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		printf("# %s\n", line);
}

static long json_num(const char *key)
{
	char pat[64];
	const char *p = strstr(out, "\"summary\":{");

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = p ? strstr(p, pat) : NULL;
	return p ? strtol(p + strlen(pat), NULL, 10) : -1;
}

static int json_has(const char *text)
{
	return strstr(out, text) != NULL;
}

/*
 * Whether out parses as JSON (Python's strict parser: valid UTF-8, no raw
 * control characters) and the Python expression on it, d, holds.
 */
static int json_check(const char *expr)
{
	char cmd[1024];
	FILE *py;

	snprintf(cmd, sizeof(cmd), "python3 -c 'import json, sys\n"
		 "d = json.loads(sys.stdin.buffer.read())\nsys.exit(0 if (%s) else 1)'", expr);
	py = popen(cmd, "w");
	if (!py)
		return 0;
	fputs(out, py);
	return pclose(py) == 0;
}

static void test_mappings(void)
{
	static const char *const args[] = { "--json", pidstr, NULL };
	size_t len = PAGES * sysconf(_SC_PAGESIZE);
	char *unlocked, *locked, *onfault;
	int rc;

	unlocked = secret_mapping(len);
	if (!tap_check(unlocked != NULL, "an unlocked \"secret\" mapping of %d pages", PAGES))
		return;
	memset(unlocked, 0x5a, len);
	rc = audit((const char *const[]){ pidstr, NULL });
	tap_check(rc == 1 && strstr(out, "LEAK"), "audit exits 1 on the unlocked secret mapping (exit %d)", rc);
	rc = audit(args);
	tap_check(rc == 1 && json_num("mappings") == 1 && json_num("evictable") == PAGES && json_num("locked") == 0,
	       "--json: 1 mapping, its %d pages evictable, 0 locked (got %ld, %ld, %ld)", PAGES,
	       json_num("mappings"), json_num("evictable"), json_num("locked"));
	munmap(unlocked, len);

	locked = secret_mapping(len);
	if (!locked || lock(locked, len) != 0) {
		tap_check(0, "an mlocked secret mapping: %s", strerror(errno));
		return;
	}
	rc = audit(args);
	tap_check(rc == 0 && json_num("locked") == PAGES && json_num("swapped") == 0,
	       "audit exits 0 on an mlocked mapping, %d pages locked (exit %d, locked %ld)", PAGES, rc,
	       json_num("locked"));
	tap_check(json_has(names_work ? "\"selection\":\"name\"" : "\"selection\":\"vmflags\""),
	       "the JSON says how the mapping was selected: %s", names_work ? "name" : "vmflags");
	tap_check(geteuid() == 0 ? json_num("unevictable") >= 0 : json_has("\"unevictable\":null"),
	       "the summary has an unevictable count (%ld%s)", json_num("unevictable"),
	       geteuid() == 0 ? "" : ": null without kpageflags");
	munmap(locked, len);

	/* Lock on fault: only the two pages touched are resident, both locked. */
	onfault = secret_mapping(len);
	if (!onfault || syscall(SYS_mlock2, onfault, len, MLOCK_ONFAULT) != 0) {
		tap_check(0, "an mlock2(MLOCK_ONFAULT) secret mapping: %s", strerror(errno));
		return;
	}
	onfault[0] = 1;
	onfault[len - 1] = 1;
	rc = audit(args);
	tap_check(rc == 0 && json_num("resident") == 2 && json_num("locked") == 2,
	       "lock-on-fault mapping: clean, 2 of %d pages resident and locked (exit %d, %ld, %ld)", PAGES, rc,
	       json_num("resident"), json_num("locked"));
	munmap(onfault, len);
}

/* A mapping of secbuf's signature named NAME (secbuf:METHOD), locked on fault or not. */
static char *method_mapping(size_t len, const char *name, int onfault)
{
	char *p = secret_mapping(len);

	if (p && (prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, p, len, name) != 0 ||
		  (onfault && syscall(SYS_mlock2, p, len, MLOCK_ONFAULT) != 0))) {
		munmap(p, len);
		return NULL;
	}
	return p;
}

/*
 * libsecbuf names its data after the lock method: the audit prints it, and
 * holds a locking method against VmFlags lo.
 */
static void test_methods(void)
{
	static const char *const text[] = { pidstr, NULL };
	size_t len = PAGES * sysconf(_SC_PAGESIZE);
	char *p;
	int rc;

	if (!names_work) {
		tap_skip("this kernel cannot name anonymous mappings",
			 "the audit reads the lock method from [anon:secbuf:METHOD]");
		tap_skip("this kernel cannot name anonymous mappings",
			 "a locking method without VmFlags lo is a MISMATCH and a LEAK");
		return;
	}
	p = method_mapping(len, "secbuf:mlock2", 1);
	if (!tap_check(p != NULL, "a secret mapping named secbuf:mlock2, mlock2(MLOCK_ONFAULT)ed"))
		return;
	p[0] = 1;
	rc = audit(text);
	tap_check(rc == 0 &&
			  strstr(out,
				 "\nlock method: mlock2 on 1 mapping (named by libsecbuf); VmFlags "
				 "agree on 1 of 1: ok\n"),
		  "the audit reads the lock method from [anon:secbuf:METHOD] (exit %d): %.300s", rc,
		  out);
	munmap(p, len);

	/* Nothing resident, so nothing evictable: only the name says it should be locked. */
	p = method_mapping(len, "secbuf:maplockonfault", 0);
	if (!tap_check(p != NULL, "an unlocked secret mapping named secbuf:maplockonfault"))
		return;
	rc = audit(text);
	tap_check(rc == 1 && strstr(out, "VmFlags agree on 0 of 1: MISMATCH") &&
			  strstr(out, "LEAK: named maplockonfault, not locked"),
		  "a locking method without VmFlags lo is a MISMATCH and a LEAK (exit %d): %.300s",
		  rc, out);
	munmap(p, len);
}

/* Nothing selected is never clean. */
static void test_nothing(void)
{
	static const char *const text[] = { pidstr, NULL };
	static const char *const js[] = { "--json", pidstr, NULL };
	int rc;

	const char *says = "NOTHING AUDITED: this process holds no secbuf memory";
	const char *first;

	rc = audit(text);
	tap_check(rc == 3 && strstr(out, "NOTHING AUDITED") && !strstr(out, "CLEAN"),
	       "a process without secret mappings: exit 3, \"NOTHING AUDITED\", never CLEAN (exit %d)", rc);
	/* Said once, on one stream: stdout and stderr together hold it once. */
	rc = run_capture_both("secbuf-audit", text, out, sizeof(out));
	first = strstr(out, says);
	if (!tap_check(rc == 3 && first && !strstr(first + 1, says) &&
			       !strcasestr(out, "nothing audited: no mapping"),
		       "it says \"%s\" once, on stdout and stderr together (exit %d)", says, rc))
		show_out();
	rc = audit(js);
	tap_check(rc == 3 && json_has("\"clean\":null") && !json_has("\"clean\":true") &&
	       json_has("\"selection\":\"none\""),
	       "--json: exit 3 with \"clean\": null and \"selection\": \"none\" (exit %d)", rc);
}

/* Nothing of secbuf's, but locked memory (sodium_malloc()'s, say): the text says what --all would show. */
static void test_nothing_hint(void)
{
	static const char *const text[] = { pidstr, NULL };
	size_t len = 2 * sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char want[160];
	int rc;

	if (!tap_check(p != MAP_FAILED && lock(p, len) == 0,
		       "a locked mapping of 2 pages, not secbuf's"))
		return;
	rc = audit(text);
	snprintf(want, sizeof(want), "--all would audit 1 locked mapping (2 pages)");
	if (!tap_check(rc == 3 && strstr(out, want) && strstr(out, "secbuf-audit --all ") &&
			       !strstr(out, "before 1.0"),
		       "nothing of secbuf's: exit 3, and \"%s\" (exit %d)", want, rc))
		show_out();
	munmap(p, len);
}

/*
 * The text report's figures add up: in each row pages = untouched +
 * swapped + resident and resident = locked + evictable, the rows sum to
 * the summary, one legend line explains the VmFlags columns, one line
 * states the methods, and a LEAK row says why in its own figures.
 */
static void test_text_figures(void)
{
	static const char *const text[] = { pidstr, NULL };
	size_t len = PAGES * sysconf(_SC_PAGESIZE);
	unsigned long sum[7] = { 0 }, tot[9], v[7];
	char *onfault = secret_mapping(len), *unlocked = secret_mapping(len), *line, *save;
	size_t rows = 0, n = 0, bad = 0, methods = 0;
	int rc;

	if (!tap_check(onfault && unlocked && syscall(SYS_mlock2, onfault, len, MLOCK_ONFAULT) == 0,
		       "a lock-on-fault and an unlocked secret mapping"))
		return;
	onfault[0] = onfault[len - 1] = 1;
	memset(unlocked, 1, 3 * sysconf(_SC_PAGESIZE));
	rc = audit(text);
	memset(tot, 0xff, sizeof(tot));
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "lock method:", 12))
			methods++;
		if (sscanf(line,
			   "summary: pid %*d: %zu mappings, %lu pages = %lu untouched + %lu swapped + "
			   "%lu resident; %lu resident = %lu locked + %lu evictable + %lu zero",
			   &n, &tot[0], &tot[1], &tot[2], &tot[3], &tot[4], &tot[5], &tot[6],
			   &tot[7]) == 9)
			continue;
		if (sscanf(line,
			   "%*[0-9a-f]-%*[0-9a-f] %*s %*s %*s %*s %*s %lu %lu %lu %lu %lu %lu %lu",
			   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6]) != 7)
			continue;
		rows++;
		bad += v[0] != v[1] + v[2] + v[3] || v[3] != v[4] + v[5] + v[6];
		bad += v[5] && !strstr(line, "LEAK: ");
		for (int i = 0; i < 7; i++)
			sum[i] += v[i];
	}
	tap_check(
		rc == 1 && rows == n && rows >= 2 && !bad && tot[0] == sum[0] && tot[1] == sum[1] &&
			tot[2] == sum[2] && tot[3] == sum[3] && tot[4] == tot[3] &&
			tot[5] == sum[4] && tot[6] == sum[5] && tot[7] == sum[6] && sum[5] >= 3,
		"the text's figures add up: %zu rows of %zu, %zu bad, summary %lu = %lu + %lu + %lu, "
		"%lu = %lu + %lu + %lu; rows' evictable %lu (exit %d)",
		rows, n, bad, tot[0], tot[1], tot[2], tot[3], tot[4], tot[5], tot[6], tot[7],
		sum[5], rc);
	rc = audit(text);
	if (!tap_check(
		    methods == 1 &&
			    strstr(out, "VmFlags: lo locked, lf locked on fault, dd not in core "
					"dumps, wf wiped in forked children") &&
			    strstr(out, "LEAK: 3 evictable") && !strstr(out, "6.1"),
		    "one method line, one legend line for lo lf dd wf, a LEAK row with its reason"))
		show_out();
	munmap(onfault, len);
	munmap(unlocked, len);
}

/*
 * A read of an untouched page of a lock-on-fault mapping maps the kernel's
 * shared zero page there: never locked, holding nothing.  Anyone's read
 * does it (a scan through /proc/PID/mem too), so the audit must count it
 * apart, not as evictable: read every page, and the mapping is CLEAN with
 * every resident page the zero page (root reads kpageflags; without them a
 * page in a VM_LOCKED mapping counts as locked).  Then write every page:
 * each is the mapping's own now, and every one is locked.
 */
static void test_zero_page(void)
{
	static const char *const json[] = { "--json", pidstr, NULL };
	long page = sysconf(_SC_PAGESIZE);
	size_t len = PAGES * page;
	volatile char *p = secret_mapping(len);
	unsigned sum = 0;
	int rc, root = geteuid() == 0;

	if (!tap_check(p && syscall(SYS_mlock2, p, len, MLOCK_ONFAULT) == 0,
		       "a lock-on-fault secret mapping of %d pages", PAGES))
		return;
	for (size_t i = 0; i < len; i += page)
		sum += p[i];
	rc = audit(json);
	if (!tap_check(
		    rc == 0 && json_num("resident") == PAGES && json_num("evictable") == 0 &&
			    json_num("zero") == (root ? PAGES : 0) && sum == 0,
		    "read, never written: CLEAN (exit %d), %ld resident, %ld evictable, %ld zero "
		    "page (want %d)",
		    rc, json_num("resident"), json_num("evictable"), json_num("zero"),
		    root ? PAGES : 0))
		show_out();
	for (size_t i = 0; i < len; i += page)
		p[i] = 1;
	rc = audit(json);
	if (!tap_check(rc == 0 && json_num("resident") == PAGES && json_num("locked") == PAGES &&
			       json_num("evictable") == 0 && json_num("zero") == 0,
		       "then written: CLEAN (exit %d), %ld of %ld resident pages locked, %ld zero",
		       rc, json_num("locked"), json_num("resident"), json_num("zero")))
		show_out();
	munmap((void *)p, len);
}

/* --all finds locked mappings of a process that knows nothing of secbuf. */
static void test_all(void)
{
	size_t len = 3 * sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	static const char *const args[] = { "--all", "--json", pidstr, NULL };
	int rc;

	if (p == MAP_FAILED || lock(p, len) != 0) {
		tap_check(0, "mlock for the --all test: %s", strerror(errno));
		return;
	}
	rc = audit(args);
	tap_check(rc == 0 && json_num("mappings") >= 1 && json_num("locked") >= 3 && json_has("\"by\":\"locked\""),
	       "--all audits a plain mlocked mapping (exit %d, mappings %ld, locked %ld)", rc,
	       json_num("mappings"), json_num("locked"));
	munmap(p, len);
}

/* The whole address space, [vsyscall] (beyond pagemap's end) included. */
static void test_range_all(void)
{
	static const char *const args[] = { "--range", "0-ffffffffffffffff", pidstr, NULL };
	char err[4096];
	int fd[2], saved, rc;
	ssize_t n;

	/* Keep its stderr: the old failure was "cannot read smaps/pagemap: Success". */
	if (pipe(fd) < 0)
		return;
	saved = dup(2);
	dup2(fd[1], 2);
	close(fd[1]);
	rc = audit(args);
	dup2(saved, 2);
	close(saved);
	n = read(fd[0], err, sizeof(err) - 1);
	err[n > 0 ? n : 0] = '\0';
	close(fd[0]);
	tap_check((rc == 0 || rc == 1) && strstr(out, "[vsyscall]") && !strstr(err, "Success"),
	       "--range 0-ffffffffffffffff audits everything, [vsyscall] too (exit %d, stderr \"%.60s\")", rc, err);
}

static void test_errors(void)
{
	static const char *const missing[] = { "999999999", NULL };
	static const char *const jmissing[] = { "--json", "999999999", NULL };
	static const char *const jbad[] = { "--json", "--range", "zz", "1", NULL };
	int rc;

	rc = audit(missing);
	tap_check(rc == 2, "a missing process is an error, exit 2 (exit %d)", rc);
	rc = audit(jmissing);
	tap_check(rc == 2 && json_has("\"error\":\"pid 999999999: cannot read smaps or pagemap: no such process\"") &&
	       json_has("\"clean\":null"), "--json: the error as JSON on stdout, exit 2: %.100s", out);
	rc = audit(jbad);
	tap_check(rc == 2 && json_has("\"error\":\"bad --range zz"), "--json: a usage error as JSON too (exit %d)", rc);
	if (have_python)
		tap_check(json_check("d[\"clean\"] is None and \"error\" in d"), "the error JSON parses");
	else
		tap_skip("no python3", "the error JSON parses");
}

/* Any process name, even one that is not UTF-8, gives valid JSON. */
static void test_json_name(void)
{
	static const char name[] = "a\"b\\c\x01\xc3\xa9\xff\x7f";
	static const char *const args[] = { "--json", pidstr, NULL };
	char old[17] = "";
	int rc;

	prctl(PR_GET_NAME, old);
	if (prctl(PR_SET_NAME, name) != 0) {
		tap_check(0, "prctl(PR_SET_NAME): %s", strerror(errno));
		return;
	}
	rc = audit(args);
	prctl(PR_SET_NAME, old);
	if (!have_python) {
		tap_skip("no python3", "a process name with quote, backslash, control and non-UTF-8 bytes");
		return;
	}
	tap_check(rc == 3 && json_check("d[\"comm\"] == bytes.fromhex(\"6122625c6301e9ff7f\").decode(\"latin-1\")"),
	       "a name with a quote, a backslash, control bytes, UTF-8 and a non-UTF-8 byte: valid JSON, "
	       "escaped (\\u00XX) (exit %d)", rc);
}

/*
 * The daemon as deployed: found by name or by signature, an unlocked one
 * is a leak, and keys in secret memory are their own state, clean.
 */
static void test_daemons(void)
{
	static const char *const locked_args[] = { "--buffer", "4M", "--secret-memory=off", NULL };
	static const char *const unlocked_args[] = { "--buffer", "4M", "--allow-unlocked",
						     "--secret-memory=off", NULL };
	static const char *const secret_args[] = { "--buffer", "4M", "--secret-memory=required",
						   NULL };
	static const char *const unlocked_env[] = { "SECBUF_LOCK=none", NULL };
	char dir[] = "/tmp/secbuf-audit-test.XXXXXX", sock[128], log[128], pid[16];
	const char *args[] = { "--json", pid, NULL };
	uint8_t t = KD_KEY_ED25519;
	struct kd_field f[2] = { { &t, 1 }, { (const uint8_t *)"k", 1 } };
	struct kd_reply r;
	pid_t d;
	int fd, rc;

	if (!mkdtemp(dir))
		return;
	snprintf(sock, sizeof(sock), "%s/s.sock", dir);
	snprintf(log, sizeof(log), "%s/log", dir);
	for (int unlocked = 0; unlocked <= 2; unlocked++) {
		int secret = unlocked == 2;

		if (secret && !secretmem_works()) {
			tap_skip("memfd_secret fails here",
				 "audit of secbufd with its keys in secret memory");
			break;
		}
		d = secret   ? daemon_start(sock, secret_args, NULL, log) :
		    unlocked ? daemon_start(sock, unlocked_args, unlocked_env, log) :
			       daemon_start(sock, locked_args, NULL, log);
		fd = d > 0 ? kd_connect(sock) : -1;
		if (fd < 0 || kd_call(fd, KD_OP_KEYGEN, 2, f, &r) < 0 || r.status != KD_OK) {
			tap_check(0, "secbufd%s with one key for the audit",
				  secret   ? " (secret memory)" :
				  unlocked ? " (unlocked)" :
					     "");
		} else {
			kd_reply_free(&r);
			snprintf(pid, sizeof(pid), "%d", (int)d);
			rc = audit(args);
			if (secret)
				tap_check(
					rc == 0 && json_num("secret") >= 1 &&
						json_has("\"method\":\"secretmem\"") &&
						json_has("\"name\":\"/secretmem (deleted)\""),
					"audit of secbufd with its keys in secret memory: exit %d, the sealed "
					"keys' prekey in /secretmem, method secretmem, %ld pages secret, clean",
					rc, json_num("secret"));
			else if (!unlocked)
				/*
				 * The key is sealed, in ordinary memory; what is
				 * selected is the buffer, the page keys are opened
				 * with, libsecbuf's key page and the prekey (in
				 * secret memory where the kernel has it: the
				 * selection then says "+secretmem").
				 */
				tap_check(
					rc == 0 && json_num("mappings") >= 2 &&
						json_num("locked") >= 2 &&
						json_has(names_work ? "\"selection\":\"name" :
								      "\"selection\":\"vmflags"),
					"audit of secbufd, no options, finds its buffer and its sealed keys' pages by %s: "
					"exit %d, %ld mappings, %ld pages resident, %ld locked",
					names_work ? "name" : "VmFlags dd+wf alone", rc,
					json_num("mappings"), json_num("resident"),
					json_num("locked"));
			else
				/*
				 * libsecbuf locks its own key page under every
				 * method, and the sealed keys' prekey is in secret
				 * memory where the kernel has it (never evictable).
				 */
				tap_check(
					rc == 1 && json_num("mappings") >= 2 &&
						json_num("evictable") >= 2 &&
						json_num("locked") - json_num("secret") <= 1,
					"audit of an unlocked secbufd (SECBUF_LOCK=none) finds its memory and says LEAK: "
					"exit %d, %ld mappings, %ld evictable, %ld locked of which %ld secret",
					rc, json_num("mappings"), json_num("evictable"),
					json_num("locked"), json_num("secret"));
		}
		if (fd >= 0)
			close(fd);
		if (d > 0)
			daemon_stop(d);
	}
	unlink(log);
	rmdir(dir);
}

int main(int argc, char **argv)
{
	void *probe;

	if (argc != 2) {
		fprintf(stderr, "usage: test-audit BINDIR\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	bindir = argv[1];
	snprintf(pidstr, sizeof(pidstr), "%d", (int)getpid());
	probe = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	names_work = prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, probe, 4096, "secbuf") == 0;
	munmap(probe, 4096);
	if (!names_work)
		printf("# this kernel cannot name anonymous mappings (prctl: %s): the audit must select by VmFlags\n",
		       strerror(errno));
	have_python = system("python3 -c '' 2>/dev/null") == 0;
	test_nothing();
	test_nothing_hint();
	test_text_figures();
	test_zero_page();
	test_mappings();
	test_methods();
	test_all();
	test_range_all();
	test_errors();
	test_json_name();
	test_daemons();
	return tap_done();
}
