# mk/libsecbuf.mk - for Makefiles whose programs link the in-tree static
# library: the archive is remade (by libsecbuf/Makefile, which knows how)
# whenever one of its sources or build settings is newer than it, so a
# stale library is never linked.  Include after mk/common.mk.
LIBSECBUF := $(BUILD)/lib/libsecbuf.a
# The private /proc and kernel-facts helpers (libsecbuf/kfacts/kfacts.h).
LIBKFACTS := $(BUILD)/lib/libkfacts.a
KFACTS_CPPFLAGS := -I$(TOP)/libsecbuf/kfacts
LIBSECBUF_SOURCES := $(TOP)/include/secbuf.h $(wildcard $(TOP)/libsecbuf/*.[ch]) \
		     $(wildcard $(TOP)/libsecbuf/*/*.[ch]) \
		     $(TOP)/libsecbuf/Makefile $(TOP)/mk/common.mk

# Not the including Makefile's default goal: that stays its first own target.
libsecbuf_mk_goal := $(.DEFAULT_GOAL)

# OUT is named explicitly: the including Makefile's own OUT (passed on its
# command line) would otherwise reach libsecbuf/Makefile through MAKEFLAGS.
$(LIBSECBUF) $(LIBKFACTS): $(LIBSECBUF_SOURCES)
	$(MAKE) -C $(TOP)/libsecbuf OUT=$(BUILD) $@

.DEFAULT_GOAL := $(libsecbuf_mk_goal)
