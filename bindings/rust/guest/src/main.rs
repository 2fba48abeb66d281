//! The guest half of the Rust binding's swap proof: random keys read the
//! recommended way (`SecretBuf::from_reader` from /dev/urandom, guarded
//! and packed) and the naive way (`read_to_end` into a `Vec`, the control),
//! then memory pressure inside the caller's cgroup (rust-swap.sh makes one
//! with a small memory.max).  It prints the keys as "# KEEP:" markers (hex,
//! never the raw bytes) for qemu/scan-swap, which searches the swap image
//! on the host: the binding's keys must be absent, the control's present.
//! It exits without freeing anything, and the guest powers off without
//! swapoff, so the image keeps whatever reached it.
use std::fs::{self, File};
use std::io::Read;
use std::process::exit;
use std::thread::sleep;
use std::time::Duration;

use secbuf::{Options, SecretBuf};

const KEYS: usize = 64;
const KEY: usize = 32;
const CHUNK: usize = 4 << 20;
// 4 x the 32M memory.max of rust-swap.sh: the whole group cycles through swap.
const PRESSURE: usize = 128 << 20;

fn meminfo_kb(field: &str) -> i64 {
    let s = fs::read_to_string("/proc/meminfo").unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(-1)
}

/// "# KEEP: GROUP HEX", the hex made a byte at a time.
fn keep(group: &str, key: &[u8]) {
    let hex: String = key.iter().map(|b| format!("{:02x}", b)).collect();
    println!("# KEEP: {} {}", group, hex);
}

fn bail(what: &str) -> ! {
    println!("# rust-swap-proof: {}", what);
    exit(1)
}

fn main() {
    if meminfo_kb("SwapTotal") <= 0 {
        bail("no swap device: run with --swap");
    }
    let method = secbuf::lock_method().unwrap_or_else(|e| bail(&e.to_string()));
    println!("# lock method {}", method);
    println!("# KEEP: expect rust-secbuf absent");
    println!("# KEEP: expect rust-packed absent");
    println!("# KEEP: expect rust-control present");
    println!(
        "# KEEP: summary swap-scan|Rust SecretBuf ({})|rust-secbuf,rust-control",
        method
    );
    println!(
        "# KEEP: summary swap-scan|Rust SecretBuf packed ({})|rust-packed,rust-control",
        method
    );

    let mut urandom = File::open("/dev/urandom").unwrap_or_else(|e| bail(&e.to_string()));
    let mut held = Vec::new();
    for _ in 0..KEYS {
        let k = SecretBuf::from_reader(&mut urandom, KEY).unwrap_or_else(|e| bail(&e.to_string()));
        keep("rust-secbuf", k.expose_secret());
        held.push(k);
        let p = SecretBuf::from_reader_with(&Options::new().packed(true), &mut urandom, KEY)
            .unwrap_or_else(|e| bail(&e.to_string()));
        keep("rust-packed", p.expose_secret());
        held.push(p);
    }
    // The control: a Vec per key, each on a page of its own so that
    // pressure can push some of them out whichever stay hot.
    let mut control = Vec::new();
    for _ in 0..KEYS {
        let mut v = Vec::with_capacity(4096);
        (&mut urandom)
            .take(KEY as u64)
            .read_to_end(&mut v)
            .unwrap_or_else(|e| bail(&e.to_string()));
        keep("rust-control", &v);
        control.push(v);
    }

    // Pressure: new anonymous memory in the same cgroup, touched, kept.
    let mut pressure: Vec<Vec<u8>> = Vec::new();
    while pressure.len() * CHUNK < PRESSURE {
        pressure.push(vec![0x5a; CHUNK]);
    }
    // Let swap writeback finish before the guest powers off.
    for _ in 0..50 {
        if meminfo_kb("Writeback") <= 0 {
            break;
        }
        sleep(Duration::from_millis(100));
    }
    let swapped = meminfo_kb("SwapTotal") - meminfo_kb("SwapFree");
    println!(
        "# REPORT: rust swap {}: {} MiB pressure, {} kB swapped; {} keys each: SecretBuf, packed, Vec",
        method,
        PRESSURE >> 20,
        swapped,
        KEYS
    );
    if swapped <= 0 {
        bail("nothing was swapped: the run proves nothing");
    }
    std::mem::forget((held, control, pressure));
}
