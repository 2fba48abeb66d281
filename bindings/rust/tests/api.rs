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
    assert!(b.expose_secret().iter().all(|&x| x == 0));
    b.expose_secret_mut().copy_from_slice(&[7u8; 100]);
    assert!(b.expose_secret().iter().all(|&x| x == 7));
    assert_eq!(
        b.expose_secret().as_ptr() as usize % 16,
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
    assert!(SecretBuf::with_options(&Options::new().packed(true), 0).is_err());
    assert!(SecretBuf::from_reader(&mut io::empty(), 0).is_err());
}

#[test]
fn debug_of_an_error_names_the_fix_as_display_does() {
    // What `fn main() -> Result<(), secbuf::Error>` prints is the Debug.
    let e = SecretBuf::new(0).unwrap_err();
    let (display, debug) = (e.to_string(), format!("{:?}", e));
    assert!(display.contains("at least one byte"), "{}", display);
    assert!(debug.contains(&display), "{} lacks {}", debug, display);
    assert!(
        debug.contains("op: Alloc") && debug.contains("size: 0"),
        "{}",
        debug
    );
    assert!(format!("{:#?}", e).contains("at least one byte"));
}

#[test]
fn size_max_is_an_error_not_a_crash() {
    for opts in [
        Options::new(),
        Options::new().packed(true),
        Options::new().secret(true).best_effort(true),
    ] {
        let e = SecretBuf::with_options(&opts, usize::MAX).unwrap_err();
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
    assert_eq!(b.expose_secret(), b"0123456789abcdef");
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
    b.expose_secret_mut()
        .copy_from_slice(&[0xde, 0xad, 0xbe, 0xef]);
    let mut k = SecretBox::<[u8; 4]>::zeroed().unwrap();
    *k.expose_secret_mut() = [0xde, 0xad, 0xbe, 0xef];
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
    let mut a = SecretBuf::with_options(&Options::new().packed(true), 32).unwrap();
    a.expose_secret_mut().copy_from_slice(&[9; 32]);
    let b = a.try_clone().unwrap();
    assert_eq!(a.expose_secret(), b.expose_secret());
    assert_ne!(a.expose_secret().as_ptr(), b.expose_secret().as_ptr());
    assert!(b.is_packed());
    let mut k = SecretBox::<[u64; 2]>::zeroed_with(&Options::new().packed(true)).unwrap();
    *k.expose_secret_mut() = [1, 2];
    let c = k.try_clone().unwrap();
    assert_eq!(c.expose_secret(), &[1, 2]);
    assert_ne!(c.expose_secret().as_ptr(), k.expose_secret().as_ptr());
}

#[test]
fn freeze_makes_the_pages_read_only_and_melt_writable() {
    let mut b = SecretBuf::new(4096).unwrap();
    b.expose_secret_mut()[0] = 42;
    let addr = b.expose_secret().as_ptr() as usize;
    assert!(perms_at(addr).starts_with("rw"));
    let frozen = b.freeze().unwrap();
    assert_eq!(perms_at(addr), "r--p");
    assert_eq!(frozen.expose_secret()[0], 42);
    assert_eq!(frozen.len(), 4096);
    let mut b = frozen.melt().unwrap();
    assert!(perms_at(addr).starts_with("rw"));
    b.expose_secret_mut()[1] = 1;
}

#[test]
fn packed_buffers_cannot_be_frozen_and_come_back() {
    let packed = Options::new().packed(true);
    let mut b = SecretBuf::with_options(&packed, 32).unwrap();
    assert!(b.is_packed());
    b.expose_secret_mut()[31] = 5;
    let (e, b) = b.freeze().unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EINVAL));
    assert_eq!(e.op(), Op::Protect);
    assert_eq!(b.expose_secret()[31], 5);
    // Larger than SECBUF_PACKED_MAX: a guarded buffer after all.
    assert!(!SecretBuf::with_options(&packed, 4096).unwrap().is_packed());
}

#[test]
fn many_packed_keys_share_pages() {
    let keys: Vec<SecretBuf> = (0..20_000)
        .map(|_| SecretBuf::with_options(&Options::new().packed(true), 32).unwrap())
        .collect();
    let mut pages: Vec<usize> = keys
        .iter()
        .map(|k| k.expose_secret().as_ptr() as usize / 4096)
        .collect();
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
    match SecretBuf::with_options(&Options::new().secret(true), 64) {
        Ok(mut b) => {
            assert_eq!(b.lock_method().unwrap(), "secretmem");
            b.expose_secret_mut()[63] = 1;
            assert_eq!(b.expose_secret()[63], 1);
        }
        Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => {
            assert!(e.to_string().contains("memfd_secret"), "{}", e);
            skip("no memfd_secret on this kernel (ENOSYS, as documented)");
        }
        Err(e) => panic!("{}", e),
    }
    let b = SecretBuf::with_options(&Options::new().secret(true).best_effort(true), 64).unwrap();
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
    assert_eq!(k.expose_secret(), &[0; 32]);
    k.expose_secret_mut()[5] = 3;
    assert_eq!(k.expose_secret()[5], 3);
    let r = SecretBox::<[u64; 4]>::from_reader(&mut &[1u8; 32][..]).unwrap();
    assert_eq!(r.expose_secret()[3], u64::from_ne_bytes([1; 8]));
    assert_eq!(
        SecretBox::<u128>::from_reader(&mut &[0u8; 3][..])
            .unwrap_err()
            .kind(),
        io::ErrorKind::UnexpectedEof
    );
    let packed = Options::new().packed(true);
    let p = SecretBox::<[u32; 8]>::zeroed_with(&packed).unwrap();
    assert_eq!(
        p.expose_secret().as_ptr() as usize % std::mem::align_of::<u32>(),
        0
    );
    let w = SecretBox::<u128>::from_reader_with(&packed, &mut &[2u8; 16][..]).unwrap();
    assert_eq!(*w.expose_secret(), u128::from_ne_bytes([2; 16]));
    assert_eq!(
        w.expose_secret() as *const u128 as usize % std::mem::align_of::<u128>(),
        0
    );
}

#[test]
fn secret_box_new_moves_an_integer_value_in() {
    let mut b = SecretBox::new([[1u8; 16], [2u8; 16]]).unwrap();
    assert_eq!(b.expose_secret()[1], [2; 16]);
    b.expose_secret_mut()[1] = [3; 16];
    assert_eq!(b.expose_secret()[1][15], 3);
    let n = SecretBox::with_options(&Options::new().packed(true), -7i64).unwrap();
    assert_eq!(*n.expose_secret(), -7);
    assert!(!format!("{:?}", n).contains('7'));
}

fn assert_send_sync<T: Send + Sync>() {}

#[test]
fn eight_threads_allocate_share_and_free() {
    assert_send_sync::<SecretBuf>();
    assert_send_sync::<SecretBox<[u8; 32]>>();
    let shared = Arc::new({
        let mut b = SecretBuf::new(4096).unwrap();
        b.expose_secret_mut()
            .iter_mut()
            .enumerate()
            .for_each(|(i, x)| *x = i as u8);
        b.freeze().unwrap()
    });
    let workers: Vec<_> = (0..8u8)
        .map(|t| {
            let shared = Arc::clone(&shared);
            let mine = SecretBuf::with_options(&Options::new().packed(t % 2 == 0), 48).unwrap();
            thread::spawn(move || {
                let mut mine = mine; // made in the main thread, used and freed here
                mine.expose_secret_mut().fill(t);
                for round in 0..2000usize {
                    let opts = Options::new().packed(round % 2 == 0);
                    let mut b = SecretBuf::with_options(&opts, 1 + round % 300).unwrap();
                    b.expose_secret_mut().fill(t);
                    assert!(b.expose_secret().iter().all(|&x| x == t));
                    let i = round % 4096;
                    assert_eq!(shared.expose_secret()[i], i as u8);
                }
                assert!(mine.expose_secret().iter().all(|&x| x == t));
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
}
