/*
 * textfile.h - replace a file in one step, as node_exporter's textfile
 * collector needs: it reads whatever *.prom file is there when it is
 * scraped, so a file must never be seen half written.
 */
#ifndef SECBUF_AUDIT_TEXTFILE_H
#define SECBUF_AUDIT_TEXTFILE_H

#include <stddef.h>

/*
 * Write data to a new file beside path (".NAME.XXXXXX": not *.prom, so the
 * collector skips it), with the mode 0666 less the umask, flush it to the
 * disk and rename it over path.  A reader sees the old file or the new
 * one, whole.  Returns 0, or -1 with errno: then path is as it was and
 * the new file is gone (a full disk, a read-only directory).
 */
int textfile_replace(const char *path, const char *data, size_t len);

#endif
