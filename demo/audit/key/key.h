/*
 * key.h - secbuf-audit --key: has a private key (or any secret) reached
 * plain memory, a core dump or swap?  What the files of the mode share:
 *
 *   args.c     the options main.c collects, and those that clash
 *   run.c      the mode: keys in, every target scanned, verdicts, exit status
 *   infile.c   a key or secret file read into secbuf memory (never stdin)
 *   decode.c   libcrypto: the file to an EVP_PKEY and its public name,
 *              every allocation wiped on free (load.h, with infile.c, values.c)
 *   values.c   a key's private values and their encodings, as patterns
 *   patterns.c the masked patterns in secbuf memory, their hash table
 *   match.c    one pass over a buffer for every pattern; what each hit is
 *   stream.c   a range of a file (or of /proc/PID/mem) in overlapping chunks
 *   target.c   one target's record: hits, copies per key and class, unread ranges
 *   proc.c     a process: its present pages, never a page faulted in
 *   file.c     a core file, an image or a swap area: the whole of it
 *   swap.c     the active swap areas, from /proc/swaps
 *   report.c   the text and JSON
 *   absent.c   the mode in a build without libcrypto (the static guest's)
 *
 * What the audit derives from a key lives in secbuf memory only, XORed
 * with a random mask: it compares masked bytes, so that scanning (its own
 * memory too) never makes a plain copy of what it looks for.
 */
#ifndef SECBUF_AUDIT_KEY_H
#define SECBUF_AUDIT_KEY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct audit_opts;

/* The options of the mode, in command-line order (main.c collects them). */
enum key_arg_kind { KEY_ARG_KEY, KEY_ARG_SECRET, KEY_ARG_CORE, KEY_ARG_IMAGE };

struct key_arg {
	enum key_arg_kind kind;
	const char *path;
};

struct key_args {
	struct key_arg *list;
	size_t n;
	int swap; /* --swap: the active swap areas, and the operands that are not PIDs */
	int self; /* --self: the audit's own memory */
};

/* Add --key, --secret-file, --core or --image PATH: 0, or -1 (ENOMEM). */
int key_arg_add(struct key_args *a, enum key_arg_kind kind, const char *path);
/* Whether any option of the mode was given. */
int key_args_given(const struct key_args *a);
/* What clashes with the mode (pids: the operands), in words; NULL if nothing. */
const char *key_args_conflict(const struct key_args *a, const struct audit_opts *o, int host,
			      int operands);
/* The mode: its exit status (audit.h's enum audit_exit). */
int audit_key(const struct key_args *a, const struct audit_opts *o, int argc, char **argv);

#define KEY_FILE_MAX	(1 << 20) /* a key or secret file larger than this is no key */
#define KEY_SECRET_MIN	16	  /* shorter secrets match by chance */
#define KEY_VALUE_MAX	4096	  /* the longest encoding: RSA-32768's d; the mask's length */
#define KEY_WINDOW	32	  /* bytes from the middle of a longer value searched first */
#define KEY_LINE_MAX	80	  /* PEM lines up to this long are searched whole */
#define KEY_PRIVATE_MIN 8	  /* a PEM line counts when it encodes this many private bytes */
#define KEY_CHUNK	(1 << 20) /* bytes read at a time */

/* How a pattern's bytes stand for its value. */
enum key_order {
	ORDER_BE,   /* big-endian magnitude, as DER holds it */
	ORDER_LE,   /* little-endian: OpenSSL's BIGNUM limbs on this machine */
	ORDER_RAW,  /* a raw key (Ed25519, X25519, Ed448, X448) or a secret file's bytes */
	ORDER_TEXT, /* one base64 line of the PEM file */
};

/*
 * One pattern.  The anchor is what the single pass looks for: the whole
 * encoding when it is short, else KEY_WINDOW bytes from its middle; a hit
 * on the anchor is then held against the whole encoding around it.
 */
struct key_pattern {
	unsigned key;	/* index into the run's keys */
	char value[40]; /* "RSA d", "EC scalar", "Ed25519 seed", "secret" */
	enum key_order order;
	unsigned line;	   /* ORDER_TEXT: the line's number in the PEM block, from 1 */
	size_t len;	   /* the whole encoding's bytes */
	size_t fixed;	   /* ORDER_BE of an EC scalar: the field's width in bytes, else 0 */
	size_t at, alen;   /* the anchor: bytes [at, at + alen) of the encoding */
	size_t whole_off;  /* the masked encoding, in the store */
	size_t anchor_off; /* the masked anchor, in the store */
	uint64_t head;	   /* the anchor's first 8 bytes, masked */
};

/*
 * One 8-byte window of a pattern's anchor, at offset off in it, masked
 * with the mask's first 8 bytes (as memory is at every probe): an entry of
 * the hash table.  Each anchor is entered at offsets 0 to stride - 1, so
 * that a probe every stride bytes meets every copy.
 */
struct key_probe {
	uint64_t w;
	unsigned k, off; /* the pattern, the window's offset in its anchor */
	int next;	 /* the next probe of its bucket, or -1 */
};

struct key_patterns {
	struct key_pattern *p; /* plain heap: names and lengths, nothing secret */
	size_t n, cap;
	uint8_t *mask;	/* secbuf: KEY_VALUE_MAX random bytes */
	uint8_t *store; /* secbuf: every encoding and anchor, masked */
	size_t used, size;
	struct key_probe *probe; /* every pattern's windows: the hash table's entries */
	size_t stride;		 /* bytes between probes: the shortest anchor less 7 */
	int *heads;		 /* the hash table: first probe of each bucket, or -1 */
	uint64_t *filter;	 /* a bit per bucket, set when it holds a probe */
	unsigned bits;
	size_t back, fwd; /* bytes a hit's check needs before and after its anchor */
};

/* Mask drawn, store empty: 0, or -1 with errno (getrandom, secbuf_alloc). */
int key_patterns_init(struct key_patterns *ps);
/*
 * Add meta's pattern for the len plain bytes (secbuf memory, left as they
 * are: the caller wipes them); its anchor is the whole if len <= anchor_max,
 * else KEY_WINDOW bytes from the middle.  0, or -1 with errno.
 */
int key_patterns_add(struct key_patterns *ps, const struct key_pattern *meta, const uint8_t *plain,
		     size_t len, size_t anchor_max);
/* The hash table over the patterns added: 0, or -1 with errno. */
int key_patterns_index(struct key_patterns *ps);
/* Everything wiped and freed. */
void key_patterns_free(struct key_patterns *ps);

/* What a hit is, once held against the whole encoding. */
enum key_form {
	FORM_BE,       /* the minimal big-endian magnitude (DER's INTEGER) */
	FORM_BE_FIXED, /* big-endian, zero-padded to the field's width (SEC1, PKCS#8 EC) */
	FORM_LIMBS64,  /* little-endian from an 8-aligned address, zeros to a multiple of 8 */
	FORM_LIMBS32,  /* the same with 4: a 32-bit build's BIGNUM */
	FORM_LE,       /* little-endian, neither */
	FORM_RAW,      /* the raw key or secret */
	FORM_TEXT,     /* PEM text: a run of base64 lines */
};

struct key_hit {
	unsigned pattern;
	uint64_t at; /* where the copy starts: an address, or a file offset */
	size_t span; /* its bytes */
	enum key_form form;
	int whole;	    /* the whole encoding matched, not only its anchor */
	unsigned last_line; /* FORM_TEXT: the run's last line */
	size_t map;	    /* a process's hit: its mapping */
	int exposed;
};

typedef void key_hit_fn(void *ctx, const struct key_hit *h);

/*
 * Search buf (have bytes, from the absolute offset base) for anchors that
 * start in [from, limit); each hit checked whole where buf holds the bytes
 * around it, and handed to fn.
 */
void key_match(const struct key_patterns *ps, const uint8_t *buf, size_t have, uint64_t base,
	       uint64_t from, uint64_t limit, key_hit_fn *fn, void *ctx);

/* The read buffer: secbuf memory, KEY_CHUNK and the overlap. */
struct key_reader {
	uint8_t *buf;
	size_t size;
	size_t dirty;	/* bytes written since the last wipe */
	int drop_cache; /* files: drop what was read from the page cache */
};

int key_reader_init(struct key_reader *r, const struct key_patterns *ps);
/* Wipe what was read: done after each range, so that no target's bytes linger. */
void key_reader_wipe(struct key_reader *r);
void key_reader_free(struct key_reader *r);

/*
 * Search bytes [start, end) of fd (a file, a device, /proc/PID/mem) for
 * every pattern at once.  0 when all were read; 1 at an end of file
 * before end; -1 with errno at a read error.  *stop: where reading
 * stopped.  What was read before is searched either way.
 */
int key_stream(struct key_reader *r, const struct key_patterns *ps, int fd, uint64_t start,
	       uint64_t end, uint64_t *stop, key_hit_fn *fn, void *ctx);

/* One key, or one secret file, under its public name. */
struct key_item {
	int secret;	    /* from --secret-file */
	char name[80];	    /* "SHA256:" and 64 hex digits; a secret: its file's name */
	char type[48];	    /* "RSA-2048", "EC P-256", "Ed25519", "secret" */
	const char **files; /* every file given for it (the same key twice is one key) */
	char (*forms)[32];  /* for each file: "PEM PKCS#8", "DER SEC1", ... */
	size_t nfiles;
	unsigned values;    /* private values searched */
	unsigned patterns;  /* patterns searched */
	unsigned pem_lines; /* PEM lines searched */
	size_t secret_len;  /* a secret's bytes */
};

enum key_target_kind { TARGET_PID, TARGET_SELF, TARGET_CORE, TARGET_IMAGE, TARGET_SWAP };

/* A process's mapping, as smaps has it. */
struct key_map {
	unsigned long start, end;
	char perms[5];
	char name[256];
	char vmflags[160];
	int lo, dd, wf, io; /* VmFlags lo, dd, wf, and io or pf (a device's, the kernel's) */
	long rss_kb, swap_kb;
};

/* A range that was not read, and why. */
struct key_unread {
	uint64_t start, end;
	size_t map; /* a process's: its mapping; else (size_t)-1 */
	char reason[120];
};

/* One thing searched: what was read, what could not be, and the hits. */
struct key_target {
	enum key_target_kind kind;
	const char *path;   /* a file's, a swap area's */
	char *own;	    /* path, when allocated here (a swap area's) */
	char swap_type[16]; /* a swap area: "partition", "file", or "" when named */
	int listed;	    /* a swap area from /proc/swaps */
	pid_t pid;
	char comm[64];
	char error[300];	 /* not audited at all, and why */
	int vanished;		 /* the process exited, or the file shrank, mid-scan */
	uint64_t size;		 /* a file's bytes */
	uint64_t read;		 /* bytes read and searched */
	unsigned long swapped;	 /* a process's pages in swap: not read */
	unsigned long zero;	 /* pages of the shared zero page: hold nothing, not read */
	unsigned long untouched; /* mappings with nothing present or swapped */
	unsigned long noaccess;	 /* PROT_NONE mappings (guard pages) with nothing present */
	unsigned long kernel;	 /* the kernel's mappings ([vvar], [vsyscall]): not read */
	struct key_map *maps;
	size_t nmaps;
	struct key_unread *unread;
	size_t nunread, cap_unread;
	struct key_hit *hits;
	size_t nhits, cap_hits;
	unsigned long unlisted;	    /* hits beyond KEY_HITS_LISTED: counted, not listed */
	unsigned long (*copies)[2]; /* per key: [0] protected, [1] exposed */
};

#define KEY_HITS_LISTED 1000

/* Record a hit in t (and its copy count); merges a PEM line into its run. */
void key_target_hit(struct key_target *t, const struct key_patterns *ps, const struct key_hit *h);
/* Record an unread range in t: 0, or -1 (ENOMEM). */
int key_target_unread(struct key_target *t, uint64_t start, uint64_t end, size_t map,
		      const char *reason);

/* Search a process (proc.c): fills t; 0, or -1 when it could not be audited (t->error). */
int key_scan_pid(struct key_target *t, struct key_reader *r, const struct key_patterns *ps);
/* Search a whole file or block device (file.c): the same. */
int key_scan_file(struct key_target *t, struct key_reader *r, const struct key_patterns *ps);
/*
 * The active swap areas (swap.c): a target each, appended to *t (*n of
 * them, *cap allocated).  0, or -1 with errno when /proc/swaps is unreadable.
 */
int key_swap_areas(struct key_target **t, size_t *n, size_t *cap);
/* What to do about a key found in swap area t, in one line. */
const char *key_swap_advice(const struct key_target *t, char *buf, size_t size);

enum key_verdict { VERDICT_NOT_FOUND, VERDICT_PROTECTED, VERDICT_EXPOSED };

/* The run, as report.c prints it. */
struct key_run {
	struct key_item *keys;
	size_t nkeys;
	struct key_patterns ps;
	struct key_target *targets;
	size_t ntargets;
	int json;
};

/* "pid 123", "self", "core FILE", "image FILE", "swap FILE": in buf. */
const char *key_target_label(const struct key_target *t, char *buf, size_t size);
enum key_verdict key_verdict_of(const unsigned long copies[2]);
const char *key_verdict_name(enum key_verdict v);
const char *key_form_name(enum key_form f);
/* The verdict of key k over every target. */
enum key_verdict key_overall(const struct key_run *run, size_t k);
/* Print the run: text or one JSON object; -1 when stdout fails. */
int key_report(const struct key_run *run);

#endif
