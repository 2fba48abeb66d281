# mk/common.mk - the build settings every Makefile of secbuf shares: the
# version, install paths, warnings, hardening and sanitizers.  Included by
# libsecbuf/, demo/, bench/ and tests/host/ (each sets TOP first).
#
# CFLAGS, CPPFLAGS, LDFLAGS, PREFIX and DESTDIR belong to the user (command
# line or environment).  Our flags come first and the user's last, so that
# the user's win where they conflict (-O0 over -O2, say).

VERSION  := 1.0.0

PREFIX   ?= /usr/local
DESTDIR  ?=
BINDIR   ?= $(PREFIX)/bin
SBINDIR  ?= $(PREFIX)/sbin
MANDIR   ?= $(PREFIX)/share/man
# The directories install had to make, so that uninstall removes them
# when empty and leaves those it found (mk/install-dirs).
DIRS_MANIFEST = $(DESTDIR)$(PREFIX)/share/secbuf/installed-dirs
MAKE_DIRS     = $(TOP)/mk/install-dirs $(DIRS_MANIFEST)
REMOVE_DIRS   = $(TOP)/mk/install-dirs --remove $(DIRS_MANIFEST)

CFLAGS   ?= -O2 -g

# All C of the project: C11 with GNU extensions, free of warnings.
WARN_CFLAGS := -std=gnu11 -Wall -Wextra -Werror

# Hardening of everything that is installed: the library and the programs.
# _FORTIFY_SOURCE only works when optimising, hence the -O2 (which the
# user's CFLAGS may still override).
HARDEN_CPPFLAGS := -D_FORTIFY_SOURCE=2
HARDEN_CFLAGS   := -O2 -fstack-protector-strong
HARDEN_LDFLAGS  := -Wl,-z,relro,-z,now
# Programs are position independent, so ASLR moves the executable too.
# (Static guest binaries are linked without -pie.)
PIE_CFLAGS  := -fPIE
PIE_LDFLAGS := -pie

# ASan and UBSan, for the check-asan targets.
SANITIZE := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

# The machine the guest programs are built for: KARCH=arm64 cross-builds
# them (make guest, make guest-image) into build/arm64/ for the arm64
# guest; x86-64, the host's own, builds into build/.  Host programs and
# tests are only ever built for the host.
KARCH ?= x86_64
ifeq ($(KARCH),x86_64)
BUILD := $(TOP)/build
else ifeq ($(KARCH),arm64)
CROSS_COMPILE ?= aarch64-linux-gnu-
CC      := $(CROSS_COMPILE)gcc
AR      := $(CROSS_COMPILE)ar
OBJCOPY := $(CROSS_COMPILE)objcopy
BUILD := $(TOP)/build/arm64
else
$(error KARCH=$(KARCH): x86_64 or arm64)
endif
