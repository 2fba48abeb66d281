/* scan.c - which mappings to audit, and their pages' state (kfacts). */
#define _GNU_SOURCE
#include "scan.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kfacts.h"

/*
 * Why v is selected (enum audit_by), or 0.  Decided on smaps alone, before
 * anything is copied: a host scan passes every mapping of every process.
 */
static unsigned selected(const struct smaps_vma *v, const struct audit_select *sel, int dropin)
{
	bool lo = vmflag_has(v, "lo"), dd = vmflag_has(v, "dd");

	if (sel->have_range)
		return v->start < sel->range_end && sel->range_start < v->end ? AUDIT_BY_RANGE : 0;
	if (!strcmp(v->name, SECBUF_VMA_NAME) ||
	    !strncmp(v->name, SECBUF_VMA_PREFIX, strlen(SECBUF_VMA_PREFIX)))
		return AUDIT_BY_NAME;
	if (dd && vmflag_has(v, "wf"))
		return AUDIT_BY_VMFLAGS;
	/*
	 * libsecbuf's data is DONTDUMP and NOHUGEPAGE (its bookkeeping only
	 * DONTDUMP); the OpenSSL drop-in's is inherited across fork (no wf),
	 * so where names are missing only the loaded drop-in tells it from
	 * anyone else's.
	 */
	if (dropin && dd && vmflag_has(v, "nh") && !v->name[0])
		return AUDIT_BY_DROPIN;
	/*
	 * libsecbuf's secret tier (SECBUF_SECRET) as well as anyone else's;
	 * not by "lo", which some kernels do not show for it (audit_held()).
	 */
	if (dd && !strcmp(v->name, SECRETMEM_NAME))
		return AUDIT_BY_SECRETMEM;
	/* Not a file, not a device's or the kernel's ([vvar] is io pf dd). */
	if (sel->likely && lo && dd && v->name[0] != '/' && !vmflag_has(v, "io") &&
	    !vmflag_has(v, "pf"))
		return AUDIT_BY_DONTDUMP;
	return sel->all && lo ? AUDIT_BY_LOCKED : 0;
}

const char *audit_bits_name(const char *const *names, size_t n, unsigned bits, char *buf,
			    size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n; i++)
		if (bits & (1U << i))
			len += snprintf(buf + len, len < size ? size - len : 0, "%s%s",
					len ? "+" : "", names[i]);
	return buf;
}

const char *audit_by_name(unsigned by, char *buf, size_t size)
{
	static const char *const names[] = { "name",	  "vmflags",  "locked", "range",
					     "secretmem", "dontdump", "dropin" };

	return audit_bits_name(names, sizeof(names) / sizeof(names[0]), by, buf, size);
}

static const char *const method_names[] = {
	"maplockonfault", "mlock2", "mlock", "none", "secretmem", "other",
};

/*
 * [anon:secbuf:METHOD] gives METHOD's bit, memfd_secret memory (which
 * cannot be named) METHOD_SECRETMEM; any other name, 0.
 */
static unsigned method_of(const char *name)
{
	size_t pre = strlen(SECBUF_VMA_PREFIX), len = strlen(name);

	if (!strcmp(name, SECRETMEM_NAME))
		return METHOD_SECRETMEM;
	if (strncmp(name, SECBUF_VMA_PREFIX, pre) || len <= pre + 1 || name[len - 1] != ']')
		return 0;
	for (unsigned i = 0; i + 1 < sizeof(method_names) / sizeof(method_names[0]); i++)
		if (strlen(method_names[i]) == len - pre - 1 &&
		    !strncmp(name + pre, method_names[i], len - pre - 1))
			return 1U << i;
	return METHOD_OTHER;
}

const char *audit_method_name(unsigned method, char *buf, size_t size)
{
	if (!method) {
		snprintf(buf, size, "unnamed");
		return buf;
	}
	return audit_bits_name(method_names, sizeof(method_names) / sizeof(method_names[0]), method,
			       buf, size);
}

int audit_method_agrees(const struct audit_map *m)
{
	return m->method == METHOD_NONE ? !m->lo : m->method != METHOD_OTHER && audit_held(m);
}

/*
 * Per-page counts for m.  A page whose kpageflags could not be read (not
 * root) counts as locked when its mapping is VM_LOCKED.
 */
struct scan {
	pid_t pid;
	int pagemap, kpageflags; /* open files, or -1: each mapping opens the pid's */
	const struct audit_select *sel;
	struct audit_map *maps;
	size_t n, cap;
	int stopped;
	int dropin; /* the process maps libsecbuf-sodium.so or libsecbuf-openssl.so */
};

static int count_pages(struct audit_map *m, const struct scan *sc)
{
	struct page_census c;
	unsigned long unknown;
	int rc;

	m->pages = (m->end - m->start) / sysconf(_SC_PAGESIZE);
	if (sc->pagemap >= 0)
		rc = page_census_fds(sc->pagemap, sc->kpageflags, m->start, m->pages, &c);
	else
		rc = page_census_pid(sc->pid, m->start, m->pages, &c);
	if (rc < 0)
		return -1;
	unknown = c.present - c.flags_read;
	m->resident = c.present;
	m->swapped = c.swapped;
	m->unevictable = c.unevictable;
	m->flags_read = c.flags_read;
	/*
	 * A read of an untouched page of a lock-on-fault range (anyone's read
	 * through /proc/PID/mem, say) maps the shared zero page there: it is
	 * never locked, but it holds nothing, so it is no leak.  The first
	 * write replaces it with a page of the range's own, locked at once.
	 */
	m->zero = c.zero;
	/* Secret memory: unevictable by the kernel's rule, whatever the page flags. */
	if (m->method == METHOD_SECRETMEM)
		m->locked = c.present;
	else
		m->locked = c.locked + (m->lo ? unknown : 0);
	m->evictable = m->resident - m->locked - m->zero;
	return 0;
}

static int push(struct audit_map **maps, size_t *n, size_t *cap, const struct audit_map *m)
{
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;
		struct audit_map *p = realloc(*maps, ncap * sizeof(*p));

		if (!p)
			return -1;
		*maps = p;
		*cap = ncap;
	}
	(*maps)[(*n)++] = *m;
	return 0;
}

/* Whether v is a drop-in's library: a file named libsecbuf-NAME.so. */
static int find_dropin(const struct smaps_vma *v, void *arg)
{
	const char *base = strrchr(v->name, '/');
	size_t len;

	(void)arg;
	if (!base || strncmp(++base, "libsecbuf-", 10))
		return 0;
	len = strlen(base);
	return len > 13 && !strcmp(base + len - 3, ".so");
}

/* One smaps entry: select it, clip it to the range, count its pages. */
static int scan_vma(const struct smaps_vma *v, void *arg)
{
	struct scan *sc = arg;
	struct audit_map cur;
	unsigned by = selected(v, sc->sel, sc->dropin);
	size_t len;

	if (!by)
		return 0;
	memset(&cur, 0, sizeof(cur));
	cur.start = v->start;
	cur.end = v->end;
	memcpy(cur.perms, v->perms, sizeof(cur.perms));
	snprintf(cur.name, sizeof(cur.name), "%s", v->name);
	/* As printed: without the blanks kfacts puts around the flags. */
	snprintf(cur.vmflags, sizeof(cur.vmflags), "%s", v->vmflags + strspn(v->vmflags, " "));
	for (len = strlen(cur.vmflags); len && cur.vmflags[len - 1] == ' ';)
		cur.vmflags[--len] = '\0';
	cur.lo = vmflag_has(v, "lo");
	cur.lf = vmflag_has(v, "lf");
	cur.dd = vmflag_has(v, "dd");
	cur.wf = vmflag_has(v, "wf");
	cur.by = by;
	cur.method = method_of(cur.name);
	if (sc->sel->have_range) {
		if (cur.start < sc->sel->range_start)
			cur.start = sc->sel->range_start;
		if (cur.end > sc->sel->range_end)
			cur.end = sc->sel->range_end;
	}
	if (count_pages(&cur, sc) < 0 || push(&sc->maps, &sc->n, &sc->cap, &cur) < 0)
		return -1;
	/* The test of a process that exits while its smaps is read. */
	if (sc->sel->stop_in == sc->pid && !sc->stopped++)
		raise(SIGSTOP);
	return 0;
}

static int scan(struct scan *sc, int smaps, struct audit_map **maps, size_t *n)
{
	int rc, err;

	*maps = NULL;
	*n = 0;
	rc = smaps >= 0 ? smaps_each_fd(smaps, scan_vma, sc) : smaps_each(sc->pid, scan_vma, sc);
	if (rc != 0) {
		err = errno;
		free(sc->maps);
		errno = err;
		return -1;
	}
	if (sc->sel->stop_after == sc->pid)
		raise(SIGSTOP);
	*maps = sc->maps;
	*n = sc->n;
	return 0;
}

int audit_scan(pid_t pid, const struct audit_select *sel, struct audit_map **maps, size_t *n,
	       int *kpageflags)
{
	struct scan sc = { .pid = pid, .pagemap = -1, .kpageflags = -1, .sel = sel };

	*maps = NULL;
	*n = 0;
	*kpageflags = kpageflags_readable();
	/* A first pass: the drop-in may be mapped above the memory it made. */
	sc.dropin = smaps_each(pid, find_dropin, NULL);
	if (sc.dropin < 0)
		return -1;
	return scan(&sc, -1, maps, n);
}

int audit_scan_files(int smaps, int pagemap, int kpageflags, const struct audit_select *sel,
		     struct audit_map **maps, size_t *n)
{
	struct scan sc = { .pid = -1, .pagemap = pagemap, .kpageflags = kpageflags, .sel = sel };

	*maps = NULL;
	*n = 0;
	/* The same first pass, then the file again from its start. */
	sc.dropin = smaps_each_fd(smaps, find_dropin, NULL);
	if (sc.dropin < 0 || lseek(smaps, 0, SEEK_SET) < 0)
		return -1;
	return scan(&sc, smaps, maps, n);
}
