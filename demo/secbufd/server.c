/* server.c - Unix socket, epoll loop and per-connection frame state. */
#define _GNU_SOURCE
#include "server.h"

#include <errno.h>
#include <libgen.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "activation.h"
#include "handlers.h"
#include "notify.h"
#include "../protocol/protocol.h"

enum { TAG_LISTEN, TAG_SIGNAL, TAG_CONN };

struct conn {
	int tag;			/* first: epoll data points at it */
	int fd;
	uid_t uid;
	uint8_t hdr[KD_HDR_SIZE];
	size_t hdr_got;
	uint8_t op;
	uint8_t *in;			/* arena chunk holding the body */
	uint32_t in_len, in_got;
	const uint8_t *out;		/* reply being sent */
	uint8_t *out_chunk;		/* arena chunk to release after sending */
	size_t out_len, out_sent;
	int close_after;
	time_t busy_since;		/* frame in progress since; 0 when idle */
	uint8_t errbuf[KD_ERRFRAME_MAX];
};

struct server {
	const struct server_config *cfg;
	struct keystore *ks;
	struct arena *ar;
	int epfd;
	unsigned nconns;
	struct conn *conns[SERVER_MAX_CONNS];
	uid_t uid;
	int activated; /* the socket is systemd's (secbufd.socket), not ours */
};

static int tag_listen = TAG_LISTEN, tag_signal = TAG_SIGNAL;

static time_t now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

static void conn_close(struct server *s, struct conn *c)
{
	if (c->in)
		arena_put(s->ar, c->in);
	if (c->out_chunk)
		arena_put(s->ar, c->out_chunk);
	close(c->fd);	/* also removes it from the epoll set */
	for (unsigned i = 0; i < s->nconns; i++) {
		if (s->conns[i] == c) {
			s->conns[i] = s->conns[--s->nconns];
			break;
		}
	}
	free(c);
}

static int conn_watch(struct server *s, struct conn *c, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = c };

	return epoll_ctl(s->epfd, EPOLL_CTL_MOD, c->fd, &ev);
}

/* Send what is left of the reply; 1 when done, 0 when waiting, -1 when the peer is gone. */
static int conn_flush(struct server *s, struct conn *c)
{
	while (c->out_sent < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_sent, c->out_len - c->out_sent, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return conn_watch(s, c, EPOLLOUT) ? -1 : 0;
		if (n < 0)
			return -1;
		c->out_sent += n;
	}
	if (c->out_chunk)
		arena_put(s->ar, c->out_chunk);
	c->out_chunk = NULL;
	c->out = NULL;
	c->busy_since = 0;
	return conn_watch(s, c, EPOLLIN) ? -1 : 1;
}

/* Queue a reply; errors after which the stream cannot continue close it. */
static void conn_reply(struct conn *c, const uint8_t *frame, size_t len, uint8_t *chunk, int close_after)
{
	c->out = frame;
	c->out_chunk = chunk;
	c->out_len = len;
	c->out_sent = 0;
	c->close_after = close_after;
	c->busy_since = now();
}

static void conn_error(struct conn *c, uint8_t status, const char *msg, int close_after)
{
	conn_reply(c, c->errbuf, error_frame(c->errbuf, status, msg), NULL, close_after);
}

static void conn_process(struct server *s, struct conn *c)
{
	struct reply r;

	handle_request(s->ks, s->ar, c->op, c->in, c->in_len, &r);
	if (s->cfg->verbose)
		fprintf(stderr, "secbufd: uid %u %s (%u bytes): %s\n", (unsigned)c->uid,
			kd_op_name(c->op), c->in_len, kd_status_name(r.status));
	arena_put(s->ar, c->in);
	c->in = NULL;
	c->hdr_got = 0;
	if (r.status == KD_OK)
		conn_reply(c, r.frame, r.len, r.frame, 0);
	else
		conn_error(c, r.status, r.err, r.status == KD_E_MALFORMED);
}

/* A complete header: check it and find room for the body. */
static void conn_header(struct server *s, struct conn *c)
{
	char msg[KD_ERRMSG_MAX];

	if (kd_hdr_parse(c->hdr, &c->op, &c->in_len) < 0) {
		snprintf(msg, sizeof(msg), "bad header (protocol version %u expected)", KD_PROTO_VERSION);
		conn_error(c, KD_E_MALFORMED, msg, 1);
	} else if (c->in_len > s->cfg->max_body) {
		snprintf(msg, sizeof(msg), "request body of %u bytes exceeds the limit of %zu",
			 c->in_len, s->cfg->max_body);
		conn_error(c, KD_E_TOOBIG, msg, 1);
	} else if (!(c->in = arena_get(s->ar, c->in_len))) {
		snprintf(msg, sizeof(msg), "working buffer full: %u bytes do not fit now, retry later", c->in_len);
		conn_error(c, KD_E_BUSY, msg, 1);
	}
	c->in_got = 0;
}

/* Read until a frame is complete or the socket is drained. */
static void conn_read(struct server *s, struct conn *c)
{
	while (!c->out) {
		ssize_t n;

		if (c->hdr_got == KD_HDR_SIZE && c->in_got == c->in_len) {
			conn_process(s, c);
			break;
		}
		if (c->hdr_got < KD_HDR_SIZE)
			n = read(c->fd, c->hdr + c->hdr_got, KD_HDR_SIZE - c->hdr_got);
		else
			n = read(c->fd, c->in + c->in_got, c->in_len - c->in_got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			if (n == 0 && c->hdr_got > 0)
				conn_error(c, KD_E_TRUNCATED, "connection closed in the middle of a request", 1);
			else
				c->close_after = 2;	/* clean end of stream, or a read error */
			break;
		}
		if (!c->busy_since)
			c->busy_since = now();
		if (c->hdr_got < KD_HDR_SIZE) {
			c->hdr_got += n;
			if (c->hdr_got == KD_HDR_SIZE)
				conn_header(s, c);
		} else {
			c->in_got += n;
		}
	}
}

static void conn_event(struct server *s, struct conn *c, uint32_t events)
{
	int rc = 0;

	if (!c->out && (events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
		conn_read(s, c);
	if (c->close_after == 2)
		goto close;
	while (c->out) {
		int close_after = c->close_after;

		rc = conn_flush(s, c);
		if (rc <= 0)
			break;
		if (close_after)
			goto close;
		conn_read(s, c);	/* a pipelined request may be buffered already */
		if (c->close_after == 2)
			goto close;
	}
	if (rc >= 0)
		return;
close:
	conn_close(s, c);
}

static void accept_one(struct server *s, int lfd)
{
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	struct epoll_event ev = { .events = EPOLLIN };
	char msg[KD_ERRMSG_MAX];
	struct conn *c;
	int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd < 0)
		return;
	c = calloc(1, sizeof(*c));
	if (!c || getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) < 0) {
		free(c);
		close(fd);
		return;
	}
	c->tag = TAG_CONN;
	c->fd = fd;
	c->uid = cred.uid;
	if (cred.uid != s->uid && cred.uid != 0) {
		if (s->uid == 0)
			snprintf(msg, sizeof(msg), "uid %u may not use this daemon: it serves root only",
				 (unsigned)cred.uid);
		else
			snprintf(msg, sizeof(msg), "uid %u may not use this daemon: it serves uid %u and root only",
				 (unsigned)cred.uid, (unsigned)s->uid);
		fprintf(stderr, "secbufd: refused pid %d: %s\n", (int)cred.pid, msg);
		conn_error(c, KD_E_DENIED, msg, 1);
	} else if (s->nconns == SERVER_MAX_CONNS) {
		conn_error(c, KD_E_BUSY, "too many connections, retry later", 1);
	}
	if (c->out) {
		/* A short frame on a fresh socket: one send, then close either way. */
		if (send(fd, c->out, c->out_len, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
			fprintf(stderr, "secbufd: refusal not delivered: %s\n", strerror(errno));
		close(fd);
		free(c);
		return;
	}
	ev.data.ptr = c;
	if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		close(fd);
		free(c);
		return;
	}
	s->conns[s->nconns++] = c;
}

/* Close connections that sat in the middle of a frame for too long. */
static void sweep(struct server *s)
{
	time_t t = now();

	for (unsigned i = 0; i < s->nconns; i++) {
		struct conn *c = s->conns[i];

		if (!c->busy_since || t - c->busy_since < SERVER_FRAME_TIMEOUT)
			continue;
		if (!c->out)
			conn_error(c, KD_E_TIMEOUT, "request not completed in time", 1);
		/* One last non-blocking attempt to say why, then drop it. */
		(void)send(c->fd, c->out + c->out_sent, c->out_len - c->out_sent, MSG_NOSIGNAL | MSG_DONTWAIT);
		conn_close(s, c);
		i--;
	}
}

/*
 * The socket's directory, one level, when missing (/run/secbufd outside
 * systemd, whose RuntimeDirectory= makes it otherwise); bind() reports
 * anything that still stands in the way.
 */
static void make_socket_dir(const char *path)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];

	snprintf(dir, sizeof(dir), "%s", path);
	if (mkdir(dirname(dir), 0755) == 0)
		fprintf(stderr, "secbufd: created %s\n", dir);
}

static int listen_on(const struct server_config *cfg)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	mode_t old;
	int fd;

	if (strlen(cfg->path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "secbufd: socket path too long: %s\n", cfg->path);
		return -1;
	}
	strcpy(sa.sun_path, cfg->path);
	make_socket_dir(cfg->path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto fail;
	/* Replace a stale socket, never a live one nor any other kind of file. */
	if (lstat(cfg->path, &st) == 0 && S_ISSOCK(st.st_mode)) {
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 || errno == EAGAIN) {
			fprintf(stderr, "secbufd: another daemon is listening on %s\n", cfg->path);
			close(fd);
			return -1;
		}
		unlink(cfg->path);
	}
	old = umask(0177);	/* the socket is never reachable with a wider mode */
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		umask(old);
		goto fail;
	}
	umask(old);
	if (chmod(cfg->path, cfg->mode) < 0 || listen(fd, 128) < 0)
		goto fail;
	return fd;
fail:
	fprintf(stderr, "secbufd: cannot listen on %s: %s\n", cfg->path, strerror(errno));
	if (fd >= 0)
		close(fd);
	return -1;
}

/*
 * The socket systemd passed when it started secbufd for its socket unit,
 * which holds it while no daemon runs so that the first client starts one;
 * else one bound here, as without systemd.
 */
static int listen_fd(struct server *s)
{
	struct sockaddr_un sa;
	socklen_t len = sizeof(sa);
	int fd = activation_socket();

	if (fd == ACTIVATION_NONE)
		return listen_on(s->cfg);
	if (fd < 0)
		return -1;
	s->activated = 1;
	if (getsockname(fd, (struct sockaddr *)&sa, &len) < 0 ||
	    len <= offsetof(struct sockaddr_un, sun_path) || !sa.sun_path[0])
		snprintf(sa.sun_path, sizeof(sa.sun_path), "an abstract or unnamed socket");
	fprintf(stderr,
		"secbufd: listening on %.*s, passed by systemd (LISTEN_FDS; its socket unit sets "
		"the mode), max request %zu bytes\n",
		(int)sizeof(sa.sun_path), sa.sun_path, s->cfg->max_body);
	return fd;
}

static int add_fd(int epfd, int fd, int *tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = tag };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

static int signal_fd(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);	/* nothing to reload: a hangup ends the daemon, with the wipe */
	sigaddset(&set, SIGQUIT);	/* its default, a core dump, would skip the wipe */
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return -1;
	return signalfd(-1, &set, SFD_CLOEXEC);
}

int server_run(const struct server_config *cfg, struct keystore *ks, struct arena *ar)
{
	struct server s = { .cfg = cfg, .ks = ks, .ar = ar, .uid = geteuid() };
	struct signalfd_siginfo si;
	int sfd = signal_fd(), lfd = -1, stop = 0;

	s.epfd = epoll_create1(EPOLL_CLOEXEC);
	if (sfd < 0 || s.epfd < 0 || (lfd = listen_fd(&s)) < 0 ||
	    add_fd(s.epfd, lfd, &tag_listen) < 0 || add_fd(s.epfd, sfd, &tag_signal) < 0) {
		if (lfd >= 0)
			fprintf(stderr, "secbufd: epoll/signalfd setup: %s\n", strerror(errno));
		return -1;
	}
	if (!s.activated)
		fprintf(stderr, "secbufd: listening on %s (mode %04o, max request %zu bytes)\n",
			cfg->path, (unsigned)cfg->mode, cfg->max_body);
	if (notify_manager("READY=1") < 0)
		fprintf(stderr, "secbufd: cannot notify the service manager: %s\n", strerror(errno));

	while (!stop) {
		struct epoll_event ev[64];
		int n = epoll_wait(s.epfd, ev, 64, 1000);

		if (n < 0 && errno != EINTR) {
			fprintf(stderr, "secbufd: epoll_wait: %s\n", strerror(errno));
			break;
		}
		for (int i = 0; i < n; i++) {
			int tag = *(int *)ev[i].data.ptr;

			if (tag == TAG_LISTEN)
				accept_one(&s, lfd);
			else if (tag == TAG_SIGNAL)
				stop = read(sfd, &si, sizeof(si)) == sizeof(si);
			else
				conn_event(&s, ev[i].data.ptr, ev[i].events);
		}
		sweep(&s);
	}

	notify_manager("STOPPING=1");
	if (stop)
		fprintf(stderr, "secbufd: %s: wiping %u keys and the working buffer\n",
			strsignal(si.ssi_signo), ks->n);
	while (s.nconns)
		conn_close(&s, s.conns[0]);
	ks_wipe(ks);
	arena_wipe(ar);
	/* systemd's socket stays: the socket unit listens on for the next start. */
	if (!s.activated)
		unlink(cfg->path);
	close(lfd);
	close(sfd);
	close(s.epfd);
	return stop ? 0 : -1;
}
