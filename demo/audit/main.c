/*
 * secbuf-audit - is any secret memory of a process, or of the host, swapped
 * out or evictable?
 * Exit status: 0 clean, 1 a secret page is swapped or evictable, 2 error,
 * 3 nothing audited (no mapping was selected).
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "escape.h"
#include "key/key.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: secbuf-audit [--all | --range START-END] [--json] PID\n"
		"       secbuf-audit --host [--format=text|json|prometheus] [--output FILE]\n"
		"       secbuf-audit --key FILE... [--secret-file FILE...] [--json] [PID...] [--self]\n"
		"                    [--core FILE...] [--image FILE...] [--swap [AREA...]]\n"
		"  Audits the secbuf memory of PID: pages resident, locked, swapped (pagemap)\n"
		"  and unevictable (/proc/kpageflags, root only).  Secbuf memory is every mapping\n"
		"  named " SECBUF_VMA_NAME " or with VmFlags dd and wf (secbuf's signature, which\n"
		"  also finds it on kernels without CONFIG_ANON_VMA_NAME).\n"
		"  --all        also every locked (VmFlags lo) mapping, e.g. of a program using mlock\n"
		"  --range A-B  audit the hex address range A-B instead\n"
		"  --json       one JSON object on stdout, errors included (= --format=json)\n"
		"  --host       audit every process it may read: secbuf memory, memfd_secret memory\n"
		"               and other anonymous memory that is locked and DONTDUMP, by process,\n"
		"               kind and state; processes that vanish or cannot be read are counted\n"
		"  --format=prometheus  (--host) node_exporter's textfile format, summed by name\n"
		"  --output FILE        (--host) replace FILE whole (temporary file, then rename)\n"
		"  --key FILE   where is this private key (PEM or DER: PKCS#8, PKCS#1, SEC1; RSA,\n"
		"               EC, Ed25519, X25519)?  Searches the present pages of each PID,\n"
		"               never faulting one in, and says each copy's mapping, encoding and\n"
		"               class: protected (locked and not dumpable) or exposed\n"
		"  --secret-file FILE  the same for the raw bytes of FILE (16 bytes or more)\n"
		"  --self       (--key) the audit's own memory: it holds its patterns masked\n"
		"  --core FILE, --image FILE  (--key) search a core dump, or any file, whole\n"
		"  --swap       (--key) search every active swap area, and each AREA named after it\n"
		"  -h, --help     this text;  -V, --version  print the version\n"
		"Exit status: 0 clean, 1 a page is swapped or evictable, 2 error, 3 nothing audited.\n"
		"With --key: 0 every copy protected or none found, 1 a copy exposed, 2 error (a key\n"
		"that cannot be read, a target that cannot be opened), 3 nothing audited.\n"
		"A page counts as locked when kpageflags says MLOCKED or UNEVICTABLE (the kernel\n"
		"sets the unevictable bit through a per-CPU batch, so it can lag mlock); without\n"
		"kpageflags, when it is resident in a VM_LOCKED mapping.\n");
}

static const char *conflict(const struct audit_opts *o, int host, int pids)
{
	if (host && pids)
		return "--host audits every process: no PID";
	if (host && o->sel.all)
		return "--all is for one PID (--host finds secbuf memory and likely secrets)";
	if (host && o->sel.have_range)
		return "--range is for one PID: address ranges differ between processes";
	if (!host && o->format == FORMAT_PROM)
		return "--format=prometheus needs --host: its series are summed by process name "
		       "over the host, never one PID";
	if (!host && o->output)
		return "--output needs --host";
	if (!host && pids != 1)
		return pids ? "one PID only" : "which PID? (or --host)";
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = { { "all", no_argument, NULL, 'a' },
					      { "range", required_argument, NULL, 'r' },
					      { "json", no_argument, NULL, 'j' },
					      { "format", required_argument, NULL, 'f' },
					      { "host", no_argument, NULL, 'H' },
					      { "output", required_argument, NULL, 'o' },
					      { "key", required_argument, NULL, 'k' },
					      { "secret-file", required_argument, NULL, 's' },
					      { "core", required_argument, NULL, 'c' },
					      { "image", required_argument, NULL, 'i' },
					      { "swap", no_argument, NULL, 'w' },
					      { "self", no_argument, NULL, 'S' },
					      { "help", no_argument, NULL, 'h' },
					      { "version", no_argument, NULL, 'V' },
					      { 0 } };
	struct audit_opts o = { 0 };
	static struct key_args keys; /* static: still reachable on every early return */
	char bad[300] = "", *end, c;
	const char *why;
	int opt, host = 0;
	long pid;

	opterr = 0; /* reported below, as JSON too when --json comes later */
	while ((opt = getopt_long(argc, argv, ":hV", opts, NULL)) != -1) {
		switch (opt) {
		case 'a':
			o.sel.all = 1;
			break;
		case 'r':
			if (sscanf(optarg, "%lx-%lx%c", &o.sel.range_start, &o.sel.range_end, &c) !=
				    2 ||
			    o.sel.range_start >= o.sel.range_end)
				snprintf(bad, sizeof(bad),
					 "bad --range %s (hex START-END, START below END)", optarg);
			o.sel.have_range = 1;
			break;
		case 'j':
			o.format = FORMAT_JSON;
			break;
		case 'f':
			if (!strcmp(optarg, "text"))
				o.format = FORMAT_TEXT;
			else if (!strcmp(optarg, "json"))
				o.format = FORMAT_JSON;
			else if (!strcmp(optarg, "prometheus"))
				o.format = FORMAT_PROM;
			else
				snprintf(bad, sizeof(bad),
					 "bad --format %s (text, json or prometheus)", optarg);
			break;
		case 'H':
			host = 1;
			break;
		case 'o':
			o.output = optarg;
			break;
		case 'k':
		case 's':
		case 'c':
		case 'i':
			if (key_arg_add(&keys,
					opt == 'k' ? KEY_ARG_KEY :
					opt == 's' ? KEY_ARG_SECRET :
					opt == 'c' ? KEY_ARG_CORE :
						     KEY_ARG_IMAGE,
					optarg) < 0)
				snprintf(bad, sizeof(bad), "out of memory");
			break;
		case 'w':
			keys.swap = 1;
			break;
		case 'S':
			keys.self = 1;
			break;
		case 'h':
			usage(stdout);
			return EXIT_CLEAN;
		case 'V':
			printf("secbuf-audit (secbuf) %s\n", SECBUF_VERSION);
			return EXIT_CLEAN;
		case ':':
			snprintf(bad, sizeof(bad), "%s needs an argument", argv[optind - 1]);
			break;
		default:
			if (optopt)
				snprintf(bad, sizeof(bad), "unknown option -%c", optopt);
			else
				snprintf(bad, sizeof(bad), "unknown option %s", argv[optind - 1]);
			break;
		}
	}
	if (!bad[0] &&
	    (why = key_args_given(&keys) ? key_args_conflict(&keys, &o, host, argc - optind) :
					   conflict(&o, host, argc - optind)))
		snprintf(bad, sizeof(bad), "%s", why);
	/* One line that names the fault, not the whole usage. */
	if (bad[0])
		return audit_error(&o, host ? -1 : 0, "%s; try secbuf-audit --help", bad);
	if (host)
		return audit_host(&o);
	if (key_args_given(&keys)) {
		int rc = audit_key(&keys, &o, argc - optind, argv + optind);

		free(keys.list);
		return rc;
	}
	errno = 0;
	pid = strtol(argv[optind], &end, 10);
	if (errno || *end || pid <= 0 || pid > 0x7fffffff)
		return audit_error(&o, 0, "bad PID %s", argv[optind]);
	return audit_one(pid, &o);
}
