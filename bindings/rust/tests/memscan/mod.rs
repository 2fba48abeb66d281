//! Search this process's own memory for a secret without holding the
//! secret anywhere: the needle is kept as two random halves whose XOR is
//! the secret, and the scan compares XOR by XOR, byte by byte.  Memory is
//! read through /proc/self/mem into a secbuf scratch buffer (locked, out
//! of dumps, and left out of the scan), and every hit is judged by the
//! VmFlags of its mapping in /proc/self/smaps.
use std::fs::{self, File};
use std::io::{Read, Write};
use std::os::unix::fs::FileExt;

use secbuf::SecretBuf;

pub const LEN: usize = 32;

pub struct Needle {
    mask: [u8; LEN],
    masked: [u8; LEN],
}

impl Needle {
    /// A random secret, held only as its two halves.
    pub fn random() -> Needle {
        let mut n = Needle {
            mask: [0; LEN],
            masked: [0; LEN],
        };
        let mut r = File::open("/dev/urandom").expect("/dev/urandom");
        r.read_exact(&mut n.mask).unwrap();
        r.read_exact(&mut n.masked).unwrap();
        n
    }

    /// The secret, one byte per write: no whole copy of it is ever in
    /// this process's memory, only in the pipe's (the kernel's).
    pub fn write_to(&self, w: &mut impl Write) {
        for i in 0..LEN {
            w.write_all(&[self.mask[i] ^ self.masked[i]]).unwrap();
        }
    }

    fn at(&self, hay: &[u8]) -> bool {
        (0..LEN).all(|j| hay[j] ^ self.mask[j] == self.masked[j])
    }
}

pub struct Mapping {
    pub start: u64,
    pub end: u64,
    perms: String,
    pub name: String,
    flags: Vec<String>,
}

impl Mapping {
    /// Locked (VM_LOCKED "lo", or the series' lock-on-fault "lf") and
    /// left out of core dumps ("dd").
    pub fn protected(&self) -> bool {
        let has = |f: &str| self.flags.iter().any(|x| x == f);
        (has("lo") || has("lf")) && has("dd")
    }

    /// Anonymous or heap memory (stacks and named anonymous mappings
    /// included), readable: what the scan covers.
    fn scanned(&self) -> bool {
        let anon = self.name.is_empty()
            || self.name == "[heap]"
            || self.name.starts_with("[stack")
            || self.name.starts_with("[anon:");
        anon && self.perms.starts_with('r')
    }
}

pub fn mappings() -> Vec<Mapping> {
    let smaps = fs::read_to_string("/proc/self/smaps").expect("/proc/self/smaps");
    let mut maps: Vec<Mapping> = Vec::new();
    for line in smaps.lines() {
        if let Some(flags) = line.strip_prefix("VmFlags:") {
            if let Some(m) = maps.last_mut() {
                m.flags = flags.split_whitespace().map(String::from).collect();
            }
            continue;
        }
        let mut f = line.split_whitespace();
        let range = f.next().unwrap_or("");
        let (lo, hi) = match range.split_once('-') {
            Some(r) => r,
            None => continue,
        };
        let (start, end) = match (u64::from_str_radix(lo, 16), u64::from_str_radix(hi, 16)) {
            (Ok(s), Ok(e)) => (s, e),
            _ => continue, // a field line ("Rss: ..."), not a mapping's header
        };
        let perms = f.next().unwrap_or("").to_string();
        let name = f.nth(3).map(|first| {
            let rest: Vec<&str> = f.collect();
            if rest.is_empty() {
                first.to_string()
            } else {
                format!("{} {}", first, rest.join(" "))
            }
        });
        maps.push(Mapping {
            start,
            end,
            perms,
            name: name.unwrap_or_default(),
            flags: Vec::new(),
        });
    }
    maps
}

#[derive(Debug, Default)]
pub struct Hits {
    /// In locked, non-dumpable mappings.
    pub inside: usize,
    /// Elsewhere: address and mapping name.
    pub outside: Vec<(u64, String)>,
    /// Bytes read, to show the scan covered something.
    pub scanned: u64,
}

/// Every place of the needle in this process's anonymous and heap memory.
pub fn scan(needle: &Needle) -> Hits {
    let mut buf = SecretBuf::new(1 << 20).expect("scratch buffer");
    let scratch = buf.expose_secret_mut();
    let own = (
        scratch.as_ptr() as u64,
        scratch.as_ptr() as u64 + scratch.len() as u64,
    );
    let mem = File::open("/proc/self/mem").expect("/proc/self/mem");
    let mut hits = Hits::default();
    for m in mappings().iter().filter(|m| m.scanned()) {
        let mut at = m.start;
        while at + LEN as u64 <= m.end {
            // The scratch buffer itself holds what it last read: skip it.
            if at >= own.0 && at < own.1 {
                at = own.1;
                continue;
            }
            let mut end = m.end.min(at + scratch.len() as u64);
            if at < own.0 && end > own.0 {
                end = own.0;
            }
            let want = (end - at) as usize;
            if want < LEN {
                at = end;
                continue;
            }
            let got = match mem.read_at(&mut scratch[..want], at) {
                Ok(n) if n >= LEN => n,
                _ => break, // unmapped since the listing, or unreadable (EIO)
            };
            hits.scanned += got as u64;
            for i in 0..=got - LEN {
                if needle.at(&scratch[i..i + LEN]) {
                    if m.protected() {
                        hits.inside += 1;
                    } else {
                        hits.outside.push((at + i as u64, m.name.clone()));
                    }
                }
            }
            // Overlap by LEN - 1 so that no match straddles two reads unseen.
            at += (got - (LEN - 1)) as u64;
        }
    }
    scratch.fill(0);
    hits
}
