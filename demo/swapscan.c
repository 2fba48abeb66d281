/*
 * swapscan FILE HEX... - count the occurrences of each byte string (given
 * in hex) in FILE, e.g. a guest's swap image.  Prints "HEX COUNT" per string.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static int unhex(const char *s, unsigned char *out, size_t max)
{
	size_t len = strlen(s);

	if (len == 0 || len % 2 || len / 2 > max)
		return -1;
	for (size_t i = 0; i < len / 2; i++) {
		unsigned v;

		if (sscanf(s + 2 * i, "%2x", &v) != 1)
			return -1;
		out[i] = v;
	}
	return len / 2;
}

int main(int argc, char **argv)
{
	unsigned char needle[256];
	struct stat st;
	const unsigned char *data;
	int fd;

	if (argc < 3) {
		fprintf(stderr, "usage: swapscan FILE HEX...\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY);
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_size == 0) {
		fprintf(stderr, "swapscan: %s: cannot read or empty\n", argv[1]);
		return 2;
	}
	data = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (data == MAP_FAILED) {
		perror("swapscan: mmap");
		return 2;
	}
	for (int i = 2; i < argc; i++) {
		int len = unhex(argv[i], needle, sizeof(needle));
		const unsigned char *p = data, *end = data + st.st_size;
		long hits = 0;

		if (len < 0) {
			fprintf(stderr, "swapscan: not hex: %s\n", argv[i]);
			return 2;
		}
		while ((p = memmem(p, end - p, needle, len))) {
			hits++;
			p++;
		}
		printf("%s %ld\n", argv[i], hits);
	}
	return 0;
}
