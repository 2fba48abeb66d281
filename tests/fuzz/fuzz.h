/*
 * fuzz.h - what every harness of tests/fuzz shares: the libFuzzer entry
 * point, typed values taken from the fuzzer's bytes (as LLVM's
 * FuzzedDataProvider takes them), and a file holding given bytes, for the
 * readers that take a descriptor or a path.
 */
#ifndef SECBUF_FUZZ_H
#define SECBUF_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* Optional (weak here): setup once; exit FUZZ_UNAVAILABLE if this host cannot run the harness. */
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));
#define FUZZ_UNAVAILABLE 77

/* The fuzzer's bytes, taken from the front; once empty, every take gives 0. */
struct fuzz_in {
	const uint8_t *p;
	size_t len;
};

uint8_t fuzz_u8(struct fuzz_in *in);
uint32_t fuzz_u32(struct fuzz_in *in);
uint64_t fuzz_u64(struct fuzz_in *in);
/* A value in [0, n), n > 0. */
unsigned fuzz_below(struct fuzz_in *in, unsigned n);
/* Up to max bytes, as many as a length byte says; *len is how many. */
const uint8_t *fuzz_bytes(struct fuzz_in *in, size_t max, size_t *len);

/*
 * A memfd holding len bytes, its offset at 0 (the harness closes it), and
 * its path under /proc/self/fd for the readers that take a path; aborts on
 * failure, which is the harness's, not the parser's.
 */
int fuzz_file(const void *data, size_t len, char path[64]);

/* Send stdout to /dev/null: the printers print (stderr is libFuzzer's -close_fd_mask). */
void fuzz_quiet(void);

#endif
