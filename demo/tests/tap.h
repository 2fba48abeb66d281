/* tap.h - minimal TAP output for the demo's host tests. */
#ifndef DEMO_TAP_H
#define DEMO_TAP_H

/* Print "ok N desc" or "not ok N desc"; returns cond. */
int tap_ok(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tap_skip(const char *why, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Print the plan "1..N"; returns the exit status: 1 if anything failed. */
int tap_done(void);

#endif
