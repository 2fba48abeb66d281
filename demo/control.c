/*
 * secbuf-control - the control of the swap experiment: holds secrets in
 * ordinary malloc memory, as a program without secbuf would.
 * Reads one secret per line on stdin (hex), prints "ready N", then sleeps
 * until SIGTERM/SIGINT.  Nothing is wiped: that is the point.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_SECRETS 64

/* Global, so the copies stay reachable until exit. */
unsigned char *held[MAX_SECRETS];

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int main(void)
{
	char line[1024];
	int n = 0;
	sigset_t set;
	int sig;

	while (n < MAX_SECRETS && fgets(line, sizeof(line), stdin)) {
		size_t len = strcspn(line, " \r\n") / 2;
		unsigned char *p = len ? malloc(len) : NULL;

		for (size_t i = 0; p && i < len; i++) {
			int hi = hexval(line[2 * i]), lo = hexval(line[2 * i + 1]);

			if (hi < 0 || lo < 0) {
				fprintf(stderr, "secbuf-control: line %d is not hex\n", n + 1);
				return 2;
			}
			p[i] = hi << 4 | lo;
		}
		if (p)
			held[n++] = p;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("ready %d\n", n);
	fflush(stdout);
	sigwait(&set, &sig);
	return 0;
}
