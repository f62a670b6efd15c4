/*
 * sdnotify: tells the service manager how the daemon is doing (sd_notify(3)): "READY=1" once it
 * serves, "STATUS=..." for `systemctl status`, "STOPPING=1" on the way out.
 *
 * The protocol is one datagram of newline-separated KEY=VALUE lines to the AF_UNIX socket that
 * $NOTIFY_SOCKET names: a path, or '@' for the abstract namespace. It is written out here
 * rather than taken from libsystemd: attestd would pull libsystemd and its compression
 * libraries into every guest image for these few lines of a stable, documented protocol.
 *
 * sdnotify() returns 0 when the message was sent or when there is nowhere to send it (no
 * $NOTIFY_SOCKET: not started by systemd, or not Type=notify); -errno otherwise (-EAFNOSUPPORT
 * for a socket kind other than AF_UNIX, such as vsock). It logs nothing and never blocks:
 * callers ignore a failure, which at worst leaves the unit's status stale.
 */
#ifndef COMMON_SDNOTIFY_H
#define COMMON_SDNOTIFY_H

int sdnotify(const char *state);

#endif
