# secbuf: lock-on-fault for Linux 6.1 and 6.12 and a secure-buffer library
# on top.  Each target is one user-facing job; the work lives in the scripts
# it calls.

SHELL := /bin/bash
PREFIX ?= /usr/local
DESTDIR ?=
# The kernel version the kernel-* targets and qemu-shell work on, and every
# version the guest image carries test programs for (kernel/patches/KVER).
KVER ?= 6.1
KVERS ?= 6.1 6.12
# The guest's machine: x86_64 (the host's), or arm64 for make check-arm64.
KARCH ?= x86_64


.PHONY: all deps lib kernel kernel-stock kernel-lint kernel-bisect guest guest-image check check-host lint \
	check-guest check-asan check-valgrind demo demo-host demo-minisign bench bench-audit install uninstall \
	qemu-shell clean deps-debian deb check-debian bench-kcost check-man-pages kernel-fix-alone \
	check-kernel-debug deps-arm64 check-arm64 fuzz fuzz-coverage

all: lib
	$(MAKE) -C demo all
	$(MAKE) -C bench all

deps:
	@.ci/deps

# What make deb and make check-debian need beyond make deps.
deps-debian:
	@.ci/deps debian

# What make check-arm64 needs beyond make deps: the cross compiler,
# qemu-system-aarch64, arm64's libraries and busybox.
deps-arm64: deps
	@.ci/deps arm64

lib:
	$(MAKE) -C libsecbuf

# The guest kernel KVER, patched with kernel/patches/KVER/series or not,
# cached by hash.
kernel: deps
	@kernel/build.sh patched $(KVER) >/dev/null

kernel-stock: deps
	@kernel/build.sh stock $(KVER) >/dev/null

kernel-lint: deps
	@kernel/lint.sh $(KVER)

# Build after every patch of the series (15 to 30 min; not part of check).
kernel-bisect: deps
	@kernel/bisect.sh $(KVER)

# 6.12 with only the remap_file_pages() fix, against stock 6.12 (builds
# a kernel of its own, ~7 min the first time; not part of check).
kernel-fix-alone: deps
	@kernel/fix-alone.sh

# The series on the debug kernels (KASAN, lockdep, DEBUG_VM): the guest
# suites, lof-fuzz and trinity, for KVER or both versions; not part
# of check (20 min of fuzzing per version plus the suites).
check-kernel-debug: deps
	@kernel/debug-check.sh $(KVER)

# The man-pages patches (kernel/man-pages) applied to a man-pages git tree
# and linted: make check-man-pages MANPAGES=/path/to/man-pages.  Not part
# of check, which has no man-pages tree.
check-man-pages:
	@test -n "$(MANPAGES)" || { echo "usage: make check-man-pages MANPAGES=/path/to/man-pages" >&2; exit 2; }
	@kernel/man-pages/check.sh "$(MANPAGES)"

# Everything the guest image carries, built static into build/guest/bin;
# the kernel's test programs for each of KVERS (this builds those kernels).
# KARCH=arm64 cross-builds the arm64 guest's (build/arm64/guest/bin): the
# tests, proofs and demo, without the drop-in (its guests run Debian's
# own programs) or the benchmarks (they read x86's TSC).
guest: lib
	$(MAKE) -C qemu guest
	$(MAKE) -C tests/guest guest
	$(MAKE) -C tests/host guest
	@for v in $(KVERS); do kernel/selftests.sh $$v || exit 1; done
	$(MAKE) -C demo guest
ifeq ($(KARCH),x86_64)
	$(MAKE) -C libsecbuf guest
	$(MAKE) -C bench guest
endif

guest-image: guest
	@qemu/mkimage --arch $(KARCH) >/dev/null

# Host tests first, then every guest suite on the patched (and stock) kernel.
check: deps
	@tests/run-all

# shellcheck on every script, clang-format on changed C lines, checkpatch
# on the series (part of check).
lint: deps
	@.ci/lint

# The arm64 guest (tests/guest/suites-arm64): the kernels, cross-built,
# the series' selftests and the library's suite and proofs on patched 6.12
# with 4 KiB and 64 KiB pages and on patched 6.1, and the stock subset on
# stock 6.12.  Not part of check: 25 min with the kernels cached, and
# four cross builds of 5 to 10 min each when cold.
check-arm64: deps-arm64
	@tests/run-all --arm64

# Every input parser under libFuzzer (clang-16, ASan+UBSan) for
# FUZZ_SECONDS each (default 180), and the sequence fuzzer of libsecbuf
# with each lock method; not part of check, which replays the corpora.
fuzz: deps
	@$(MAKE) -s -C tests/fuzz fuzz

# Line and branch coverage (llvm-cov-16) of the fuzzed files after the
# committed corpora: the table of tests/fuzz/RESULTS.md.
fuzz-coverage: deps
	@$(MAKE) -s -C tests/fuzz coverage

check-host: deps
	@tests/run-all --host-only

check-guest: deps
	@tests/run-all --guest-only

check-asan: deps
	$(MAKE) -C tests/host check-asan
	$(MAKE) -C demo check-asan

check-valgrind: deps
	$(MAKE) -C tests/host check-valgrind

demo: deps
	$(MAKE) -C demo demo

demo-host: deps lib
	$(MAKE) -C demo demo-host

# Debian's minisign under secbuf-run in QEMU: its key locked, never in swap
# (the minisign suite of make check, with SECBUF_LOCK=none as the control).
demo-minisign: deps guest-image
	@tests/guest/run-suite minisign

bench: deps lib kernel kernel-stock
	$(MAKE) -C bench bench

# Only the kernel-cost boots, stock against patched KVER, under -icount
# (bench/results/kcost.md for 6.1, kcost-6.12.md for 6.12).
bench-kcost: deps lib
	@kernel/build.sh patched $(KVER) >/dev/null && kernel/build.sh stock $(KVER) >/dev/null
	$(MAKE) -C bench all guest
	@bench/run kcost $(KVER)

# secbuf-audit --host against 100, 1,000 and 5,000 processes and its floor
# (root: a PID namespace; about a minute; bench/results/audit.md).
bench-audit: deps lib
	$(MAKE) -C demo all
	$(MAKE) -C bench all
	@bench/audit-scale

# The library (with header, pkg-config file and man pages), the demo's
# programs with their man pages, and the systemd unit.
install: lib
	$(MAKE) -C libsecbuf install PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)
	$(MAKE) -C demo install PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)

# The Debian packages libsecbuf1, libsecbuf-dev, secbufd and secbuf-tools,
# built from the committed tree into build/deb/, then lintian and a check
# of their contents.
deb: deps deps-debian
	@mk/deb

# The packages installed with apt in a Debian guest (systemd as PID 1, the
# patched kernel with what systemd needs): secbufd started, audited, under
# swap pressure, stopped, removed.  Not part of check (see README.md).
check-debian: deps deps-debian
	@tests/debian/check

# Removes exactly what install put there (the same PREFIX and DESTDIR).
uninstall:
	$(MAKE) -C libsecbuf uninstall PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)
	$(MAKE) -C demo uninstall PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)

qemu-shell: deps
	$(MAKE) guest KVERS=$(KVER)
	qemu/run-guest --kernel patched-$(KVER) --shell

clean:
	rm -rf build
