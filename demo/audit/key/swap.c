/*
 * swap.c - the active swap areas, as /proc/swaps lists them, and what to
 * do about a key found in one.  The areas are read directly (file.c):
 * what the kernel wrote there stays after the process is gone, and after
 * a reboot.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "key.h"

/* /proc/swaps escapes blanks and backslashes in names as \ooo (octal). */
static void unescape(char *s)
{
	char *out = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*out++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 3;
		} else {
			*out++ = *s;
		}
	}
	*out = '\0';
}

static struct key_target *append(struct key_target **t, size_t *n, size_t *cap)
{
	if (*n == *cap) {
		size_t more = *cap ? *cap * 2 : 8;
		struct key_target *grown = realloc(*t, more * sizeof(*grown));

		if (!grown)
			return NULL;
		*t = grown;
		*cap = more;
	}
	memset(&(*t)[*n], 0, sizeof(**t));
	return &(*t)[(*n)++];
}

int key_swap_areas(struct key_target **t, size_t *n, size_t *cap)
{
	char line[4200], name[4096], type[16];
	struct key_target *area;
	FILE *f = fopen("/proc/swaps", "re");
	int rc = 0;

	if (!f)
		return -1;
	/* The first line names the columns: Filename Type Size Used Priority. */
	if (!fgets(line, sizeof(line), f)) {
		fclose(f);
		return 0;
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%4095s %15s", name, type) != 2)
			continue;
		unescape(name);
		area = append(t, n, cap);
		if (!area || !(area->own = strdup(name))) {
			rc = -1;
			break;
		}
		area->kind = TARGET_SWAP;
		area->path = area->own;
		area->listed = 1;
		snprintf(area->swap_type, sizeof(area->swap_type), "%s", type);
	}
	fclose(f);
	return rc;
}

const char *key_swap_advice(const struct key_target *t, char *buf, size_t size)
{
	const char *p = t->path;

	if (!strcmp(t->swap_type, "partition"))
		snprintf(
			buf, size,
			"rotate the key first (whoever reads %s has it), then scrub the area: "
			"swapoff %s; blkdiscard %s (or overwrite it with zeros); mkswap %s (-U with "
			"its old UUID if fstab names it so); swapon %s",
			p, p, p, p, p);
	else if (!strcmp(t->swap_type, "file"))
		snprintf(buf, size,
			 "rotate the key first (whoever reads %s has it), then scrub the area: "
			 "swapoff %s; overwrite it with zeros (dd if=/dev/zero of=%s bs=1M "
			 "count=%llu conv=notrunc), or remove it and make a new one; mkswap %s; "
			 "swapon %s",
			 p, p, p, (unsigned long long)((t->size + (1 << 20) - 1) >> 20), p, p);
	else
		snprintf(buf, size,
			 "rotate the key first (whoever reads %s has it), then scrub the area: "
			 "swapoff it if it is in use, discard or overwrite it with zeros, mkswap, "
			 "swapon",
			 p);
	return buf;
}
