/*
 * run.c - secbuf-audit --key: the keys loaded (every one, or an error
 * that names its file), the targets searched one after another, each key's
 * verdict, the exit status.  Nothing is read from standard input and
 * nothing is asked: a key that needs a passphrase is an error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../audit.h"
#include "load.h"

static struct key_item *new_key(struct key_run *run)
{
	struct key_item *grown = realloc(run->keys, (run->nkeys + 1) * sizeof(*grown));

	if (!grown)
		return NULL;
	run->keys = grown;
	memset(&run->keys[run->nkeys], 0, sizeof(run->keys[0]));
	return &run->keys[run->nkeys++];
}

static int add_file(struct key_item *k, const char *path, const char *form)
{
	const char **files = realloc(k->files, (k->nfiles + 1) * sizeof(*files));
	char(*forms)[32];

	if (!files)
		return -1;
	k->files = files;
	forms = realloc(k->forms, (k->nfiles + 1) * sizeof(*forms));
	if (!forms)
		return -1;
	k->forms = forms;
	k->files[k->nfiles] = path;
	snprintf(k->forms[k->nfiles++], sizeof(k->forms[0]), "%s", form);
	return 0;
}

/*
 * One --key or --secret-file: read, decoded, named, its patterns added.
 * The same key in a second file (PEM and DER, PKCS#8 and PKCS#1) is one
 * key: only that file's PEM lines are new.  0, or -1 with why.
 */
static int load(struct key_run *run, const struct key_arg *arg, char *why, size_t wsize)
{
	struct key_item *k = NULL;
	EVP_PKEY *pkey = NULL;
	struct key_blob b;
	char form[32], name[80];
	size_t i = run->nkeys;
	int rc = -1;

	if (key_file_read(arg->path, &b, why, wsize) < 0)
		return -1;
	if (arg->kind == KEY_ARG_SECRET) {
		/*
		 * Named by its file: a hash of a secret of unknown strength (a
		 * password) would let whoever reads the report test guesses,
		 * and a salted one would name it differently in every run.
		 */
		if (!(k = new_key(run)) || add_file(k, arg->path, "raw") < 0)
			goto nomem;
		k->secret = 1;
		snprintf(k->name, sizeof(k->name), "%s", arg->path);
		rc = key_secret_add(&run->ps, (unsigned)i, &b, k, why, wsize);
		goto out;
	}
	if (key_decode(&b, &pkey, form, sizeof(form), why, wsize) < 0)
		goto out;
	if (key_fingerprint(pkey, name, sizeof(name)) < 0) {
		snprintf(why, wsize, "libcrypto cannot encode its public key");
		goto out;
	}
	for (i = 0; i < run->nkeys; i++)
		if (!run->keys[i].secret && !strcmp(run->keys[i].name, name))
			break;
	if (i == run->nkeys) {
		if (!(k = new_key(run)))
			goto nomem;
		snprintf(k->name, sizeof(k->name), "%s", name);
	}
	k = &run->keys[i];
	if (add_file(k, arg->path, form) < 0)
		goto nomem;
	rc = key_values_add(&run->ps, (unsigned)i, pkey, &b, k, k->nfiles == 1, why, wsize);
	goto out;
nomem:
	snprintf(why, wsize, "out of memory");
out:
	EVP_PKEY_free(pkey); /* its private parts are cleared as they are freed */
	key_blob_free(&b);
	return rc;
}

static struct key_target *add_target(struct key_run *run, size_t *cap, enum key_target_kind kind)
{
	struct key_target *t;

	if (run->ntargets == *cap) {
		size_t more = *cap ? *cap * 2 : 8;
		struct key_target *grown = realloc(run->targets, more * sizeof(*grown));

		if (!grown)
			return NULL;
		run->targets = grown;
		*cap = more;
	}
	t = &run->targets[run->ntargets++];
	memset(t, 0, sizeof(*t));
	t->kind = kind;
	return t;
}

/* A decimal pid, or 0. */
static pid_t pid_of(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	return errno || *end || end == s || v <= 0 || v > 0x7fffffff ? 0 : (pid_t)v;
}

/*
 * The targets, in this order: the PIDs, --self, the --core and --image
 * files as given, the active swap areas, the areas named.  0, or -1 with
 * why.
 */
static int plan(struct key_run *run, const struct key_args *a, int argc, char **argv, char *why,
		size_t wsize)
{
	size_t cap = 0;
	struct key_target *t;

	for (int i = 0; i < argc; i++) {
		pid_t pid = pid_of(argv[i]);

		if (!pid && !a->swap) {
			snprintf(why, wsize,
				 "%s: not a PID; a file is --core FILE or --image FILE, "
				 "a swap area --swap AREA",
				 argv[i]);
			return -1;
		}
		if (!pid)
			continue;
		if (!(t = add_target(run, &cap, TARGET_PID)))
			goto nomem;
		t->pid = pid;
	}
	if (a->self) {
		if (!(t = add_target(run, &cap, TARGET_SELF)))
			goto nomem;
		t->pid = getpid();
	}
	for (size_t i = 0; i < a->n; i++) {
		enum key_arg_kind kind = a->list[i].kind;

		if (kind != KEY_ARG_CORE && kind != KEY_ARG_IMAGE)
			continue;
		if (!(t = add_target(run, &cap, kind == KEY_ARG_CORE ? TARGET_CORE : TARGET_IMAGE)))
			goto nomem;
		t->path = a->list[i].path;
	}
	if (a->swap && key_swap_areas(&run->targets, &run->ntargets, &cap) < 0) {
		snprintf(why, wsize, "/proc/swaps: %s", strerror(errno));
		return -1;
	}
	for (int i = 0; a->swap && i < argc; i++) {
		if (pid_of(argv[i]))
			continue;
		if (!(t = add_target(run, &cap, TARGET_SWAP)))
			goto nomem;
		t->path = argv[i];
	}
	for (size_t i = 0; i < run->ntargets; i++)
		if (!(run->targets[i].copies = calloc(run->nkeys ? run->nkeys : 1,
						      sizeof(run->targets[i].copies[0]))))
			goto nomem;
	return 0;
nomem:
	snprintf(why, wsize, "out of memory");
	return -1;
}

/* Not audited, and it counts as an error: a target the caller named. */
static int failed(const struct key_target *t)
{
	return t->error[0] && !t->listed;
}

static int exit_status(const struct key_run *run)
{
	size_t audited = 0, errors = 0;

	for (size_t k = 0; k < run->nkeys; k++)
		if (key_overall(run, k) == VERDICT_EXPOSED)
			return EXIT_LEAK; /* a copy found stands, whatever else failed */
	for (size_t i = 0; i < run->ntargets; i++) {
		errors += failed(&run->targets[i]);
		audited += !run->targets[i].error[0];
	}
	return errors ? EXIT_ERROR : audited ? EXIT_CLEAN : EXIT_NOTHING;
}

static void free_run(struct key_run *run)
{
	for (size_t i = 0; i < run->ntargets; i++) {
		struct key_target *t = &run->targets[i];

		free(t->own);
		free(t->maps);
		free(t->unread);
		free(t->hits);
		free(t->copies);
	}
	free(run->targets);
	for (size_t k = 0; k < run->nkeys; k++) {
		free(run->keys[k].files);
		free(run->keys[k].forms);
	}
	free(run->keys);
	key_patterns_free(&run->ps); /* wipes the masked patterns and the mask */
}

int audit_key(const struct key_args *a, const struct audit_opts *o, int argc, char **argv)
{
	struct key_run run = { .json = o->format == FORMAT_JSON };
	struct key_reader reader = { 0 };
	char why[400] = "", label[300];
	int rc;

	/* Before libcrypto allocates anything: afterwards it cannot be changed. */
	if (key_crypto_init() < 0)
		return audit_error(o, 0,
				   "--key: libcrypto allocated before its frees could be "
				   "made to wipe");
	if (key_patterns_init(&run.ps) < 0)
		return audit_error(o, 0, "--key: no secbuf memory for the patterns: %s",
				   strerror(errno));
	for (size_t i = 0; i < a->n; i++) {
		if (a->list[i].kind != KEY_ARG_KEY && a->list[i].kind != KEY_ARG_SECRET)
			continue;
		if (load(&run, &a->list[i], why, sizeof(why)) < 0) {
			free_run(&run);
			key_scrub_stack();
			return audit_error(o, 0, "%s: %s", a->list[i].path, why);
		}
	}
	/* What libcrypto's functions left in their frames, gone before any scan. */
	key_scrub_stack();
	if (key_patterns_index(&run.ps) < 0 || plan(&run, a, argc, argv, why, sizeof(why)) < 0 ||
	    key_reader_init(&reader, &run.ps) < 0) {
		if (!strcmp(why, ""))
			snprintf(why, sizeof(why), "out of memory: %s", strerror(errno));
		free_run(&run);
		return audit_error(o, 0, "%s", why);
	}
	for (size_t i = 0; i < run.ntargets; i++) {
		struct key_target *t = &run.targets[i];

		if (t->kind == TARGET_PID || t->kind == TARGET_SELF)
			key_scan_pid(t, &reader, &run.ps);
		else
			key_scan_file(t, &reader, &run.ps);
		/* Besides the report: an error of its own on stderr, as every mode's. */
		if (failed(t))
			fprintf(stderr, "secbuf-audit: %s: %s\n",
				key_target_label(t, label, sizeof(label)), t->error);
	}
	key_reader_free(&reader);
	rc = key_report(&run) < 0 ? audit_error(o, 0, "stdout: %s", strerror(errno)) :
				    exit_status(&run);
	free_run(&run);
	return rc;
}
