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


.PHONY: all deps deps-host deps-host-tests deps-guest deps-bench deps-fuzzing check-deps lib kernel kernel-stock kernel-lint kernel-bisect guest guest-image check check-host lint \
	check-guest check-asan check-valgrind demo demo-host demo-minisign bench bench-audit bench-audit-key bench-compare bench-openssl install uninstall \
	qemu-shell clean deps-debian deb check-debian bench-kcost check-man-pages kernel-fix-alone kernel-letters \
	check-kernel-debug deps-arm64 check-arm64 check-python bench-python check-go bench-go check-rust bench-rust \
	fuzz fuzz-guest fuzz-coverage

all: lib
	$(MAKE) -C demo all
	$(MAKE) -C bench all

# Debian's packages, one group per target (.ci/deps lists them): each
# target installs what it uses, and make deps everything make check needs.
deps:
	@.ci/deps check

# A compiler, make, pkg-config and libsodium: the library, the demo's
# programs and make demo-host.
deps-host:
	@.ci/deps host

# The host tests: check, valgrind, Prometheus and the node exporter.
deps-host-tests:
	@.ci/deps host host-tests

# The guest kernels' sources and build tools, QEMU, busybox, and the
# static libraries the guest's test programs link.
deps-guest:
	@.ci/deps host host-tests guest

# make bench: the guest's and gnuplot for the charts.
deps-bench:
	@.ci/deps host host-tests guest bench

# clang's libFuzzer, for the fuzz targets.
deps-fuzzing:
	@.ci/deps host fuzzing

# The quick start in a fresh Debian 12 chroot (mmdebstrap minbase): make
# demo-host installs the host group only, and runs, as root and as a user
# (root; a few minutes; not part of check).
check-deps: deps-debian
	@.ci/deps-chroot

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
kernel: deps-guest
	@kernel/build.sh patched $(KVER) >/dev/null

kernel-stock: deps-guest
	@kernel/build.sh stock $(KVER) >/dev/null

kernel-lint: deps-guest
	@kernel/lint.sh $(KVER)

# Rewrite every cover letter's patch list and diffstat (and each patch's
# diffstat) from the patches, with git format-patch; make lint checks them.
kernel-letters: deps-guest
	@kernel/letters.sh $(KVERS)

# Build after every patch of the series (15 to 30 min; not part of check).
kernel-bisect: deps-guest
	@kernel/bisect.sh $(KVER)

# Each of KVERS with only the remap_file_pages() fix and its
# selftest (kernel/patches/KVER/fix), against stock KVER (builds a kernel
# of its own, ~7 min the first time; not part of check).
kernel-fix-alone: deps-guest
	@for v in $(KVERS); do kernel/fix-alone.sh $$v || exit 1; done

# The series on the debug kernels (KASAN, lockdep, DEBUG_VM): the guest
# suites, lof-fuzz and trinity, for KVER or both versions; not part
# of check (20 min of fuzzing per version plus the suites).
check-kernel-debug: deps-guest
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
	$(MAKE) -C tests/fuzz guest
	$(MAKE) -C bench guest
	$(MAKE) -C bindings/go guest
	@bindings/rust/guest/build
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
fuzz: deps-fuzzing
	@$(MAKE) -s -C tests/fuzz fuzz

# The sequence fuzzer under libFuzzer (static, UBSan trapping, no ASan) in
# the guest on FUZZ_KERNEL (default patched; patched-6.12 too), where
# MAP_LOCKONFAULT is the lock method, for FUZZ_SECONDS (default 600).
# Prints executions, execs/s, coverage and crashes; the crash inputs and new
# inputs it sent back are in build/fuzz/guest/KERNEL/{crashes,new}.  Not
# part of check, which replays.
FUZZ_KERNEL ?= patched
# The image carries what the harness's helpers (qemu/, tests/guest/) left.
fuzz-guest: deps-fuzzing deps-guest lib
	@$(MAKE) -s -C qemu guest
	@$(MAKE) -s -C tests/guest guest
	@$(MAKE) -s -C tests/fuzz guest-fuzz
	@rc=0; qemu/run-guest --kernel $(FUZZ_KERNEL) --mem 1G --timeout $$(( $(or $(FUZZ_SECONDS),600) + 600 )) \
		--env FUZZ_SECONDS=$(or $(FUZZ_SECONDS),600) sequence-fuzz@$(FUZZ_KERNEL) || rc=$$?; \
	tests/fuzz/guest-keep build/logs/sequence-fuzz@$(FUZZ_KERNEL)/keep.txt build/fuzz/guest/$(FUZZ_KERNEL); \
	exit $$rc

# Line and branch coverage (llvm-cov-16) of the fuzzed files after the
# committed corpora: the table of tests/fuzz/RESULTS.md.
fuzz-coverage: deps-fuzzing
	@$(MAKE) -s -C tests/fuzz coverage

check-host: deps-host-tests
	@tests/run-all --host-only

check-guest: deps-guest
	@tests/run-all --guest-only

# The Python binding's pytest suite (a stage of check).
check-python: deps lib
	$(MAKE) -C bindings/python check

# The Go binding's go test (a stage of check), and its benchmark against
# memguard (bench/results/bindings-go.md; not part of check).
check-go: deps lib
	$(MAKE) -C bindings/go check

bench-go: deps lib
	$(MAKE) -C bindings/go bench

# The Rust binding's tests (cargo test --offline against Debian's crates
# and the tree's libsecbuf.a; a stage of check).
check-rust: deps lib
	@bindings/rust/run-tests

check-asan: deps-host-tests
	$(MAKE) -C tests/host check-asan
	$(MAKE) -C demo check-asan
	$(MAKE) -C bindings/python check-asan

check-valgrind: deps-host-tests
	$(MAKE) -C tests/host check-valgrind

demo: deps-guest
	$(MAKE) -C demo demo

# Built quietly (make -s): the story, not the compiler's lines.
demo-host: deps-host
	@$(MAKE) -s lib
	@$(MAKE) -s -C demo demo-host

# Debian's minisign under secbuf-run in QEMU: its key locked, never in swap
# (the minisign suite of make check, with SECBUF_LOCK=none as the control).
demo-minisign: deps-guest guest-image
	@tests/guest/run-suite minisign

bench: deps-bench lib kernel kernel-stock
	$(MAKE) -C bench bench
	$(MAKE) -C bench openssl

# The library at BASE against the tree's, alternating, on this machine:
# packed pairs on 1 and 2 threads and the 1 GiB case, with ratios (a few
# minutes; not part of check): make bench-compare BASE=REV [ROUNDS=7].
bench-compare: deps-host
	@test -n "$(BASE)" || { echo "usage: make bench-compare BASE=REV [ROUNDS=N]" >&2; exit 2; }
	@bench/compare "$(BASE)" $(ROUNDS)

# OpenSSL 3 alone and under libsecbuf-openssl.so, on the host: handshakes,
# key load, locked memory, live secrets (bench/results/openssl.md; ~2 min).
bench-openssl: deps lib
	$(MAKE) -C bench openssl

# The Python binding against the C API, per call and for 1 GiB, in one
# process (bench/results/bindings-python.md; a minute).
bench-python: deps lib
	$(MAKE) -C bindings/python bench

# The Rust binding against memsec and against the C API, side by side
# (bench/results/bindings-rust.md; minutes, mostly memsec's 1 GiB mlock;
# not part of check).
bench-rust: deps lib
	@bindings/rust/bench/run

# Only the kernel-cost boots, stock against patched KVER, under -icount
# (bench/results/kcost.md for 6.1, kcost-6.12.md for 6.12).
bench-kcost: deps-bench lib
	@kernel/build.sh patched $(KVER) >/dev/null && kernel/build.sh stock $(KVER) >/dev/null
	$(MAKE) -C bench all guest
	@bench/run kcost $(KVER)

# secbuf-audit --host against 100, 1,000 and 5,000 processes and its floor
# (root: a PID namespace; about a minute; bench/results/audit.md).
bench-audit: deps-bench lib
	$(MAKE) -C demo all
	$(MAKE) -C bench all
	@bench/audit-scale

# secbuf-audit --key's scan rate, a 1 GiB image and a 1 GiB process, 1, 10
# and 100 keys, against the raw read (bench/results/audit-key.md); root.
bench-audit-key: deps-bench lib
	$(MAKE) -C demo all
	@bench/audit-key

# The library (with header, pkg-config file and man pages), the demo's
# programs with their man pages, the systemd unit, and the Python binding
# for PYTHON where it looks for PREFIX's packages (pip install, built
# against the library just installed).  PYTHON is Debian's /usr/bin/python3
# when there is one (without pip, setuptools, wheel or Python.h, a line says
# the binding was skipped); PYTHON= installs no binding.
PYTHON ?= $(wildcard /usr/bin/python3)
install: lib
	$(MAKE) -C libsecbuf install PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)
	$(MAKE) -C demo install PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)
	$(if $(PYTHON),$(MAKE) -C bindings/python install PREFIX=$(PREFIX) DESTDIR=$(DESTDIR) PYTHON=$(PYTHON) \
		$(if $(filter file,$(origin PYTHON)),PYTHON_OPTIONAL=1))
	@mk/after-install "$(PREFIX)" "$(DESTDIR)"

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
	$(if $(PYTHON),$(MAKE) -C bindings/python uninstall PREFIX=$(PREFIX) DESTDIR=$(DESTDIR) PYTHON=$(PYTHON))
	$(MAKE) -C libsecbuf uninstall PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)
	$(MAKE) -C demo uninstall PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)

qemu-shell: deps-guest
	$(MAKE) guest KVERS=$(KVER)
	qemu/run-guest --kernel patched-$(KVER) --shell

clean:
	rm -rf build
