/*
 * pool.c's hooks around fork(), which init.c wires in through packed.h:
 * the pools' locks are held across fork(), and a child forgets the slabs
 * of its parent.  The pools' calls are in slab.h, for packed/ only.
 */
#ifndef SECBUF_PACKED_POOL_H
#define SECBUF_PACKED_POOL_H

#include "visibility.h"

SB_HIDDEN void sb_pool_fork_prepare(void);
SB_HIDDEN void sb_pool_fork_parent(void);
SB_HIDDEN void sb_pool_fork_child(void);

#endif
