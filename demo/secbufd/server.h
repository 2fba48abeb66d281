/*
 * server.h - the daemon's socket and event loop: one thread, epoll, many
 * clients, SO_PEERCRED access control, bounded frames, signalfd shutdown,
 * sd_notify readiness.
 */
#ifndef SECBUFD_SERVER_H
#define SECBUFD_SERVER_H

#include <stddef.h>
#include <sys/types.h>

#include "arena.h"
#include "keystore.h"

#define SERVER_MAX_CONNS	256
#define SERVER_FRAME_TIMEOUT	10	/* seconds to complete a started frame */

struct server_config {
	const char *path;	/* Unix socket path */
	mode_t mode;		/* socket file mode, 0600 by default */
	size_t max_body;	/* largest request body accepted */
	int verbose;		/* log one line per request (never key bytes) */
};

/*
 * Serve until SIGTERM, SIGINT, SIGHUP or SIGQUIT, then wipe every key and the
 * working buffer.  Tells a service manager (notify.h) when it is ready.
 * Returns 0 after a clean shutdown, -1 (message printed) if the socket
 * cannot be set up.
 */
int server_run(const struct server_config *cfg, struct keystore *ks, struct arena *ar);

#endif
