/*
 * secbufd-frames: a byte stream as one client's requests, through the
 * daemon's frame checks (header, size limit, truncation) into the real
 * handlers, keystore and libsodium.  Two keys are imported first, so that a
 * single frame reaches sign, verify, seal and open.  Every reply must be a
 * well-formed frame, and every chunk of the working buffer must come back.
 */
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "secbuf.h"
#include "../../demo/secbufd/handlers.h"

#define ARENA_CAP (256U << 10)	  /* small: "working buffer full" is reachable */
#define MAX_BODY  (ARENA_CAP / 2) /* as secbufd sets it from its buffer size */

static struct arena ar;

static void setup(void)
{
	static int done;

	if (done++)
		return;
	if (sodium_init() < 0 || arena_init(&ar, ARENA_CAP, SECBUF_BEST_EFFORT) < 0)
		abort();
}

/* What a client would receive must parse as a frame, whatever was asked. */
static void check_frame(const uint8_t *frame, size_t len, int ok)
{
	struct kd_field f[KEYSTORE_MAX + 2];
	uint32_t body;
	uint8_t code;

	if (len < KD_HDR_SIZE || kd_hdr_parse(frame, &code, &body) < 0 ||
	    body != len - KD_HDR_SIZE || (code == KD_OK) != ok ||
	    kd_fields_parse(frame + KD_HDR_SIZE, body, f, 0, KEYSTORE_MAX + 2) < 0)
		abort();
}

static void import(struct keystore *ks, unsigned type, const char *name, uint8_t seed)
{
	const struct key *k;
	uint8_t secret[KD_SECRET_BYTES];

	memset(secret, seed, sizeof(secret));
	if (ks_import(ks, type, (const uint8_t *)name, strlen(name), secret, sizeof(secret), &k) !=
	    KD_OK)
		abort();
}

/* One request as the server takes it: 0 to go on, -1 where it closes the connection. */
static int serve_one(struct keystore *ks, const uint8_t **p, size_t *left)
{
	uint8_t errbuf[KD_ERRFRAME_MAX], op, *in;
	struct reply r;
	uint32_t len;

	if (*left < KD_HDR_SIZE)
		return -1; /* end of stream, or a truncated header */
	if (kd_hdr_parse(*p, &op, &len) < 0 || len > MAX_BODY) {
		check_frame(errbuf, error_frame(errbuf, KD_E_MALFORMED, "bad header"), 0);
		return -1;
	}
	if (*left - KD_HDR_SIZE < len)
		return -1; /* truncated body */
	in = arena_get(&ar, len);
	if (!in)
		return -1; /* busy: the server refuses and closes */
	memcpy(in, *p + KD_HDR_SIZE, len);
	*p += KD_HDR_SIZE + len;
	*left -= KD_HDR_SIZE + len;
	handle_request(ks, &ar, op, in, len, &r);
	arena_put(&ar, in);
	if (r.status == KD_OK) {
		check_frame(r.frame, r.len, 1);
		arena_put(&ar, r.frame);
		return 0;
	}
	if (r.frame || !r.err[0])
		abort(); /* a failure hands out no chunk, and says why */
	check_frame(errbuf, error_frame(errbuf, r.status, r.err), 0);
	return r.status == KD_E_MALFORMED ? -1 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct keystore ks;

	setup();
	ks_init(&ks, SECBUF_BEST_EFFORT);
	import(&ks, KD_KEY_ED25519, "e", 1);
	import(&ks, KD_KEY_X25519, "x", 2);
	while (serve_one(&ks, &data, &size) == 0)
		;
	ks_free(&ks);
	if (ar.n != 0)
		abort(); /* a chunk of the working buffer was never released */
	return 0;
}
