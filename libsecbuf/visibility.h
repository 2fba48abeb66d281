/*
 * Symbol visibility, for every part of libsecbuf: sb_* names are hidden
 * (and local in libsecbuf.a), only the secbuf_* API is exported.
 */
#ifndef SECBUF_VISIBILITY_H
#define SECBUF_VISIBILITY_H

#define SB_HIDDEN __attribute__((visibility("hidden")))
#define SB_API	  __attribute__((visibility("default")))

#endif
