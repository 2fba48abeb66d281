/*
 * notify.h - readiness for systemd (Type=notify): one datagram to
 * $NOTIFY_SOCKET, as sd_notify(3) sends it, without linking libsystemd
 * (the guest's programs are static).
 */
#ifndef SECBUFD_NOTIFY_H
#define SECBUFD_NOTIFY_H

/*
 * Send state ("READY=1", "STOPPING=1", ...) to the service manager.
 * Returns 0, also when not started by one ($NOTIFY_SOCKET unset); -1 with
 * errno when the message could not be sent.
 */
int notify_manager(const char *state);

#endif
