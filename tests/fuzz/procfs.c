/*
 * procfs: the contents of /proc/PID/stat, comm, status or meminfo, as the
 * audit (audit/procfs.c) and kfacts (proc_field_kb) read them.  The first
 * byte picks the reader, and for a field reader the field.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "kfacts.h"
#include "../../demo/audit/procfs.h"

static const char *const fields[] = {
	"VmLck", "VmRSS", "VmSwap", "Locked", "Mlocked", "Unevictable"
};

/* Once: the forms that open this process's own files, around the fuzzed readers. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct proc_id id;
	char comm[PROC_COMM_LEN];

	(void)argc;
	(void)argv;
	proc_comm_of(getpid(), comm, sizeof(comm));
	if (proc_id_of(getpid(), &id) < 0 || id.state != 'R' || meminfo_kb("MemTotal") <= 0)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proc_id id;
	char comm[PROC_COMM_LEN], path[64];
	int fd;

	if (size < 1)
		return 0;
	fd = fuzz_file(data + 1, size - 1, path);
	switch (data[0] % 3) {
	case 0:
		if (proc_id_read(fd, &id) == 0 && strlen(id.comm) >= sizeof(id.comm))
			abort();
		break;
	case 1:
		proc_comm_read(fd, comm, sizeof(comm));
		if (strnlen(comm, sizeof(comm)) == sizeof(comm))
			abort(); /* not terminated */
		break;
	case 2:
		(void)proc_field_kb(path,
				    fields[data[0] / 3 % (sizeof(fields) / sizeof(fields[0]))]);
		break;
	}
	close(fd);
	return 0;
}
