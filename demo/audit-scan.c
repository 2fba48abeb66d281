/* audit-scan.c - smaps parsing and per-page state from pagemap/kpageflags. */
#define _GNU_SOURCE
#include "audit-scan.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PM_PRESENT	(1ULL << 63)
#define PM_SWAPPED	(1ULL << 62)
#define PM_PFN_MASK	((1ULL << 55) - 1)
#define KPF_UNEVICTABLE	(1ULL << 18)
#define KPF_MLOCKED	(1ULL << 33)
#define BATCH		1024

static int has_flag(const char *vmflags, const char *flag)
{
	const char *p = vmflags;
	size_t len = strlen(flag);

	while ((p = strstr(p, flag))) {
		if ((p == vmflags || p[-1] == ' ') && (p[len] == ' ' || p[len] == '\0' || p[len] == '\n'))
			return 1;
		p += len;
	}
	return 0;
}

/* Why m is selected (enum audit_by), or 0. */
static unsigned selected(const struct audit_map *m, const struct audit_select *sel)
{
	if (sel->have_range)
		return m->start < sel->range_end && sel->range_start < m->end ? AUDIT_BY_RANGE : 0;
	if (!strcmp(m->name, SECBUF_VMA_NAME))
		return AUDIT_BY_NAME;
	if (m->dd && m->wf)
		return AUDIT_BY_VMFLAGS;
	return sel->all && m->lo ? AUDIT_BY_LOCKED : 0;
}

const char *audit_by_name(unsigned by, char *buf, size_t size)
{
	static const char *const names[] = { "name", "vmflags", "locked", "range" };
	size_t len = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (by & (1U << i))
			len += snprintf(buf + len, len < size ? size - len : 0, "%s%s", len ? "+" : "", names[i]);
	return buf;
}

/* Per-page counts for m from pagemap (pm) and, when kpf >= 0, kpageflags. */
static int count_pages(struct audit_map *m, int pm, int kpf)
{
	long psize = sysconf(_SC_PAGESIZE);
	uint64_t ent[BATCH];

	m->pages = (m->end - m->start) / psize;
	for (unsigned long done = 0; done < m->pages;) {
		size_t want = m->pages - done < BATCH ? m->pages - done : BATCH;
		off_t off = (off_t)((m->start / psize + done) * sizeof(uint64_t));
		ssize_t got = pread(pm, ent, want * sizeof(uint64_t), off);

		if (got < 0)
			return -1;
		if (got == 0)	/* beyond the user address space: nothing there is ours */
			break;
		got /= sizeof(uint64_t);
		for (ssize_t i = 0; i < got; i++) {
			uint64_t pfn = ent[i] & PM_PFN_MASK, flags = 0;
			int locked;

			if (ent[i] & PM_SWAPPED)
				m->swapped++;
			if (!(ent[i] & PM_PRESENT))
				continue;
			m->resident++;
			if (kpf >= 0 && pfn &&
			    pread(kpf, &flags, sizeof(flags), (off_t)(pfn * sizeof(flags))) == sizeof(flags)) {
				if (flags & KPF_UNEVICTABLE)
					m->unevictable++;
				locked = !!(flags & (KPF_MLOCKED | KPF_UNEVICTABLE));
			} else {
				locked = m->lo;
			}
			if (locked)
				m->locked++;
			else
				m->evictable++;
		}
		done += got;
	}
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

int audit_scan(pid_t pid, const struct audit_select *sel, struct audit_map **maps, size_t *n, int *kpageflags)
{
	char path[64], line[512];
	struct audit_map cur;
	int have = 0, pm, kpf, rc = -1, err;
	size_t cap = 0;
	FILE *f;

	*maps = NULL;
	*n = 0;
	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)pid);
	pm = open(path, O_RDONLY | O_CLOEXEC);
	if (pm < 0) {
		err = errno;
		fclose(f);
		errno = err;
		return -1;
	}
	/* Root only; without it, VmFlags decide (see audit-scan.h). */
	kpf = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	*kpageflags = kpf >= 0;

	/* Each mapping is a header line, then "Key: value" lines ending with VmFlags. */
	while (fgets(line, sizeof(line), f)) {
		unsigned long start, end;
		char perms[5];
		int name_at = 0;

		if (sscanf(line, "%lx-%lx %4s %*s %*s %*s %n", &start, &end, perms, &name_at) >= 3 && name_at > 0) {
			memset(&cur, 0, sizeof(cur));
			cur.start = start;
			cur.end = end;
			memcpy(cur.perms, perms, sizeof(cur.perms));
			snprintf(cur.name, sizeof(cur.name), "%s", line + name_at);
			cur.name[strcspn(cur.name, "\n")] = '\0';
			have = 1;
		} else if (have && !strncmp(line, "VmFlags:", 8)) {
			have = 0;
			snprintf(cur.vmflags, sizeof(cur.vmflags), "%s", line + 8 + strspn(line + 8, " "));
			cur.vmflags[strcspn(cur.vmflags, "\n")] = '\0';
			for (size_t e = strlen(cur.vmflags); e && cur.vmflags[e - 1] == ' ';)
				cur.vmflags[--e] = '\0';
			cur.lo = has_flag(cur.vmflags, "lo");
			cur.lf = has_flag(cur.vmflags, "lf");
			cur.dd = has_flag(cur.vmflags, "dd");
			cur.wf = has_flag(cur.vmflags, "wf");
			cur.by = selected(&cur, sel);
			if (!cur.by)
				continue;
			if (sel->have_range) {
				if (cur.start < sel->range_start)
					cur.start = sel->range_start;
				if (cur.end > sel->range_end)
					cur.end = sel->range_end;
			}
			if (count_pages(&cur, pm, kpf) < 0 || push(maps, n, &cap, &cur) < 0)
				goto out;
		}
	}
	if (ferror(f))
		goto out;
	rc = 0;
out:
	err = errno;
	fclose(f);
	close(pm);
	if (kpf >= 0)
		close(kpf);
	if (rc < 0) {
		free(*maps);
		*maps = NULL;
		*n = 0;
	}
	errno = err;
	return rc;
}
