// SPDX-License-Identifier: MIT
/* Child cgroups for the swap and sparse proofs. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "lib-cgroup.h"

#define CGROOT "/sys/fs/cgroup"

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");
	int ok;

	if (!f)
		return -1;
	ok = fputs(text, f) >= 0;
	ok &= fclose(f) == 0;
	return ok ? 0 : -1;
}

int cgroup_enter(const char *name, const char *max)
{
	char path[256], pid[32];

	snprintf(path, sizeof(path), CGROOT "/%s", name);
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		return -1;
	snprintf(path, sizeof(path), CGROOT "/%s/memory.max", name);
	if (write_file(path, max) < 0)
		return -1;
	snprintf(path, sizeof(path), CGROOT "/%s/cgroup.procs", name);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	return write_file(path, pid);
}

long cgroup_field(const char *name, const char *file, const char *key)
{
	char path[256], line[256];
	size_t klen = strlen(key);
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), CGROOT "/%s/%s", name, file);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, key, klen) && line[klen] == ' ') {
			v = strtol(line + klen + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return v;
}
