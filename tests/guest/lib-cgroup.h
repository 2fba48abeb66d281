/* A child cgroup (v2) of /sys/fs/cgroup for one test. */
#ifndef PROOF_LIB_CGROUP_H
#define PROOF_LIB_CGROUP_H

/* Create /sys/fs/cgroup/NAME (reused if present), set memory.max to max
 * ("max" for none) and move the caller into it.  0 or -1/errno. */
int cgroup_enter(const char *name, const char *max);
/* A "key value" field of a file in the group, e.g. memory.events oom_kill;
 * -1 if absent. */
long cgroup_field(const char *name, const char *file, const char *key);

#endif
