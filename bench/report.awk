# Turn benchmark records ("bench TABLE key=value ...", one file per run
# source) into the markdown tables and gnuplot data of bench/results/.
# usage: awk -v out=RESDIR -f bench/report.awk RAWDIR/*.txt
# Sources by file name: host-alloc, host-2015, guest-bench, kcost-KERNEL-N
# (Linux 6.1) and kcost-KVER-KERNEL-N (another version).

function kv(   i, eq) {
	delete F
	for (i = 3; i <= NF; i++) {
		eq = index($i, "=")
		if (eq)
			F[substr($i, 1, eq - 1)] = substr($i, eq + 1)
	}
}
function num(x) {
	if (x == "" ) return "-"
	x += 0
	if (x < 0) return "-"
	if (x < 10) return sprintf("%.3f", x)
	if (x < 1000) return sprintf("%.1f", x)
	return sprintf("%.0f", x)
}
function big(x) { return x == "" ? "-" : sprintf("%.0f", x) }
function range(med, lo, hi) { return num(med) " (" num(lo) "–" num(hi) ")" }
function ratio(a, b) { return (a == "" || b == "" || b + 0 <= 0) ? "" : a / b }
function rfmt(r) { return r == "" ? "n/a" : sprintf(r < 0.1 ? "%.3g×" : "%.2f×", r) }
function mib(kb) { kb += 0; return kb >= 1048576 ? kb / 1048576 " GiB" : kb / 1024 " MiB" }
# Median/min/max of a comma list, into S["med"], S["min"], S["max"].
function pool(list,   v, n, i, j, t) {
	n = split(list, v, ",")
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) {
			t = v[j]; v[j] = v[j - 1]; v[j - 1] = t
		}
	S["min"] = v[1]; S["max"] = v[n]; S["n"] = n
	S["med"] = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}

FNR == 1 {
	src = FILENAME; sub(/.*\//, "", src); sub(/\.txt$/, "", src)
	srcs[src] = 1
}
$1 != "bench" { next }
$2 == "machine" {
	m = $0; sub(/^bench machine /, "", m); machine[src] = m; next
}
$2 == "2015" {
	kv(); k = src SUBSEP F["variant"] SUBSEP F["strategy"]
	for (f in F) E[k, f] = F[f]
	has2015[src] = 1; size2015[src] = F["size_kb"] ? F["size_kb"] : size2015[src]
	if (F["accesses"]) acc2015[src] = F["accesses"]
	if (F["runs"]) runs2015[src] = F["runs"]
	if (F["total_pages"]) pages2015[src] = F["total_pages"]
	if (F["touched_pages"]) touched[src, F["variant"]] = F["touched_pages"]
	next
}
$2 == "alloc-large" {
	kv(); k = src SUBSEP F["allocator"] SUBSEP F["capacity_kb"]
	for (f in F) L[k, f] = F[f]
	if (!((src, F["allocator"]) in seenA)) { seenA[src, F["allocator"]] = 1; alist[src] = alist[src] " " F["allocator"] }
	if (!((src, F["capacity_kb"]) in seenC)) { seenC[src, F["capacity_kb"]] = 1; clist[src] = clist[src] " " F["capacity_kb"] }
	lruns[src] = F["runs"]
	next
}
$2 == "alloc-small" {
	kv(); k = src SUBSEP F["allocator"] SUBSEP F["threads"]
	for (f in F) SM[k, f] = F[f]
	if (!((src, F["allocator"]) in seenA)) { seenA[src, F["allocator"]] = 1; alist[src] = alist[src] " " F["allocator"] }
	next
}
$2 == "alloc-live" {
	kv(); k = src SUBSEP F["allocator"]
	if (F["uid"] == 65534) k = k SUBSEP "nobody"
	for (f in F) LV[k, f] = F[f]
	if (!((src, F["allocator"]) in seenA)) { seenA[src, F["allocator"]] = 1; alist[src] = alist[src] " " F["allocator"] }
	next
}
$2 == "kcost" {
	# kcost-KERNEL-ROUND is 6.1, kcost-KVER-KERNEL-ROUND another version
	kv(); kern = src; sub(/^kcost-/, "", kern); kver = "6.1"
	if (kern ~ /^[0-9]/) { kver = kern; sub(/-.*/, "", kver); sub(/^[^-]*-/, "", kern) }
	round = kern; sub(/-.*/, "", kern); sub(/.*-/, "", round); kern = kver ":" kern
	if (!((kver, F["test"]) in ktests)) { ktests[kver, F["test"]] = 1; klist[kver] = klist[kver] " " F["test"] }
	if (!(kver in kvers)) { kvers[kver] = 1; kverlist = kverlist " " kver }
	kunit[F["test"]] = F["unit"]
	kop[F["test"]] = F["unit"] == "faults/s" ? "per fault" : F["unit"] == "cycles/s" ? "per cycle" : \
			 F["unit"] == "filters/s" ? "per filter" : "per pair"
	kruns = F["runs"]
	KS[kern, F["test"]] = KS[kern, F["test"]] (KS[kern, F["test"]] == "" ? "" : ",") F["samples"]
	KB[kern, F["test"], round] = F["med"]
	if (!((kern, round) in kround)) { kround[kern, round] = 1; nround[kern]++ }
	kmachine[kern] = machine[src]
	next
}

# ---- 2015 ----------------------------------------------------------------
BEGIN {
	D["a"] = "a. mlock whole range"
	D["b"] = "b. mlock before each access"
	D["c"] = "c. PROT_NONE + SIGSEGV, batch 1"
	D["d"] = "d. PROT_NONE + SIGSEGV, batch 8"
	D["e"] = "e. PROT_NONE + SIGSEGV, batch 16"
	D["f"] = "f. mlock2(MLOCK_ONFAULT)"
	D["g"] = "g. mmap(MAP_LOCKONFAULT)"
}
function desc2015(s) { return D[s] }
function guesttitle(src) {
	return index(machine[src], "lock-on-fault series") ? "Guest: patched kernel" : "Guest: kernel WITHOUT the lock-on-fault series"
}
function table2015(src, title, note,   v, variant, s, k, o) {
	o = out "/2015.md"
	print "## " title "\n" > o
	print "Machine: " machine[src] ".  " note > o
	print "Mapping: " mib(size2015[src]) " (" pages2015[src] " pages), " acc2015[src] \
	      " random one-byte reads, median of " runs2015[src] " runs (min–max), ms.\n" > o
	for (v = 1; v <= 2; v++) {
		variant = v == 1 ? "dense" : "sparse"
		print "**" variant "**: " touched[src, variant] " of " pages2015[src] " pages touched.\n" > o
		print "| strategy | setup ms | processing ms | locked resident kB | VmLck kB |" > o
		print "|---|---:|---:|---:|---:|" > o
		for (s = 1; s <= 7; s++) {
			k = src SUBSEP variant SUBSEP substr("abcdefg", s, 1)
			if (!((k, "strategy") in E)) continue
			if (E[k, "skipped"] != "") {
				print "| " desc2015(substr("abcdefg", s, 1)) " | not run: no lock-on-fault series in this kernel | | | |" > o
				continue
			}
			print "| " desc2015(substr("abcdefg", s, 1)) " | " range(E[k, "setup_med"], E[k, "setup_min"], E[k, "setup_max"]) \
			      " | " range(E[k, "proc_med"], E[k, "proc_min"], E[k, "proc_max"]) " | " big(E[k, "locked_kb"]) \
			      " | " big(E[k, "vmlck_kb"]) " |" > o
		}
		print "" > o
	}
}
function r2015(src, variant, num_s, num_f, den_s, den_f,   a, b) {
	a = E[src, variant, num_s, num_f]; b = E[src, variant, den_s, den_f]
	return ratio(a, b)
}
function ratios2015(   o, i, name, theirs, ns, nf, ds, df, cols, c, r, cell, holds, row, srcv, nc) {
	o = out "/2015.md"
	nc = 0
	if (has2015["guest-bench"]) { cols[++nc] = "guest-bench dense"; cols[++nc] = "guest-bench sparse" }
	if (has2015["host-2015"]) { cols[++nc] = "host-2015 dense"; cols[++nc] = "host-2015 sparse" }
	print "## The cover letter's ratios next to ours\n" > o
	print "2015: 5 GB file, 15,000,000 reads, averages of 20 runs on bare metal.  Ours: medians as above." > o
	print "A ratio above 1 means lock-on-fault wins, the direction the cover letter reports.\n" > o
	row = "| ratio | 2015"
	for (c = 1; c <= nc; c++) { split(cols[c], srcv, " "); row = row " | " (srcv[1] == "host-2015" ? "host" : "guest") " " srcv[2] }
	print row " | direction holds |" > o
	row = "|---|---:"
	for (c = 1; c <= nc; c++) row = row "|---:"
	print row "|---|" > o
	for (i = 1; i <= 6; i++) {
		# num strategy, field, den strategy, field
		if (i == 1) { name = "LOCKED setup / ONFAULT setup (a/f)"; theirs = 8228.666 / 0.189; ns = "a"; nf = "setup_med"; ds = "f"; df = "setup_med" }
		if (i == 2) { name = "LOCKED setup / MAP_LOCKONFAULT setup (a/g)"; theirs = ""; ns = "a"; nf = "setup_med"; ds = "g"; df = "setup_med" }
		if (i == 3) { name = "per-access mlock / ONFAULT processing (b/f)"; theirs = 90993.552 / 17904.899; ns = "b"; nf = "proc_med"; ds = "f"; df = "proc_med" }
		if (i == 4) { name = "per-access mlock / MAP_LOCKONFAULT processing (b/g)"; theirs = ""; ns = "b"; nf = "proc_med"; ds = "g"; df = "proc_med" }
		if (i == 5) { name = "batch-16 / ONFAULT processing (e/f)"; theirs = 29671.180 / 17904.899; ns = "e"; nf = "proc_med"; ds = "f"; df = "proc_med" }
		if (i == 6) { name = "batch-16 / MAP_LOCKONFAULT processing (e/g)"; theirs = ""; ns = "e"; nf = "proc_med"; ds = "g"; df = "proc_med" }
		row = "| " name " | " (theirs == "" ? "(not measured)" : sprintf("%.2f×", theirs))
		holds = ""; cell = 0
		for (c = 1; c <= nc; c++) {
			split(cols[c], srcv, " ")
			r = r2015(srcv[1], srcv[2], ns, nf, ds, df)
			row = row " | " rfmt(r)
			if (r != "") { cell++; if (r <= 1) holds = holds (holds ? ", " : "") "not in " srcv[2] " " (srcv[1] == "host-2015" ? "host" : "guest") }
		}
		print row " | " (cell == 0 ? "n/a" : holds == "" ? "yes" : "no: " holds) " |" > o
	}
	print "" > o
}

# ---- allocators ------------------------------------------------------------
function allocs(src, title, note,   o, n, names, i, c, caps, nc, k, base, r, th1, th2, kl) {
	o = out "/alloc.md"
	n = split(alist[src], names, " "); nc = split(clist[src], caps, " ")
	print "## " title "\n" > o
	print "Machine: " machine[src] ".  " note "\n" > o
	print "### Large buffers: one buffer per capacity, 4 KiB of it used\n" > o
	print "Time for alloc + use + free, median of " lruns[src] " runs (min–max), in a fresh process each," > o
	print "after the allocator's one-time process set-up (secbuf: probe, key page, thread state; sodium_init);" > o
	print "peaks are over the buffer's life (OpenSSL: arena init to teardown, included in its time)." > o
	print "With THP \"always\" (see the machine line) a fault can map a 2 MiB page, so faults drop.\n" > o
	print "| allocator | locking | capacity | alloc+use+free ms | × secbuf | peak RSS kB | peak VmLck kB | peak locked resident kB | page faults |" > o
	print "|---|---|---:|---:|---:|---:|---:|---:|---:|" > o
	for (c = 1; c <= nc; c++)
		for (i = 1; i <= n; i++) {
			k = src SUBSEP names[i] SUBSEP caps[c]
			if (!((k, "time_med") in L)) continue
			base = L[src, "secbuf", caps[c], "time_med"]
			print "| " names[i] " | " L[k, "method"] " | " mib(caps[c]) " | " range(L[k, "time_med"], L[k, "time_min"], L[k, "time_max"]) \
			      " | " rfmt(ratio(L[k, "time_med"], base)) " | " big(L[k, "rss_kb"]) " | " big(L[k, "vmlck_kb"]) \
			      " | " big(L[k, "locked_kb"]) " | " big(L[k, "faults"]) " |" > o
		}
	floorcmp(src, o, caps, nc)
	dropincmp(src, o, caps, nc)
	secretcmp(src, o, caps, nc)
	print "\n### Small secrets: 32-byte alloc + write + free pairs per second\n" > o
	print "Median of the runs (min–max), one other 32-byte secret live throughout.\n" > o
	print "| allocator | 1 thread | 2 threads | 2 threads / 1 thread | 1 thread / openssl_secure |" > o
	print "|---|---:|---:|---:|---:|" > o
	for (i = 1; i <= n; i++) {
		th1 = src SUBSEP names[i] SUBSEP 1; th2 = src SUBSEP names[i] SUBSEP 2
		if (!((th1, "ops_med") in SM)) continue
		print "| " names[i] " | " range(SM[th1, "ops_med"], SM[th1, "ops_min"], SM[th1, "ops_max"]) " | " \
		      range(SM[th2, "ops_med"], SM[th2, "ops_min"], SM[th2, "ops_max"]) " | " rfmt(ratio(SM[th2, "ops_med"], SM[th1, "ops_med"])) \
		      " | " rfmt(ratio(SM[th1, "ops_med"], SM[src, "openssl_secure", 1, "ops_med"])) " |" > o
	}
	for (i = 1; i <= n; i++) if ((src, names[i], "count") in LV) kl = src SUBSEP names[i]
	print "\n### Live 32-byte allocations before the allocator fails\n" > o
	print "Bounded: at most " LV[kl, "cap"] " allocations or " LV[kl, "cap_secs"] " s per allocator.  " \
	      "OpenSSL's arena is " LV[kl, "heap_kb"] " kB here (its limit is arena / 32 bytes); " \
	      "vm.max_map_count limits the mmap-per-secret allocators.  Mappings and locked resident memory" \
	      " (smaps Locked) are what the live secrets added.\n" > o
	print "| allocator | live allocations | stopped by | errno | seconds | VmLck kB at the end | mappings added | per 1,000 secrets | locked resident bytes per secret |" > o
	print "|---|---:|---|---|---:|---:|---:|---:|---:|" > o
	for (i = 1; i <= n; i++) {
		k = src SUBSEP names[i]
		if (!((k, "count") in LV)) continue
		print "| " names[i] " | " LV[k, "count"] " | " LV[k, "stop"] " | " LV[k, "errno"] " | " LV[k, "secs"] " | " big(LV[k, "vmlck_kb"]) \
		      " | " big(LV[k, "maps"]) " | " per1000(LV[k, "maps"], LV[k, "count"]) " | " perSecret(LV[k, "locked_kb"], LV[k, "count"]) " |" > o
	}
	for (i = 1; i <= n; i++) if ((src, names[i], "nobody", "count") in LV) kl = src SUBSEP names[i] SUBSEP "nobody"
	if ((kl, "memlock_kb") in LV) {
		print "\n### Live 32-byte allocations as uid 65534 under RLIMIT_MEMLOCK " LV[kl, "memlock_kb"] " kB\n" > o
		print "The usual limit of an unprivileged process.  OpenSSL's arena is " LV[kl, "heap_kb"] " kB here, to fit under it.\n" > o
		print "| allocator | live allocations | stopped by | errno | seconds | VmLck kB at the end |" > o
		print "|---|---:|---|---|---:|---:|" > o
		for (i = 1; i <= n; i++) {
			k = src SUBSEP names[i] SUBSEP "nobody"
			if (!((k, "count") in LV)) continue
			print "| " names[i] " | " LV[k, "count"] " | " LV[k, "stop"] " | " LV[k, "errno"] " | " LV[k, "secs"] " | " big(LV[k, "vmlck_kb"]) " |" > o
		}
	}
	print "" > o
}
function per1000(m, c) { return (m == "" || c + 0 <= 0) ? "-" : sprintf("%.2f", m * 1000 / c) }
function perSecret(kb, c) { return (kb == "" || c + 0 <= 0) ? "-" : sprintf("%.1f", kb * 1024 / c) }
# secbuf against the syscall floor and sodium_malloc, per capacity: the targets.
function floorcmp(src, o, caps, nc,   c, sb, fl, na) {
	if (!((src, "syscall_floor", caps[nc], "time_med") in L)) return
	print "\nsecbuf against the syscall floor (mmap, mlock2(MLOCK_ONFAULT), one mincore, wipe, munmap) and sodium_malloc:\n" > o
	print "| capacity | secbuf ms | syscall floor ms | secbuf / floor | sodium_malloc / secbuf |" > o
	print "|---:|---:|---:|---:|---:|" > o
	for (c = 1; c <= nc; c++) {
		sb = L[src, "secbuf", caps[c], "time_med"]; fl = L[src, "syscall_floor", caps[c], "time_med"]
		na = L[src, "sodium_malloc", caps[c], "time_med"]
		print "| " mib(caps[c]) " | " num(sb) " | " num(fl) " | " rfmt(ratio(sb, fl)) " | " rfmt(ratio(na, sb)) " |" > o
	}
}
# libsodium programs under secbuf-run: the drop-in's calls against the real ones.
function dropincmp(src, o, caps, nc,   c, na, di) {
	if (!((src, "sodium_dropin", caps[nc], "time_med") in L)) return
	print "\nlibsodium programs under secbuf-run: sodium_malloc + use + sodium_free as libsecbuf-sodium.so " \
	      "defines them (sodium_dropin) against the real libsodium's, same run, medians:\n" > o
	print "| capacity | sodium_malloc ms | sodium_dropin ms | sodium_malloc / sodium_dropin | peak locked resident kB, real / drop-in |" > o
	print "|---:|---:|---:|---:|---:|" > o
	for (c = 1; c <= nc; c++) {
		na = L[src, "sodium_malloc", caps[c], "time_med"]; di = L[src, "sodium_dropin", caps[c], "time_med"]
		print "| " mib(caps[c]) " | " num(na) " | " num(di) " | " rfmt(ratio(na, di)) " | " \
		      L[src, "sodium_malloc", caps[c], "locked_kb"] " / " L[src, "sodium_dropin", caps[c], "locked_kb"] " |" > o
	}
}
# The secret tier (SECBUF_SECRET) against the lock-on-fault tier and its own
# floor, same run, medians; the targets are issue 24's.
function secretcmp(src, o, caps, nc,   c, st, sb, fl, p1, s1, p2, s2, lp, ls) {
	if (!((src, "secbuf_secret", caps[nc], "time_med") in L)) return
	print "\nThe secret tier (memfd_secret) against the lock-on-fault tier and the raw memfd_secret floor " \
	      "(memfd_secret, ftruncate, mmap, touch, munmap), same run, medians:\n" > o
	print "| capacity | secbuf_secret ms | secbuf ms | secret_floor ms | secret / lock-on-fault | secret / its floor (target ≤ 1.5) |" > o
	print "|---:|---:|---:|---:|---:|---:|" > o
	for (c = 1; c <= nc; c++) {
		st = L[src, "secbuf_secret", caps[c], "time_med"]; sb = L[src, "secbuf", caps[c], "time_med"]
		fl = L[src, "secret_floor", caps[c], "time_med"]
		print "| " mib(caps[c]) " | " num(st) " | " num(sb) " | " num(fl) " | " rfmt(ratio(st, sb)) " | " rfmt(ratio(st, fl)) " |" > o
	}
	p1 = SM[src, "secbuf_packed", 1, "ops_med"]; s1 = SM[src, "secbuf_packed_secret", 1, "ops_med"]
	p2 = SM[src, "secbuf_packed", 2, "ops_med"]; s2 = SM[src, "secbuf_packed_secret", 2, "ops_med"]
	lp = LV[src, "secbuf_packed", "locked_kb"]; ls = LV[src, "secbuf_packed_secret", "locked_kb"]
	print "\n| packed 32-byte secrets | lock-on-fault | secret tier | secret / lock-on-fault | target |" > o
	print "|---|---:|---:|---:|---|" > o
	print "| pairs/s, 1 thread | " num(p1) " | " num(s1) " | " rfmt(ratio(s1, p1)) " | ≥ 0.5 |" > o
	print "| pairs/s, 2 threads | " num(p2) " | " num(s2) " | " rfmt(ratio(s2, p2)) " | ≥ 0.5 |" > o
	print "| live secrets | " LV[src, "secbuf_packed", "count"] " | " LV[src, "secbuf_packed_secret", "count"] " | | |" > o
	print "| locked resident kB with them | " big(lp) " | " big(ls) " | " rfmt(ratio(ls, lp)) " | ≤ 1.5 |" > o
}
function plotdata(src, file,   n, all, names, nc, caps, c, i, k, row) {
	n = split(alist[src], all, " "); nc = split(clist[src], caps, " ")
	if (nc == 0) return
	# Only allocators that served large buffers (packed secrets do not).
	# The drop-in's row is in its own table, not on the chart.
	for (i = 1; i <= n; i++)
		if (all[i] != "sodium_dropin" && (src, all[i], caps[1], "time_med") in L) names[++k] = all[i]
	n = k
	row = "capacity_MiB"
	for (i = 1; i <= n; i++) row = row " " names[i]
	print row > file
	for (c = 1; c <= nc; c++) {
		row = caps[c] / 1024
		for (i = 1; i <= n; i++) {
			v = L[src, names[i], caps[c], "time_med"]
			row = row " " (v == "" ? "NaN" : v)
		}
		print row > file
	}
	close(file)
}

# ---- kernel cost -----------------------------------------------------------
# Records give rates; under -icount a rate turns into a cost per operation
# in guest nanoseconds, which at shift 0 is the guest instructions it took.
function percost(list,   v, n, i, o) {
	n = split(list, v, ",")
	o = ""
	for (i = 1; i <= n; i++)
		if (v[i] + 0 > 0) o = o (o == "" ? "" : ",") 1e9 / v[i]
	return o
}
function ns(x) { return sprintf("%.1f", x) }
# The map-lockonfault test of kernel P against another way to lock on
# fault, in FV: both medians, and the within-boot difference as text.
# Returns 0 where no boot measured both.
function flagvs(P, other,   r, rl) {
	rl = ""
	for (r = 1; r <= nround[P]; r++)
		if (KB[P, "map-lockonfault", r] > 0 && KB[P, other, r] > 0)
			rl = rl (rl == "" ? "" : ",") (KB[P, other, r] / KB[P, "map-lockonfault", r] - 1) * 100
	if (rl == "") return 0
	pool(percost(KS[P, "map-lockonfault"])); FV["flag"] = S["med"]
	pool(percost(KS[P, other])); FV["other"] = S["med"]
	pool(rl)
	FV["within"] = sprintf("%+.2f%%", S["med"]) " (" sprintf("%+.2f%%", S["min"]) " to " \
		       sprintf("%+.2f%%", S["max"]) " over " S["n"] " boots).\n"
	return 1
}

function kcost(ver,   o, nt, tests, t, kern, k, d, res, spread, r, b, dev, bootdev, verdict, med, lo, hi, S1, P) {
	o = out (ver == "6.1" ? "/kcost.md" : "/kcost-" ver ".md")
	S1 = ver ":stock"; P = ver ":patched"
	print "# Kernel cost: stock vs patched " ver " on unrelated work\n" > o
	print "Guest under QEMU `-icount shift=0,sleep=off`, one vCPU: guest time advances 1 ns per" > o
	print "executed instruction, so a cost in ns is the guest instructions an operation took, and" > o
	print "host load does not enter it.  It counts instructions only: cache and TLB effects of the" > o
	print "patches, which a real CPU would add, are not seen." > o
	print "Stock machine line: " kmachine[S1] "." > o
	print "Patched machine line: " kmachine[P] "." > o
	print "Boots: " nround[S1] " stock and " nround[P] " patched, alternating; each boot does one" > o
	print "discarded warm-up and then " kruns " runs.  Cost = 1e9 / rate, median of every run of every boot (min–max)." > o
	print "Spread: (max − min) / median of those runs; boot: the largest distance of one boot's median from" > o
	print "the pooled median.  Resolution: the larger spread of the two kernels; a difference within it" > o
	print "is called within noise.  Rates are recorded as whole operations per second, which limits the" > o
	print "resolution to about 1 / rate.  The spread is the noise of the method on one kernel; two kernels" > o
	print "also boot into different slab and page-allocator states, which icount does not remove, so a" > o
	print "difference between them can come from that state rather than from the code path measured.\n" > o
	print "| test | stock ns/op | patched ns/op | patched vs stock | spread stock / patched | boot stock / patched | resolution | verdict |" > o
	print "|---|---:|---:|---:|---:|---:|---:|---|" > o
	nt = split(klist[ver], tests, " ")
	for (t = 1; t <= nt; t++) {
		if (KS[S1, tests[t]] == "" || KS[P, tests[t]] == "") {
			print "| " tests[t] " | " (KS[S1, tests[t]] == "" ? "not measured" : "measured") " | " \
			      (KS[P, tests[t]] == "" ? "not measured" : "measured") " | n/a | n/a | n/a | n/a | no comparison |" > o
			continue
		}
		res = 0
		for (k = 1; k <= 2; k++) {
			kern = k == 1 ? S1 : P
			pool(percost(KS[kern, tests[t]]))
			med[kern] = S["med"]; lo[kern] = S["min"]; hi[kern] = S["max"]
			spread[kern] = (S["max"] - S["min"]) / S["med"] * 100
			if (spread[kern] > res) res = spread[kern]
			bootdev[kern] = 0
			for (r = 1; r <= nround[kern]; r++) {
				b = KB[kern, tests[t], r]
				if (b + 0 <= 0) continue
				dev = (1e9 / b - med[kern]) / med[kern] * 100
				if (dev < 0) dev = -dev
				if (dev > bootdev[kern]) bootdev[kern] = dev
			}
		}
		d = (med[P] - med[S1]) / med[S1] * 100
		verdict = (d < 0 ? -d : d) <= res ? "within noise" : (d > 0 ? "patched costs more" : "patched costs less")
		print "| " tests[t] " (" kop[tests[t]] ") | " ns(med[S1]) " (" ns(lo[S1]) "–" ns(hi[S1]) ") | " \
		      ns(med[P]) " (" ns(lo[P]) "–" ns(hi[P]) ") | " sprintf("%+.3f%%", d) " | " \
		      sprintf("%.3f%% / %.3f%%", spread[S1], spread[P]) " | " \
		      sprintf("%.3f%% / %.3f%%", bootdev[S1], bootdev[P]) " | " sprintf("±%.3f%%", res) " | " verdict " |" > o
	}
	print "" > o
	# What MAP_LOCKONFAULT saves over the ways stock kernels lock a buffer
	# on fault: both in each patched boot, compared within the boot, which
	# shares their state
	if (flagvs(P, "map-mlock2-onfault")) {
		print "MAP_LOCKONFAULT against mmap + mlock2(MLOCK_ONFAULT), on the patched kernel: mapping 16 pages locked" > o
		print "on fault, writing one and unmapping them costs " ns(FV["flag"]) " ns with the flag and " ns(FV["other"]) " ns without it" > o
		print "(medians of all runs); compared within each boot, the flag costs " FV["within"] > o
	}
	if (flagvs(P, "map-protnone-mlock2-mprotect")) {
		print "MAP_LOCKONFAULT (1 call) against mmap(PROT_NONE) + mlock2(MLOCK_ONFAULT) + mprotect() (3 calls), the" > o
		print "existing way to have no moment in which the mapping is usable and unlocked, on the patched kernel:" > o
		print ns(FV["flag"]) " ns with the flag and " ns(FV["other"]) " ns with the three calls per cycle (medians of all runs);" > o
		print "compared within each boot, the flag costs " FV["within"] > o
	}
}

# ---- headline ---------------------------------------------------------------
function headline(   o, src, names, n, i, cap, row, g, caps, nc, cell, sb, fl, na, pk1, pk2, os1, nob) {
	o = out "/headline.md"
	src = "host-alloc"
	nc = split(clist[src], caps, " "); cap = caps[nc]	# the largest measured
	n = split("secbuf secbuf_packed sodium_malloc openssl_secure malloc+mlock syscall_floor", names, " ")
	print "Host: " machine[src] " (real time; medians of " lruns[src] " runs).\n" > o
	row = "| " mib(cap) " capacity, 4 KiB used |"
	for (i = 1; i <= n; i++) row = row " " names[i] " |"
	print row > o
	print "|---|---:|---:|---:|---:|---:|---:|" > o
	row = "| alloc + use + free, ms |"
	for (i = 1; i <= n; i++) row = row " " num(L[src, names[i], cap, "time_med"]) " |"
	print row > o
	row = "| peak locked resident, kB |"
	for (i = 1; i <= n; i++) row = row " " big(L[src, names[i], cap, "locked_kb"]) " |"
	print row > o
	row = "| peak RSS, kB |"
	for (i = 1; i <= n; i++) row = row " " big(L[src, names[i], cap, "rss_kb"]) " |"
	print row > o
	row = "| 32-byte alloc/free pairs/s, 1 thread |"
	for (i = 1; i <= n; i++) row = row " " big(SM[src, names[i], 1, "ops_med"]) " |"
	print row > o
	row = "| 32-byte alloc/free pairs/s, 2 threads |"
	for (i = 1; i <= n; i++) row = row " " big(SM[src, names[i], 2, "ops_med"]) " |"
	print row > o
	row = "| live 32-byte secrets before failure |"
	for (i = 1; i <= n; i++) row = row " " livecount(src SUBSEP names[i]) " |"
	print row > o
	row = "| ... as uid 65534, RLIMIT_MEMLOCK 8 MiB |"
	for (i = 1; i <= n; i++) row = row " " livecount(src SUBSEP names[i] SUBSEP "nobody") " |"
	print row > o
	row = "| locked resident bytes per live secret |"
	for (i = 1; i <= n; i++) row = row " " perSecret(LV[src, names[i], "locked_kb"], LV[src, names[i], "count"]) " |"
	print row > o
	row = "| mappings per 1,000 live secrets |"
	for (i = 1; i <= n; i++) row = row " " per1000(LV[src, names[i], "maps"], LV[src, names[i], "count"]) " |"
	print row > o
	sb = L[src, "secbuf", cap, "time_med"]; fl = L[src, "syscall_floor", cap, "time_med"]; na = L[src, "sodium_malloc", cap, "time_med"]
	pk1 = SM[src, "secbuf_packed", 1, "ops_med"]; pk2 = SM[src, "secbuf_packed", 2, "ops_med"]; os1 = SM[src, "openssl_secure", 1, "ops_med"]
	print "\nAt " mib(cap) " secbuf takes " rfmt(ratio(sb, fl)) " the syscall floor's time and sodium_malloc " rfmt(ratio(na, sb)) \
	      " secbuf's; packed 32-byte secrets: " rfmt(ratio(pk1, os1)) " OpenSSL's secure heap on 1 thread, " \
	      rfmt(ratio(pk2, pk1)) " their own 1-thread rate on 2 threads." > o
	g = "guest-bench"
	if (has2015[g]) {
		print "\n2015 experiment, guest on the patched kernel (QEMU TCG, " mib(size2015[g]) " file on tmpfs, " acc2015[g] " reads):" > o
		print "per-access mlock takes " rfmt(r2015(g, "dense", "b", "proc_med", "g", "proc_med")) " as long as MAP_LOCKONFAULT and " \
		      rfmt(r2015(g, "dense", "b", "proc_med", "f", "proc_med")) " as long as mlock2(MLOCK_ONFAULT) (2015: 5.08×); " \
		      "SIGSEGV batch-16 " rfmt(r2015(g, "dense", "e", "proc_med", "f", "proc_med")) " (2015: 1.66×)." > o
	}
	print "\nFull tables: [2015 experiment](bench/results/2015.md), [allocators](bench/results/alloc.md), " \
	      "[kernel cost 6.1](bench/results/kcost.md), [6.12](bench/results/kcost-6.12.md); chart: ![alloc+use+free vs capacity](bench/results/alloc-large.png)" > o
}
function livecount(k) {
	if (LV[k, "count"] == "") return "-"
	return LV[k, "count"] (LV[k, "stop"] == "alloc-failed" ? "" : " (cap)")
}

END {
	o = out "/2015.md"
	print "# The 2015 lock-on-fault experiment, reproduced\n" > o
	print "Map a file of random data and make random one-byte reads, keeping every touched page locked" > o
	print "(Munson, 2015).  Setup = mmap plus any whole-range lock call; processing = the reads with their" > o
	print "locking.  Dense reads anywhere; sparse reads only ~5% of the pages.  SIGSEGV handlers clamp" > o
	print "their batch to the mapping end (one mprotect+mlock per fault) instead of the cover letter's" > o
	print "speculative second step.  \"Locked resident\" is smaps_rollup Locked (pages actually pinned);" > o
	print "VmLck is what RLIMIT_MEMLOCK is charged, which for on-fault ranges is the whole range.\n" > o
	if (has2015["guest-bench"])
		table2015("guest-bench", guesttitle("guest-bench"), "QEMU TCG: compare times only as ratios.  The data file is on tmpfs (the guest has no disk filesystem).")
	if (has2015["host-2015"])
		table2015("host-2015", "Host: this machine's own kernel", "Real time.  The data file is in /tmp on the host's disk filesystem, so reads hit the page cache; strategy g needs the patched kernel.")
	ratios2015()
	close(o)

	o = out "/alloc.md"
	print "# secbuf against the other secure allocators\n" > o
	print "secbuf frees with a wipe of resident pages only; sodium_free and OpenSSL wipe the whole block;" > o
	print "malloc+mlock wipes the whole capacity (it cannot know what was used) and munlock()s whole pages." > o
	print "OpenSSL's secure heap is initialised per run with an arena of the next power of two >= the" > o
	print "capacity (OpenSSL 3 locks it with mlock2(MLOCK_ONFAULT)); its init and teardown are in its time.\n" > o
	if (alist["host-alloc"] != "") { allocs("host-alloc", "Host: this machine's own kernel, real time", ""); plotdata("host-alloc", out "/alloc-large-host.dat") }
	if (alist["guest-bench"] != "") { allocs("guest-bench", guesttitle("guest-bench"), "QEMU TCG: compare times only as ratios (the × secbuf column)."); plotdata("guest-bench", out "/alloc-large-guest.dat") }
	close(o)

	nv = split(kverlist, vers, " ")
	for (v = 1; v <= nv; v++)
		kcost(vers[v])
	headline()
}
