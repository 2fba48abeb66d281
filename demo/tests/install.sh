#!/bin/bash
# shellcheck source-path=SCRIPTDIR
# make install and make uninstall from the top of the tree, as a packager
# or an operator runs them: where each file lands, --version, the man
# pages, the hardening of the installed ELF files, secbuf.pc, the systemd
# units (secbufd's, the audit's service and timer), and an uninstall that
# leaves no file behind.  systemd is not PID 1 on a build host, so the
# units are checked with systemd-analyze verify and their syscall
# filters, never started.
# usage: tests/install.sh BINDIR   (prints TAP)
set -u
bin=$1
# shellcheck source=tree.sh
. "$(dirname "$0")/tree.sh" install
version=$(sed -n 's/^VERSION *:= *//p' "$top/mk/common.mk")
dest=$tmp/dest

ok "make install DESTDIR=... PREFIX=/usr" make -s -C "$top" install DESTDIR="$dest" PREFIX=/usr
installed=$(cd "$dest" && find . ! -type d | sort)
echo "$installed" | sed 's/^/# /'
expect="./usr/bin/secbufctl ./usr/sbin/secbufd ./usr/bin/secbuf-audit
./usr/share/man/man8/secbufd.8 ./usr/share/man/man8/secbuf-audit.8 ./usr/share/man/man1/secbufctl.1
./usr/lib/systemd/system/secbufd.service ./usr/lib/systemd/system/secbuf-audit-textfile.service
./usr/lib/systemd/system/secbuf-audit-textfile.timer ./usr/lib/libsecbuf.so.1 ./usr/lib/libsecbuf.so ./usr/lib/libsecbuf.a
./usr/lib/pkgconfig/secbuf.pc ./usr/include/secbuf.h ./usr/share/man/man3/secbuf_alloc.3
./usr/lib/libsecbuf-sodium.so ./usr/bin/secbuf-run ./usr/share/man/man7/libsecbuf-sodium.7
./usr/lib/libsecbuf-openssl.so ./usr/share/man/man7/libsecbuf-openssl.7
./usr/share/man/man1/secbuf-run.1 ./usr/share/man/man7/secbuf.7"
missing=
for f in $expect; do grep -qxF "$f" <<<"$installed" || missing="$missing $f"; done
ok "programs, man pages (1, 3, 7, 8), units, libraries, header and secbuf.pc are installed${missing:+ (missing:$missing)}" \
	test -z "$missing"

for p in usr/sbin/secbufd usr/bin/secbufctl usr/bin/secbuf-audit; do
	ok "${p##*/} --version: exit 0, \"${p##*/} (secbuf) $version\"" \
		bash -c '[ "$("$1" --version)" = "$2 (secbuf) $3" ]' _ "$dest/$p" "${p##*/}" "$version"
done
for m in man8/secbufd.8 man1/secbufctl.1 man8/secbuf-audit.8; do
	f=$dest/usr/share/man/$m
	ok "man page ${m#*/} renders without warnings and carries the version" bash -c \
		'[ -z "$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$1" 2>&1 >/dev/null)" ] &&
		 grep -q "^\.TH .*\"secbuf $2\"" "$1"' _ "$f" "$version"
done
ok "man secbufd documents SIGHUP, the lock budget and the exit status" bash -c \
	'man -l "$1" 2>/dev/null | grep -q "SIGHUP" && man -l "$1" | grep -q "LOCK BUDGET" &&
	 man -l "$1" | grep -q "EXIT STATUS"' _ "$dest/usr/share/man/man8/secbufd.8"
ok "man secbuf-audit documents exit codes 0, 1, 2 and 3" bash -c \
	'man -l "$1" 2>/dev/null | sed -n "/EXIT STATUS/,/NOTES/p" >"$2" &&
	 for c in 0 1 2 3; do grep -qE "^ +$c +[A-Z]" "$2" || exit 1; done' _ "$dest/usr/share/man/man8/secbuf-audit.8" \
	"$tmp/exit"
ok "man secbuf-audit documents --host, its Prometheus series and the timer's directory" bash -c \
	'm=$(man -l "$0" 2>/dev/null) && for k in "--host" secbuf_audit_success secbuf_secret_memory_bytes \
		secbuf_audit_scan_errors_total "--output=/var/lib/prometheus/node-exporter/secbuf.prom"; do
		grep -qF -- "$k" <<<"$m" || { echo "# missing $k"; exit 1; }; done' \
	"$dest/usr/share/man/man8/secbuf-audit.8"

ok "secbuf-run --version: exit 0, \"secbuf-run (secbuf) $version\"" \
	bash -c '[ "$("$1" --version)" = "secbuf-run (secbuf) $2" ]' _ "$dest/usr/bin/secbuf-run" "$version"
ok "secbuf-run preloads the installed drop-ins (from /usr/lib)" \
	grep -qx 'libdir=/usr/lib' "$dest/usr/bin/secbuf-run"
ok "man libsecbuf-sodium renders without warnings, documents SECBUF_STRICT and the deviations" bash -c \
	'[ -z "$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$1" 2>&1 >/dev/null)" ] &&
	 man -l "$1" | grep -q SECBUF_STRICT && man -l "$1" | grep -q "No 0xdb fill" &&
	 man -l "$1" | grep -q "Forked children see zeros"' _ "$dest/usr/share/man/man7/libsecbuf-sodium.7"
ok "man secbuf (7, the threat model) renders without warnings, with what is and is not protected" bash -c \
	'[ -z "$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$1" 2>&1 >/dev/null)" ] &&
	 man -l "$1" | grep -q "^PROTECTED" && man -l "$1" | grep -q "^NOT PROTECTED"' _ \
	"$dest/usr/share/man/man7/secbuf.7"
ok "libsecbuf-sodium.so exports only the six sodium_* calls and needs only libc" bash -c \
	'[ "$(nm -D --defined-only "$1" | awk "{ print \$3 }" | sort | tr "\n" " ")" = \
	   "sodium_allocarray sodium_free sodium_malloc sodium_mprotect_noaccess sodium_mprotect_readonly sodium_mprotect_readwrite " ] &&
	 [ "$(readelf -dW "$1" | sed -n "s/.*(NEEDED).*\[\(.*\)\]/\1/p")" = libc.so.6 ]' _ "$dest/usr/lib/libsecbuf-sodium.so"
ok "secbuf.pc carries no rpath" bash -c '! grep -qi rpath "$1"' _ "$dest/usr/lib/pkgconfig/secbuf.pc"

# Hardening of what is installed: full RELRO, PIE, stack protector, fortify.
harden() {	# harden FILE [pie]
	local dyn syms
	dyn=$(readelf -dW "$1") && syms=$(readelf --dyn-syms -W "$1") || return 1
	grep -qE 'BIND_NOW|FLAGS_1.* NOW' <<<"$dyn" || { echo "# $1: no BIND_NOW"; return 1; }
	readelf -lW "$1" | grep -q GNU_RELRO || { echo "# $1: no GNU_RELRO"; return 1; }
	readelf -hW "$1" | grep -q 'Type: *DYN' || { echo "# $1: not DYN"; return 1; }
	if [ "${2:-}" = pie ]; then grep -qE 'FLAGS_1.* PIE' <<<"$dyn" || { echo "# $1: not PIE"; return 1; }; fi
	grep -q '__stack_chk_fail' <<<"$syms" || { echo "# $1: no stack protector"; return 1; }
	grep -qE '__[a-z_]+_chk@' <<<"$syms" || { echo "# $1: no _FORTIFY_SOURCE calls"; return 1; }
}
for p in usr/sbin/secbufd usr/bin/secbufctl usr/bin/secbuf-audit; do
	ok "${p##*/}: full RELRO (BIND_NOW), PIE, stack protector, _FORTIFY_SOURCE" harden "$dest/$p" pie
done
ok "libsecbuf.so.1: full RELRO, stack protector, _FORTIFY_SOURCE" harden "$dest/usr/lib/libsecbuf.so.1"
ok "libsecbuf-sodium.so: full RELRO, stack protector, _FORTIFY_SOURCE" harden "$dest/usr/lib/libsecbuf-sodium.so"

unit=$dest/usr/lib/systemd/system/secbufd.service
ok "the unit runs the installed daemon (ExecStart=/usr/sbin/secbufd ...)" grep -q '^ExecStart=/usr/sbin/secbufd ' "$unit"
aunit=$dest/usr/lib/systemd/system/secbuf-audit-textfile.service
ok "the audit's unit writes secbuf.prom into Debian's textfile directory, with the installed audit" bash -c \
	'grep -qx "ExecStart=/usr/bin/secbuf-audit --host --format=prometheus --output=$1/secbuf.prom" "$0" &&
	 grep -qx "ReadWritePaths=$1" "$0" && grep -qx "ConditionPathIsDirectory=$1" "$0"' \
	"$aunit" /var/lib/prometheus/node-exporter

ex=$dest/usr/share/doc/secbuf/examples/nginx-secbuf.conf
ok "the nginx unit drop-in is in PREFIX/share/doc/secbuf/examples, preloading the installed drop-in" bash -c \
	'grep -qx "Environment=LD_PRELOAD=/usr/lib/libsecbuf-openssl.so" "$1" &&
	 grep -q "cp /usr/share/doc/secbuf/examples/nginx-secbuf.conf" "$1" &&
	 grep -qx "Environment=LD_BIND_NOW=1" "$1" && ! grep -q "[$]LIB" "$1"' _ "$ex"
ok "a DESTDIR install says nothing of ldconfig or mandb (a package's staging tree)" bash -c \
	'! make -s -C "$1" install DESTDIR="$2" PREFIX=/usr 2>&1 | grep -q "ldconfig\|mandb"' _ "$top" "$dest"
ok "make uninstall with the same DESTDIR and PREFIX" make -s -C "$top" uninstall DESTDIR="$dest" PREFIX=/usr
left=$(cd "$dest" 2>/dev/null && find . ! -type d)
ok "after uninstall no file is left in DESTDIR${left:+ (left: $(echo $left))}" test -z "$left"
left=$(find "$dest" -mindepth 1 2>/dev/null)
ok "nor any directory install made${left:+ (left: $(echo $left))}" test -z "$left"

# A directory that was there before install is not uninstall's to remove.
mkdir -p "$tmp/own/bin" "$tmp/own/share/man/man1"
touch "$tmp/own/share/man/man1/theirs.1"
make -s -C "$top" install PREFIX="$tmp/own" >/dev/null 2>&1 &&
	make -s -C "$top" uninstall PREFIX="$tmp/own" >/dev/null 2>&1
left=$(cd "$tmp/own" && find . | sort | tr '\n' ' ')
ok "uninstall keeps the directories it found (${left})" \
	test "$left" = ". ./bin ./share ./share/man ./share/man/man1 ./share/man/man1/theirs.1 "

# systemd-analyze verify needs the unit's ExecStart binary and its man page
# where the unit says they are: install into a real prefix for it.
prefix=$tmp/prefix
# The textfile directory is the installer's choice too.
make -s -C "$top" install PREFIX="$prefix" TEXTFILE_DIR="$tmp/textfile" >"$tmp/install.out" 2>&1
ok "make install to a user's prefix says how programs find the library and man -k the pages" bash -c \
	'grep -q "LD_LIBRARY_PATH=$1/lib" "$2" && grep -q "mandb -q --user-db" "$2"' _ "$prefix" "$tmp/install.out"
for u in secbufd.service secbufd.socket secbuf-audit-textfile.service secbuf-audit-textfile.timer; do
	vout=$(MANPATH=$prefix/share/man systemd-analyze verify "$prefix/lib/systemd/system/$u" 2>&1)
	ok "systemd-analyze verify accepts $u: no error, no warning" test $? -eq 0 -a -z "$vout"
	[ -n "$vout" ] && echo "$vout" | sed 's/^/# /'
done
punit=$prefix/lib/systemd/system/secbufd.service
ok "the unit has LimitMEMLOCK=, Requires=secbufd.socket, Type=notify and a sandbox" bash -c \
	'for k in LimitMEMLOCK= Requires=secbufd.socket Type=notify ProtectSystem=strict PrivateTmp=yes \
		NoNewPrivileges=yes MemoryDenyWriteExecute=yes SystemCallFilter=@system-service; do
		grep -q "^$k" "$1" || { echo "# missing $k"; exit 1; }; done' _ "$punit"
# One path in three places: the socket unit listens where the service
# would bind and where secbufctl connects by default.
sunit=$prefix/lib/systemd/system/secbufd.socket
listen=$(sed -n 's/^ListenStream=//p' "$sunit")
ok "secbufd.socket listens on the service's --socket, secbufctl's default (${listen:-none})" bash -c \
	'[ "$(grep -c "^ListenStream=" "$0")" = 1 ] && grep -q "^ExecStart=.* --socket $1\$" "$2" &&
	 "$3/secbufctl" --help | grep -qF "default \$SECBUFD_SOCKET or $1)"' "$sunit" "$listen" "$punit" "$bin"
ok "the service has no RuntimeDirectory= (its stop would remove the socket)" bash -c \
	'! grep -q "^RuntimeDirectory" "$0"' "$punit"

# The syscall filter as systemd expands it: every call secbuf makes to map,
# lock, advise and guard memory, and the daemon's own, must stay allowed.
expand() {	# expand @GROUP|NAME...: the syscall names, groups expanded
	local x
	for x in "$@"; do
		case $x in
		@*)	# shellcheck disable=SC2046 # one name per word
			expand $(systemd-analyze syscall-filter "$x" | grep -v '^ *#' | tail -n +2) ;;
		*) echo "$x" ;;
		esac
	done
}
blocked() {	# blocked UNIT CALL...: the calls its SystemCallFilter= lines forbid
	local allow deny allowed call
	allow=$(grep '^SystemCallFilter=[^~]' "$1" | sed 's/^SystemCallFilter=//')
	deny=$(grep '^SystemCallFilter=~' "$1" | sed 's/^SystemCallFilter=~//')
	# shellcheck disable=SC2086 # one group or name per word
	allowed=$(comm -23 <(expand $allow | sort -u) <(expand $deny | sort -u))
	[ -n "$allowed" ] || { echo "(nothing allowed)"; return; }
	shift
	for call; do grep -qx "$call" <<<"$allowed" || echo "$call"; done
}
b=$(blocked "$punit" mmap munmap mprotect madvise mlock mlock2 munlock mincore memfd_secret ftruncate \
	prctl capget setrlimit \
	getrandom rt_sigprocmask signalfd4 epoll_create1 epoll_ctl epoll_wait socket bind listen accept4 \
	getsockopt getsockname fcntl sendto read write close mkdir chmod unlink umask)
ok "SystemCallFilter keeps mmap, mprotect, madvise, mlock, mlock2, munlock, memfd_secret and the daemon's calls${b:+ (blocked: $(echo $b))}" \
	test -z "$b"

aunit=$prefix/lib/systemd/system/secbuf-audit-textfile.service
ok "the audit's unit writes into TEXTFILE_DIR= of make install" bash -c \
	'grep -qx "ReadWritePaths=$1" "$0" && grep -q "^ExecStart=.* --output=$1/secbuf.prom$" "$0"' \
	"$aunit" "$tmp/textfile"
ok "the audit's unit: oneshot, leaks and nothing-audited are not failures, a sandbox" bash -c \
	'for k in Type=oneshot "SuccessExitStatus=1 3" "CapabilityBoundingSet=CAP_SYS_PTRACE CAP_DAC_READ_SEARCH" ProtectSystem=strict \
		ProtectHome=yes PrivateTmp=yes PrivateNetwork=yes NoNewPrivileges=yes MemoryDenyWriteExecute=yes \
		RestrictAddressFamilies=none SystemCallFilter=@system-service UMask=0022; do
		grep -qx "$k" "$1" || { echo "# missing $k"; exit 1; }; done' _ "$aunit"
# Every call the audit makes: open and read /proc, pagemap at an offset,
# list /proc, the lf probe (mmap, mlock2), the file replaced whole.
b=$(blocked "$aunit" openat read pread64 getdents64 close newfstatat mmap munmap mlock2 brk \
	clock_gettime write fchmod fsync rename unlink umask exit_group)
ok "the audit's SystemCallFilter keeps every call of a scan and an atomic write${b:+ (blocked: $(echo $b))}" \
	test -z "$b"
ok "the timer runs it every few minutes and is wanted by timers.target" bash -c \
	'grep -q "^OnUnitActiveSec=" "$0" && grep -qx "WantedBy=timers.target" "$0"' \
	"$prefix/lib/systemd/system/secbuf-audit-textfile.timer"

# LimitMEMLOCK= must cover what the daemon, started as the unit starts it,
# says it needs (its refusal under a tiny limit names the amount).
limit_kb=$(sed -n 's/^LimitMEMLOCK=\([0-9]*\)K$/\1/p' "$punit")
args=$(sed -n 's|^ExecStart=[^ ]*secbufd ||p' "$punit" | sed "s|/run/secbufd/secbufd.sock|$tmp/s.sock|")
if [ "$(id -u)" = 0 ]; then
	need() { ulimit -l 64 && setpriv --reuid=65534 --regid=65534 --clear-groups "$bin/secbufd" $args; }
else
	need() { ulimit -l 64 && "$bin/secbufd" $args; }
fi
need_kb=$(need 2>&1 | sed -n 's/.*RLIMIT_MEMLOCK is 64 kB, \([0-9]*\) kB needed.*/\1/p')
ok "the unit's LimitMEMLOCK=${limit_kb}K covers the ${need_kb:-?} kB the daemon needs with the unit's options" \
	test -n "$limit_kb" -a -n "$need_kb" -a "${limit_kb:-0}" -ge "${need_kb:-1}"

make -s -C "$top" uninstall PREFIX="$prefix" >/dev/null 2>&1
ok "uninstall from that prefix leaves nothing, not even the prefix it made" test ! -e "$prefix"
tap_done
