//! The binding's surface: sizes, errors, options, freeze, SecretBox,
//! threads.  A test that cannot run here prints "SKIP: reason" and
//! returns; bindings/rust/run-tests counts it as skipped.
use std::fs;
use std::io::{self, Read};
use std::sync::Arc;
use std::thread;

use secbuf::{Op, Options, SecretBox, SecretBuf};

fn skip(why: &str) {
    println!("SKIP: {}", why);
}

/// The permissions ("rw-p") of the mapping holding addr, from /proc/self/maps.
fn perms_at(addr: usize) -> String {
    let maps = fs::read_to_string("/proc/self/maps").unwrap();
    for line in maps.lines() {
        let mut f = line.split_whitespace();
        let (lo, hi) = f.next().unwrap().split_once('-').unwrap();
        let (lo, hi) = (
            usize::from_str_radix(lo, 16).unwrap(),
            usize::from_str_radix(hi, 16).unwrap(),
        );
        if addr >= lo && addr < hi {
            return f.next().unwrap().to_string();
        }
    }
    panic!("{:x} is in no mapping", addr);
}

#[test]
fn new_is_zeroed_writable_and_sized() {
    let mut b = SecretBuf::new(100).unwrap();
    assert_eq!(b.len(), 100);
    assert!(!b.is_empty());
    assert!(b.iter().all(|&x| x == 0));
    b.copy_from_slice(&[7u8; 100]);
    assert!(b.iter().all(|&x| x == 7));
    assert_eq!(
        b.as_ptr() as usize % 16,
        0,
        "secbuf promises 16-byte alignment"
    );
}

#[test]
fn size_zero_is_einval_with_a_message() {
    let e = SecretBuf::new(0).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EINVAL));
    assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
    assert_eq!(e.op(), Op::Alloc);
    assert!(e.to_string().contains("at least one byte"), "{}", e);
    assert!(SecretBuf::options().packed(true).alloc(0).is_err());
    assert!(SecretBuf::from_reader(&mut io::empty(), 0).is_err());
}

#[test]
fn size_max_is_an_error_not_a_crash() {
    for opts in [
        Options::new(),
        *Options::new().packed(true),
        *Options::new().secret(true).best_effort(true),
    ] {
        let e = opts.alloc(usize::MAX).unwrap_err();
        assert!(e.raw_os_error().is_some(), "{:?}", e);
        assert!(e.to_string().contains(&usize::MAX.to_string()), "{}", e);
    }
    let e = SecretBuf::from_reader(&mut io::repeat(1), usize::MAX).unwrap_err();
    assert_eq!(e.op(), Op::Alloc);
    assert!(SecretBuf::new(usize::MAX / 2).is_err());
}

#[test]
fn from_reader_fills_exactly_and_fails_on_short_input() {
    let mut src: &[u8] = b"0123456789abcdef-rest";
    let b = SecretBuf::from_reader(&mut src, 16).unwrap();
    assert_eq!(&b[..], b"0123456789abcdef");
    assert_eq!(src, b"-rest", "read past the buffer");

    let e = SecretBuf::from_reader(&mut &b"short"[..], 32).unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
    assert_eq!(e.op(), Op::Read);

    struct Broken;
    impl Read for Broken {
        fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
            Err(io::Error::from_raw_os_error(libc::EIO))
        }
    }
    let e = SecretBuf::from_reader(&mut Broken, 8).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EIO));
    let io: io::Error = e.into();
    assert_eq!(
        io.get_ref()
            .and_then(|i| i.downcast_ref::<secbuf::Error>())
            .unwrap()
            .op(),
        Op::Read
    );
}

#[test]
fn debug_never_shows_the_bytes() {
    let mut b = SecretBuf::new(4).unwrap();
    b.copy_from_slice(&[0xde, 0xad, 0xbe, 0xef]);
    let mut k = SecretBox::<[u8; 4]>::zeroed().unwrap();
    *k = [0xde, 0xad, 0xbe, 0xef];
    let frozen = b.try_clone().unwrap().freeze().unwrap();
    for s in [
        format!("{:?}", b),
        format!("{:#?}", b),
        format!("{:?}", k),
        format!("{:?}", frozen),
    ] {
        for needle in ["222", "173", "190", "239", "de", "ad", "be", "ef", "DE"] {
            assert!(!s.contains(needle), "{:?} shows {}", s, needle);
        }
    }
    assert!(format!("{:?}", b).contains("len: 4"));
}

#[test]
fn try_clone_copies_into_a_second_buffer() {
    let mut a = SecretBuf::options().packed(true).alloc(32).unwrap();
    a.copy_from_slice(&[9; 32]);
    let b = a.try_clone().unwrap();
    assert_eq!(&a[..], &b[..]);
    assert_ne!(a.as_ptr(), b.as_ptr());
    assert!(b.is_packed());
}

#[test]
fn freeze_makes_the_pages_read_only_and_melt_writable() {
    let mut b = SecretBuf::new(4096).unwrap();
    b[0] = 42;
    let addr = b.as_ptr() as usize;
    assert!(perms_at(addr).starts_with("rw"));
    let frozen = b.freeze().unwrap();
    assert_eq!(perms_at(addr), "r--p");
    assert_eq!(frozen[0], 42);
    let mut b = frozen.melt().unwrap();
    assert!(perms_at(addr).starts_with("rw"));
    b[1] = 1;
}

#[test]
fn packed_buffers_cannot_be_frozen_and_come_back() {
    let mut b = SecretBuf::options().packed(true).alloc(32).unwrap();
    assert!(b.is_packed());
    b[31] = 5;
    let (e, b) = b.freeze().unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EINVAL));
    assert_eq!(e.op(), Op::Protect);
    assert_eq!(b[31], 5);
    // Larger than SECBUF_PACKED_MAX: a guarded buffer after all.
    assert!(!SecretBuf::options()
        .packed(true)
        .alloc(4096)
        .unwrap()
        .is_packed());
}

#[test]
fn many_packed_keys_share_pages() {
    let keys: Vec<SecretBuf> = (0..20_000)
        .map(|_| SecretBuf::options().packed(true).alloc(32).unwrap())
        .collect();
    let mut pages: Vec<usize> = keys.iter().map(|k| k.as_ptr() as usize / 4096).collect();
    pages.sort_unstable();
    pages.dedup();
    assert!(
        pages.len() * 10 < keys.len(),
        "{} keys on {} pages",
        keys.len(),
        pages.len()
    );
}

#[test]
fn secret_tier_is_secretmem_or_a_clear_enosys() {
    match SecretBuf::options().secret(true).alloc(64) {
        Ok(mut b) => {
            assert_eq!(b.lock_method().unwrap(), "secretmem");
            b[63] = 1;
            assert_eq!(b[63], 1);
        }
        Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => {
            assert!(e.to_string().contains("memfd_secret"), "{}", e);
            skip("no memfd_secret on this kernel (ENOSYS, as documented)");
        }
        Err(e) => panic!("{}", e),
    }
    let b = SecretBuf::options()
        .secret(true)
        .best_effort(true)
        .alloc(64)
        .unwrap();
    assert!(b.lock_method().is_ok());
}

#[test]
fn lock_method_is_named() {
    let m = secbuf::lock_method().unwrap();
    assert!(
        ["maplockonfault", "mlock2", "mlock", "none"].contains(&m),
        "{}",
        m
    );
    assert_eq!(SecretBuf::new(1).unwrap().lock_method().unwrap(), m);
}

#[test]
fn secret_box_holds_a_key_in_place() {
    let mut k = SecretBox::<[u8; 32]>::zeroed().unwrap();
    assert_eq!(*k, [0; 32]);
    k[5] = 3;
    assert_eq!(k[5], 3);
    let r = SecretBox::<[u64; 4]>::from_reader(&mut &[1u8; 32][..]).unwrap();
    assert_eq!(r[3], u64::from_ne_bytes([1; 8]));
    assert_eq!(
        SecretBox::<u128>::from_reader(&mut &[0u8; 3][..])
            .unwrap_err()
            .kind(),
        io::ErrorKind::UnexpectedEof
    );
    let p = Options::new().packed(true).alloc_box::<[u32; 8]>().unwrap();
    assert_eq!(p.as_ptr() as usize % std::mem::align_of::<u32>(), 0);
}

#[test]
fn secret_box_new_moves_any_copy_value_in() {
    #[derive(Clone, Copy, PartialEq, Debug)]
    struct Keys {
        enc: [u8; 16],
        mac: [u8; 16],
        rotated: bool,
    }
    let v = Keys {
        enc: [1; 16],
        mac: [2; 16],
        rotated: true,
    };
    let mut b = SecretBox::new(v).unwrap();
    assert_eq!(*b, v);
    b.rotated = false;
    assert!(!b.rotated);
    assert!(!format!("{:?}", b).contains("rotated"));
}

fn assert_send_sync<T: Send + Sync>() {}

#[test]
fn eight_threads_allocate_share_and_free() {
    assert_send_sync::<SecretBuf>();
    assert_send_sync::<SecretBox<[u8; 32]>>();
    let shared = Arc::new({
        let mut b = SecretBuf::new(4096).unwrap();
        b.iter_mut().enumerate().for_each(|(i, x)| *x = i as u8);
        b.freeze().unwrap()
    });
    let workers: Vec<_> = (0..8u8)
        .map(|t| {
            let shared = Arc::clone(&shared);
            let mine = SecretBuf::options().packed(t % 2 == 0).alloc(48).unwrap();
            thread::spawn(move || {
                let mut mine = mine; // made in the main thread, used and freed here
                mine.iter_mut().for_each(|x| *x = t);
                for round in 0..2000usize {
                    let mut b = SecretBuf::options()
                        .packed(round % 2 == 0)
                        .alloc(1 + round % 300)
                        .unwrap();
                    b.iter_mut().for_each(|x| *x = t);
                    assert!(b.iter().all(|&x| x == t));
                    assert_eq!(shared[round % 4096], (round % 4096) as u8);
                }
                assert!(mine.iter().all(|&x| x == t));
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
}
