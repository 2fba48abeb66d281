//! The Rust binding side by side with memsec (its guarded, mlocked
//! malloc/free) and with libsecbuf's C API called directly, in one run:
//!
//! - a 1 GiB buffer: alloc + touch 4 KiB + free, median ms;
//! - 32-byte alloc + write + free pairs per second, median, one other
//!   secret live throughout; the binding's pairs/s over the C API's is its
//!   overhead per call;
//! - live 32-byte buffers before the allocator fails (or a cap), each in a
//!   forked child: as root, and as uid 65534 under RLIMIT_MEMLOCK 8 MiB.
//!
//! Prints a Markdown report (bindings/rust/bench/run writes it to
//! bench/results/bindings-rust.md).
use std::fs;
use std::io::{Read, Write};
use std::os::unix::io::FromRawFd;
use std::ptr::{self, NonNull};
use std::time::Instant;

use secbuf::{ffi, Options, SecretBuf};

const SECRET: usize = 32;
const GIB: usize = 1 << 30;
const TOUCH: usize = 4096;
const NOBODY: libc::uid_t = 65534;
const NOBODY_MEMLOCK: libc::rlim_t = 8 << 20;

struct Config {
    runs: usize,
    pair_ms: u128,
    live_cap: usize,
    live_secs: f64,
    live_rss_kb: u64,
    memsec_large_runs: usize,
}

#[derive(Clone, Copy, PartialEq)]
enum Alloc {
    Binding,
    BindingPacked,
    CApi,
    CApiPacked,
    Memsec,
}

use Alloc::*;

impl Alloc {
    fn name(self) -> &'static str {
        match self {
            Binding => "secbuf (Rust SecretBuf)",
            BindingPacked => "secbuf packed (Rust SecretBuf)",
            CApi => "secbuf (C API from Rust)",
            CApiPacked => "secbuf packed (C API from Rust)",
            Memsec => "memsec malloc/free",
        }
    }
}

/// One live allocation of any kind; freed by `free`.
enum Held {
    Buf(SecretBuf),
    Raw(*mut libc::c_void),
    Memsec(NonNull<[u8]>),
}

fn alloc(kind: Alloc, size: usize) -> Option<Held> {
    let c = |flags| {
        // SAFETY: any size and flags are valid input.
        let p = unsafe { ffi::secbuf_alloc_flags(size, flags) };
        (!p.is_null()).then(|| Held::Raw(p))
    };
    match kind {
        Binding => SecretBuf::new(size).ok().map(Held::Buf),
        BindingPacked => SecretBuf::with_options(&Options::new().packed(true), size)
            .ok()
            .map(Held::Buf),
        CApi => c(0),
        CApiPacked => c(ffi::SECBUF_PACKED),
        // SAFETY: memsec's allocator; freed with memsec::free only.
        Memsec => unsafe { memsec::malloc_sized(size) }.map(Held::Memsec),
    }
}

/// Write `n` bytes at the start, as a program storing a key would.
fn touch(h: &mut Held, n: usize) {
    match h {
        Held::Buf(b) => b.expose_secret_mut()[..n].fill(0x5a),
        // SAFETY: the allocation holds at least n bytes.
        Held::Raw(p) => unsafe { ptr::write_bytes(*p as *mut u8, 0x5a, n) },
        // SAFETY: as above.
        Held::Memsec(p) => unsafe { ptr::write_bytes(p.as_ptr() as *mut u8, 0x5a, n) },
    }
}

fn free(h: Held) {
    match h {
        Held::Buf(b) => drop(b),
        // SAFETY: from secbuf_alloc_flags, freed once.
        Held::Raw(p) => unsafe { ffi::secbuf_free(p) },
        // SAFETY: from memsec::malloc_sized, freed once.
        Held::Memsec(p) => unsafe { memsec::free(p) },
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn range(v: &[f64]) -> (f64, f64) {
    v.iter()
        .fold((f64::MAX, f64::MIN), |(lo, hi), &x| (lo.min(x), hi.max(x)))
}

/// ms for alloc(1 GiB) + touch 4 KiB + free; None if the alloc failed.
fn large_once(kind: Alloc) -> Option<f64> {
    let t0 = Instant::now();
    let mut h = alloc(kind, GIB)?;
    touch(&mut h, TOUCH);
    free(h);
    Some(t0.elapsed().as_secs_f64() * 1e3)
}

/// Pairs per second over about cfg.pair_ms.
fn pairs_once(kind: Alloc, cfg: &Config) -> Option<f64> {
    let live = alloc(kind, SECRET)?;
    let t0 = Instant::now();
    let mut n = 0u64;
    loop {
        for _ in 0..1000 {
            let mut h = alloc(kind, SECRET)?;
            touch(&mut h, SECRET);
            free(h);
        }
        n += 1000;
        if t0.elapsed().as_millis() >= cfg.pair_ms {
            break;
        }
    }
    let secs = t0.elapsed().as_secs_f64();
    free(live);
    Some(n as f64 / secs)
}

fn status_kb(field: &str) -> u64 {
    let s = fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

struct Live {
    count: usize,
    stop: &'static str,
    errno: i32,
    secs: f64,
    vmlck_kb: u64,
}

/// In the child: live allocations until failure or a cap.
fn live_child(kind: Alloc, cfg: &Config) -> Live {
    let mut held = Vec::with_capacity(cfg.live_cap);
    let t0 = Instant::now();
    let mut stop = "count cap";
    let mut errno = 0;
    while held.len() < cfg.live_cap {
        match alloc(kind, SECRET) {
            Some(mut h) => {
                touch(&mut h, SECRET);
                held.push(h);
            }
            None => {
                errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
                stop = "alloc failed";
                break;
            }
        }
        if held.len() % 1024 == 0 {
            if t0.elapsed().as_secs_f64() > cfg.live_secs {
                stop = "time cap";
                break;
            }
            // memsec never fails for want of lock: bound what it takes.
            if status_kb("VmRSS") > cfg.live_rss_kb {
                stop = "RSS cap";
                break;
            }
        }
    }
    let live = Live {
        count: held.len(),
        stop,
        errno,
        secs: t0.elapsed().as_secs_f64(),
        vmlck_kb: status_kb("VmLck"),
    };
    held.into_iter().for_each(free);
    live
}

/// One live count in a forked child, as root or as nobody.
fn live(kind: Alloc, nobody: bool, cfg: &Config) -> Result<Live, String> {
    let mut fds = [0; 2];
    // SAFETY: a valid array of two ints.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } < 0 {
        return Err(format!("pipe: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: the benchmark is single-threaded, so the child may go on
    // running ordinary code.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        // SAFETY: our own fresh descriptor.
        let mut w = unsafe { fs::File::from_raw_fd(fds[1]) };
        let line = match become_user(nobody) {
            Ok(()) => {
                let l = live_child(kind, cfg);
                format!(
                    "{} {} {} {} {}",
                    l.count,
                    l.stop.replace(' ', "_"),
                    l.errno,
                    l.secs,
                    l.vmlck_kb
                )
            }
            Err(e) => format!("error {}", e),
        };
        let _ = w.write_all(line.as_bytes()); // the parent reports a short answer
                                              // SAFETY: leave without running the parent's exit handlers twice.
        unsafe { libc::_exit(0) };
    }
    // SAFETY: our own fresh descriptors.
    unsafe { libc::close(fds[1]) };
    let mut r = unsafe { fs::File::from_raw_fd(fds[0]) };
    let mut out = String::new();
    let _ = r.read_to_string(&mut out);
    let mut status = 0;
    // SAFETY: our child.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    let f: Vec<&str> = out.split_whitespace().collect();
    if f.len() != 5 || f[0] == "error" {
        return Err(format!("child: {:?} (status {:#x})", out, status));
    }
    let stop = match f[1] {
        "count_cap" => "count cap",
        "time_cap" => "time cap",
        "RSS_cap" => "RSS cap",
        _ => "alloc failed",
    };
    Ok(Live {
        count: f[0].parse().unwrap_or(0),
        stop,
        errno: f[2].parse().unwrap_or(0),
        secs: f[3].parse().unwrap_or(0.0),
        vmlck_kb: f[4].parse().unwrap_or(0),
    })
}

fn become_user(nobody: bool) -> Result<(), String> {
    if !nobody {
        return Ok(());
    }
    let rl = libc::rlimit {
        rlim_cur: NOBODY_MEMLOCK,
        rlim_max: NOBODY_MEMLOCK,
    };
    // SAFETY: plain system calls on this process.
    unsafe {
        if libc::setrlimit(libc::RLIMIT_MEMLOCK, &rl) < 0
            || libc::setgid(NOBODY) < 0
            || libc::setuid(NOBODY) < 0
        {
            return Err(format!(
                "uid {} with RLIMIT_MEMLOCK 8 MiB: {}",
                NOBODY,
                std::io::Error::last_os_error()
            ));
        }
    }
    Ok(())
}

fn errno_name(e: i32) -> &'static str {
    match e {
        0 => "-",
        libc::ENOMEM => "ENOMEM",
        libc::EAGAIN => "EAGAIN",
        libc::EPERM => "EPERM",
        _ => "other",
    }
}

fn machine() -> String {
    let cpu = fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| {
                l.strip_prefix("model name")
                    .map(|v| v.trim_start_matches([' ', '\t', ':']).to_string())
            })
        })
        .unwrap_or_default();
    let kernel = fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let ncpu = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(0);
    let load = fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let load: Vec<&str> = load.split_whitespace().take(3).collect();
    format!(
        "{}, {} CPUs (load average {} at the start: a shared machine, so ratios from one run, not absolute rates, are the result), Linux {}, secbuf's lock method {}",
        cpu,
        ncpu,
        load.join(" "),
        kernel.trim(),
        secbuf::lock_method().unwrap_or("?")
    )
}

fn arg(args: &[String], name: &str, default: f64) -> f64 {
    args.windows(2)
        .find(|w| w[0] == name)
        .and_then(|w| w[1].parse().ok())
        .unwrap_or(default)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let cfg = Config {
        runs: arg(&args, "--runs", 5.0) as usize,
        pair_ms: arg(&args, "--pair-ms", 200.0) as u128,
        live_cap: arg(&args, "--live-cap", 1e6) as usize,
        live_secs: arg(&args, "--live-secs", 10.0),
        live_rss_kb: arg(&args, "--live-rss-mib", 2048.0) as u64 * 1024,
        memsec_large_runs: arg(&args, "--memsec-large-runs", 3.0) as usize,
    };
    // SAFETY: a plain query.
    let root = unsafe { libc::geteuid() } == 0;

    println!("# The Rust binding against memsec and the C API\n");
    println!("Written by `make bench-rust` (bindings/rust/bench): one run, every allocator side by side, medians of {} runs (min–max).", cfg.runs);
    println!("The C API is libsecbuf's own calls made from the same Rust program (`secbuf::ffi`), so that the ratio is the binding's cost alone.");
    println!("memsec 0.5.7 (Debian's librust-memsec-dev): `malloc_sized`/`free`, its guarded path: glibc's heap, guard pages by mprotect, and an `mlock` of the data pages whose result it does not check.\n");
    println!("Machine: {}.\n", machine());

    println!("## 1 GiB buffer: alloc + touch 4 KiB + free\n");
    println!(
        "After one warm-up run each; memsec, which mlocks and wipes the whole buffer, runs {} times.\n",
        cfg.memsec_large_runs
    );
    println!("| allocator | ms | × secbuf binding |\n|---|---:|---:|");
    let large_kinds = [Binding, CApi, Memsec];
    let mut large: Vec<Vec<f64>> = vec![Vec::new(); large_kinds.len()];
    for run in 0..cfg.runs + 1 {
        for (i, &k) in large_kinds.iter().enumerate() {
            // memsec mlocks and wipes the whole GiB: its runs take seconds each.
            if k == Memsec && run > cfg.memsec_large_runs {
                continue;
            }
            if let Some(ms) = large_once(k) {
                large[i].push(ms);
            }
        }
    }
    large.iter_mut().for_each(|v| {
        if !v.is_empty() {
            v.remove(0);
        }
    }); // the warm-up
    let base = if large[0].is_empty() {
        f64::NAN
    } else {
        median(large[0].clone())
    };
    for (i, &k) in large_kinds.iter().enumerate() {
        if large[i].is_empty() {
            println!("| {} | failed | |", k.name());
            continue;
        }
        let (lo, hi) = range(&large[i]);
        let m = median(large[i].clone());
        println!(
            "| {} | {:.3} ({:.3}–{:.3}) | {:.2}× |",
            k.name(),
            m,
            lo,
            hi,
            m / base
        );
    }

    println!("\n## 32-byte secrets: alloc + write + free pairs per second\n");
    println!(
        "About {} ms per run, one other 32-byte secret live throughout.\n",
        cfg.pair_ms
    );
    println!("| allocator | pairs/s |\n|---|---:|");
    let pair_kinds = [Binding, CApi, BindingPacked, CApiPacked, Memsec];
    let mut pairs: Vec<Vec<f64>> = vec![Vec::new(); pair_kinds.len()];
    for _ in 0..cfg.runs {
        for (i, &k) in pair_kinds.iter().enumerate() {
            if let Some(p) = pairs_once(k, &cfg) {
                pairs[i].push(p);
            }
        }
    }
    let med: Vec<f64> = pairs
        .iter()
        .map(|v| {
            if v.is_empty() {
                f64::NAN
            } else {
                median(v.clone())
            }
        })
        .collect();
    for (i, &k) in pair_kinds.iter().enumerate() {
        let (lo, hi) = range(&pairs[i]);
        println!("| {} | {:.0} ({:.0}–{:.0}) |", k.name(), med[i], lo, hi);
    }
    println!("\nThe binding's overhead per call, as the ratio of pairs/s (target ≥ 0.5×), and against memsec:\n");
    println!("| secret | binding pairs/s | C API pairs/s | binding / C API | binding / memsec |\n|---|---:|---:|---:|---:|");
    // pair_kinds: the binding's and the C API's guarded, then packed, then memsec.
    for (label, b, c) in [("guarded", 0, 1), ("packed", 2, 3)] {
        let (bind, capi, memsec) = (med[b], med[c], med[4]);
        println!(
            "| {} | {:.0} | {:.0} | {:.2}× | {:.2}× |",
            label,
            bind,
            capi,
            bind / capi,
            bind / memsec
        );
    }

    let live_kinds = [Binding, BindingPacked, Memsec];
    for nobody in [false, true] {
        if nobody {
            println!(
                "\n## Live 32-byte buffers as uid {} under RLIMIT_MEMLOCK 8 MiB\n",
                NOBODY
            );
        } else {
            println!("\n## Live 32-byte buffers before the allocator fails, as root\n");
        }
        println!(
            "Each in a forked child; at most {} buffers, {} s or {} MiB resident.  \
             Locked buffers: secbuf's are all locked or not made; memsec's are at most VmLck / 4 kB (one locked page each), the rest unlocked.\n",
            cfg.live_cap, cfg.live_secs, cfg.live_rss_kb / 1024
        );
        println!("| allocator | live buffers | stopped by | errno | seconds | VmLck kB | locked buffers |\n|---|---:|---|---|---:|---:|---:|");
        if !root {
            println!("| (all) | | not root: skipped | | | | |");
            continue;
        }
        for &k in &live_kinds {
            match live(k, nobody, &cfg) {
                Ok(l) => {
                    let locked = if k == Memsec {
                        ((l.vmlck_kb / 4) as usize).min(l.count)
                    } else {
                        l.count
                    };
                    println!(
                        "| {} | {} | {} | {} | {:.2} | {} | {} |",
                        k.name(),
                        l.count,
                        l.stop,
                        errno_name(l.errno),
                        l.secs,
                        l.vmlck_kb,
                        locked
                    );
                }
                Err(e) => println!("| {} | | {} | | | | |", k.name(), e),
            }
        }
    }
}
