/*
 * prom-carry: the .prom file the textfile writer finds from its last run,
 * read back for the scan-error counters (prom_carry).  Whatever it holds,
 * the counters it gives, printed again and read back, must come back the
 * same: the counter never resets or jumps through a round trip.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "../../demo/audit/prom.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned long long errors[HOST_OUTCOMES], again[HOST_OUTCOMES];
	struct host_scan hs;
	char path[64], *out = NULL;
	size_t len = 0;
	FILE *f;
	int fd = fuzz_file(data, size, path);

	prom_carry(path, errors);
	close(fd);
	memset(&hs, 0, sizeof(hs));
	f = open_memstream(&out, &len);
	if (!f)
		abort();
	prom_print(f, &hs, 1, errors);
	if (fclose(f) != 0)
		abort();
	fd = fuzz_file(out, len, path);
	prom_carry(path, again);
	close(fd);
	free(out);
	if (memcmp(errors, again, sizeof(errors)))
		abort();
	return 0;
}
