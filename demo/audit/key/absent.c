/*
 * absent.c - --key in a build without libcrypto: the static guest
 * binaries, built for machines (arm64) whose libcrypto.a is not there.
 * The options parse as everywhere (args.c); the mode says why it is not
 * here rather than pretending to search.
 */
#include "../audit.h"
#include "key.h"

int audit_key(const struct key_args *a, const struct audit_opts *o, int argc, char **argv)
{
	(void)a;
	(void)argc;
	(void)argv;
	return audit_error(o, 0,
			   "--key: this secbuf-audit was built without libcrypto (a static guest "
			   "build); use the host's, built with libssl-dev");
}
