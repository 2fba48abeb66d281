/* The guest's RAM through /proc/kcore, for proof-secret: see lib-kcore.h. */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/klog.h>
#include <unistd.h>
#include "lib-kcore.h"

#define WINDOW (4UL << 20)
/* Below the kernel's text: the direct map (x86-64). */
#define TEXT_START 0xffffffff80000000UL

static void mask(unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] ^= KCORE_MASK;
}

/* One segment, in windows that overlap by len - 1 bytes so no match is cut. */
static int scan_segment(int fd, const Elf64_Phdr *ph, unsigned char *buf, struct kcore_needles *nd)
{
	size_t keep = 0;

	for (uint64_t done = 0; done < ph->p_filesz;) {
		size_t want = ph->p_filesz - done < WINDOW ? ph->p_filesz - done : WINDOW;
		ssize_t got = pread(fd, buf + keep, want, ph->p_offset + done);
		size_t have;

		if (got <= 0)
			return got < 0 ? -1 : 0;
		have = keep + got;
		mask(buf, have);
		for (size_t i = 0; i < nd->n; i++)
			for (unsigned char *p = buf, *end = buf + have;
			     (p = memmem(p, end - p, nd->masked[i], nd->len)); p++)
				if (!nd->count[i]++) {
					nd->first_phys[i] = ph->p_paddr + done + (p - buf) - keep;
					nd->first_off[i] = ph->p_offset + done + (p - buf) - keep;
				}
		/*
		 * Back to RAM's own bytes before the next read: a masked copy
		 * of a masked needle (the caller's own) would be the needle in
		 * clear, and found when the scan reaches this buffer's pages.
		 */
		mask(buf, have);
		keep = have < nd->len - 1 ? have : nd->len - 1;
		memmove(buf, buf + have - keep, keep);
		done += got;
		nd->scanned_mib += got;
	}
	return 0;
}

int kcore_scan(struct kcore_needles *nd)
{
	unsigned char *buf = malloc(WINDOW + sizeof(nd->masked[0]));
	int fd = open("/proc/kcore", O_RDONLY | O_CLOEXEC), rc = -1, err;
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	size_t bytes;

	memset(nd->count, 0, sizeof(nd->count));
	memset(nd->first_phys, 0, sizeof(nd->first_phys));
	nd->scanned_mib = 0;
	if (!buf || fd < 0 || nd->len == 0 || nd->len > sizeof(nd->masked[0]) ||
	    nd->n > KCORE_MAX_NEEDLES)
		goto out;
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG)) {
		errno = ENOEXEC;
		goto out;
	}
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph), eh.e_phoff + (off_t)i * eh.e_phentsize) !=
		    sizeof(ph))
			goto out;
		if (ph.p_type != PT_LOAD || ph.p_paddr == (Elf64_Addr)-1 ||
		    ph.p_vaddr >= TEXT_START)
			continue;
		if (scan_segment(fd, &ph, buf, nd) < 0)
			goto out;
	}
	rc = 0;
out:
	err = errno;
	bytes = nd->scanned_mib;
	nd->scanned_mib = bytes >> 20;
	if (fd >= 0)
		close(fd);
	if (buf) {
		/* Masked data only, but leave nothing of RAM behind either. */
		explicit_bzero(buf, WINDOW + sizeof(nd->masked[0]));
		free(buf);
	}
	errno = err;
	return rc;
}

int kcore_freed_pages_zeroed(void)
{
	/* SYSLOG_ACTION_SIZE_BUFFER and _READ_ALL: the whole ring, unconsumed */
	int size = klogctl(10, NULL, 0), n, zeroed = -1;
	char *log, *line;

	if (size <= 0)
		return -1;
	log = malloc((size_t)size + 1);
	if (!log)
		return -1;
	n = klogctl(3, log, size);
	if (n >= 0) {
		log[n] = 0;
		line = strstr(log, "mem auto-init:");
		if (line && strstr(line, "heap free:on"))
			zeroed = 1;
		else if (line && strstr(line, "heap free:off"))
			zeroed = 0;
		else
			errno = ENOENT;
	}
	free(log);
	return zeroed;
}
