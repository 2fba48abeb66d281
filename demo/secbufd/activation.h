/*
 * activation.h - the listening socket systemd passes to a socket-activated
 * service, taken as sd_listen_fds(3) describes the protocol, written out
 * like notify.h: the guest's programs are static and link no libsystemd.
 */
#ifndef SECBUFD_ACTIVATION_H
#define SECBUFD_ACTIVATION_H

#define ACTIVATION_NONE	 (-1) /* nothing passed to this process */
#define ACTIVATION_ERROR (-2) /* passed, but unusable (message printed) */

/*
 * The socket systemd passed: when LISTEN_PID is this process and LISTEN_FDS
 * is 1, fd 3, checked to be a listening AF_UNIX stream socket and made
 * non-blocking and close-on-exec.  ACTIVATION_NONE when LISTEN_FDS is unset
 * or 0, or meant for another process; ACTIVATION_ERROR for more than one
 * socket or one of another kind.  Unsets LISTEN_PID, LISTEN_FDS and
 * LISTEN_FDNAMES in every case, so that no child takes them for its own.
 */
int activation_socket(void);

#endif
