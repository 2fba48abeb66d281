/*
 * prom-carry: the .prom file the textfile writer finds from its last run,
 * read back for the scan-error counters (prom_carry).  Whatever it holds,
 * the counters it gives, printed again and read back, must come back the
 * same: the counter never resets or jumps through a round trip.  The
 * scan printed with them holds up to three processes made of the same
 * bytes (names of any bytes, kinds, lock states, counts), so that the
 * writer's labels and escaping are in the trip too.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "../../demo/audit/prom.h"

/* Holdings taken from the input's bytes: the same bytes as the file, read another way. */
static size_t holdings(const uint8_t *data, size_t size, struct holding *h, size_t max)
{
	struct fuzz_in in = { data, size };
	size_t n = size % (max + 1);

	for (size_t i = 0; i < n; i++) {
		size_t len;
		const uint8_t *comm = fuzz_bytes(&in, HOST_COMM_LEN - 1, &len);

		memset(&h[i], 0, sizeof(h[i]));
		memcpy(h[i].comm, comm, strnlen((const char *)comm, len));
		h[i].kind = fuzz_below(&in, HOST_KINDS);
		h[i].lock = fuzz_u8(&in) & 15;
		h[i].method = fuzz_u8(&in) & 63;
		for (int st = 0; st < HOST_STATES; st++) {
			h[i].state_mappings[st] = fuzz_u8(&in);
			h[i].state_bytes[st] = fuzz_u64(&in);
		}
	}
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned long long errors[HOST_OUTCOMES], again[HOST_OUTCOMES];
	struct holding held[3];
	struct host_scan hs;
	char path[64], *out = NULL;
	size_t len = 0;
	FILE *f;
	int fd = fuzz_file(data, size, path);

	prom_carry(path, errors);
	close(fd);
	memset(&hs, 0, sizeof(hs));
	hs.n = holdings(data, size, held, sizeof(held) / sizeof(held[0]));
	hs.holdings = hs.n ? held : NULL;
	f = open_memstream(&out, &len);
	if (!f)
		abort();
	prom_print(f, &hs, !(size & 8), errors);
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
