/*
 * procfs.h - the audit's own readers of /proc/PID/stat and comm (smaps,
 * pagemap and kpageflags are kfacts'): a process's identity and its name.
 * Each reads an open file, as a fuzzing harness feeds it, or the pid's.
 */
#ifndef SECBUF_AUDIT_PROCFS_H
#define SECBUF_AUDIT_PROCFS_H

#include <stddef.h>
#include <sys/types.h>

#define PROC_COMM_LEN 16 /* the kernel's TASK_COMM_LEN: 15 bytes and a NUL */

/* What /proc/PID/stat says of a process that tells it apart from the next. */
struct proc_id {
	char comm[PROC_COMM_LEN];
	char state;
	unsigned long long starttime; /* clock ticks after boot: a reused pid differs */
};

/* 0, or -1 with errno: ESRCH for an empty file (the task is gone), EPROTO. */
int proc_id_read(int fd, struct proc_id *id);
int proc_id_of(pid_t pid, struct proc_id *id);

/* The name as the kernel keeps it (any bytes but NUL), or "?" if unreadable. */
void proc_comm_read(int fd, char *comm, size_t size);
void proc_comm_of(long pid, char *comm, size_t size);

#endif
