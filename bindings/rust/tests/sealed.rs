//! Sealed secrets: round trips, chunks, options, errors and their advice,
//! tampered and truncated bytes, rekey, panics in callbacks, threads.  A
//! test that cannot run here prints "SKIP: reason" and returns.  (The fork
//! test and the memory scan are files of their own: sealed_fork.rs,
//! sealed_scan.rs.)
use std::io::{self, Read};
use std::ops::ControlFlow;
use std::panic;
use std::sync::Arc;
use std::thread;

use secbuf::ffi::SECBUF_SEAL_CHUNK;
use secbuf::{Op, Options, Sealed, SealedBytes, SecretBox, SecretBuf};

fn skip(why: &str) {
    println!("SKIP: {}", why);
}

/// n bytes of a pattern that differs in every chunk.
fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 7 + i / 1000) as u8).collect()
}

fn buf_of(bytes: &[u8]) -> SecretBuf {
    let mut b = SecretBuf::new(bytes.len()).unwrap();
    b.expose_secret_mut().copy_from_slice(bytes);
    b
}

#[test]
fn bytes_round_trip_through_with_and_open() {
    let plain = pattern(100);
    let key = SealedBytes::seal(buf_of(&plain)).unwrap();
    assert_eq!(key.len(), 100);
    assert!(!key.is_empty());
    assert_eq!(key.with(|k| k.to_vec()).unwrap(), plain);
    let opened = key.open().unwrap();
    assert_eq!(opened.expose_secret(), &plain[..]);
    assert!(!opened.is_packed());
    // Opens are independent buffers, and the secret opens again and again.
    let again = key.open().unwrap();
    assert_ne!(
        again.expose_secret().as_ptr(),
        opened.expose_secret().as_ptr()
    );
    assert_eq!(key.with(|k| k[99]).unwrap(), plain[99]);
}

#[test]
fn sealed_value_round_trip() {
    let mut b = SecretBox::<[u64; 4]>::zeroed().unwrap();
    *b.expose_secret_mut() = [1, 2, 3, u64::MAX];
    let key = Sealed::seal(b).unwrap();
    assert_eq!(key.with(|v: &[u64; 4]| v[3]).unwrap(), u64::MAX);
    let opened = key.open().unwrap();
    assert_eq!(opened.expose_secret(), &[1, 2, 3, u64::MAX]);
    let r = Sealed::<u128>::from_reader(&mut &[9u8; 16][..]).unwrap();
    assert_eq!(
        *r.open().unwrap().expose_secret(),
        u128::from_ne_bytes([9; 16])
    );
    let bytes = r.into_bytes();
    assert_eq!(bytes.len(), 16);
    assert_eq!(bytes.with(|k| k.to_vec()).unwrap(), vec![9; 16]);
}

#[test]
fn from_reader_reads_exactly_and_fails_on_short_input() {
    let mut src: &[u8] = b"0123456789abcdef-rest";
    let key = SealedBytes::from_reader(&mut src, 16).unwrap();
    assert_eq!(src, b"-rest", "read past the secret");
    assert!(key.with(|k| k == b"0123456789abcdef").unwrap());

    let e = SealedBytes::from_reader(&mut &b"short"[..], 32).unwrap_err();
    assert_eq!(e.op(), Op::Read);
    assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
    struct Broken;
    impl Read for Broken {
        fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
            Err(io::Error::from_raw_os_error(libc::EIO))
        }
    }
    let e = Sealed::<[u8; 32]>::from_reader(&mut Broken).unwrap_err();
    assert_eq!((e.op(), e.raw_os_error()), (Op::Read, Some(libc::EIO)));
}

#[test]
fn sizes_zero_and_max_are_errors_with_advice() {
    let e = SealedBytes::from_reader(&mut io::empty(), 0).unwrap_err();
    assert_eq!((e.op(), e.raw_os_error()), (Op::Seal, Some(libc::EINVAL)));
    assert!(e.to_string().contains("at least one byte"), "{}", e);
    let e = SealedBytes::from_reader(&mut io::repeat(1), usize::MAX).unwrap_err();
    assert_eq!(e.op(), Op::Seal);
    assert_eq!(e.raw_os_error(), Some(libc::ENOMEM), "{}", e);
    assert!(e.to_string().contains(&usize::MAX.to_string()), "{}", e);
}

#[test]
fn large_secrets_open_whole_and_in_chunks() {
    let n = 2 * SECBUF_SEAL_CHUNK + 1000;
    let plain = pattern(n);
    let key = SealedBytes::from_reader(&mut &plain[..], n).unwrap();
    assert_eq!(key.open().unwrap().expose_secret(), &plain[..]);
    let mut seen = Vec::new();
    let all = key
        .each(|chunk, offset| {
            assert_eq!(chunk, &plain[offset..offset + chunk.len()]);
            seen.push((offset, chunk.len()));
            ControlFlow::<()>::Continue(())
        })
        .unwrap();
    assert_eq!(all, ControlFlow::Continue(()));
    assert_eq!(
        seen,
        vec![
            (0, SECBUF_SEAL_CHUNK),
            (SECBUF_SEAL_CHUNK, SECBUF_SEAL_CHUNK),
            (2 * SECBUF_SEAL_CHUNK, 1000)
        ]
    );
    let mut calls = 0;
    let stopped = key
        .each(|chunk, offset| {
            calls += 1;
            if offset > 0 {
                ControlFlow::Break(chunk[0])
            } else {
                ControlFlow::Continue(())
            }
        })
        .unwrap();
    assert_eq!(stopped, ControlFlow::Break(plain[SECBUF_SEAL_CHUNK]));
    assert_eq!(calls, 2, "each went on after a Break");
}

#[test]
fn options_choose_how_opens_allocate() {
    let packed = Options::new().packed(true);
    let key = SealedBytes::seal_with(&packed, buf_of(&[5; 32])).unwrap();
    assert!(key.open().unwrap().is_packed());
    // A packed buffer's options carry over to its seal.
    let p = SecretBuf::with_options(&packed, 32).unwrap();
    assert!(SealedBytes::seal(p).unwrap().open().unwrap().is_packed());
    let b = SecretBox::<[u8; 16]>::zeroed().unwrap();
    assert!(
        Sealed::seal_with(&packed, b)
            .unwrap()
            .open()
            .unwrap()
            .expose_secret()
            == &[0; 16]
    );
    match SealedBytes::seal_with(&Options::new().secret(true), buf_of(&[6; 64])) {
        Ok(k) => {
            let o = k.open().unwrap();
            assert_eq!(o.lock_method().unwrap(), "secretmem");
            assert_eq!(o.expose_secret(), &[6; 64][..]);
        }
        Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => {
            skip("no memfd_secret on this kernel (ENOSYS)")
        }
        Err(e) => panic!("{}", e),
    }
    // Populate means nothing to a seal: dropped, not refused.
    let populated = Options::new().populate(true);
    assert!(SealedBytes::from_reader_with(&populated, &mut &[1u8; 8][..], 8).is_ok());
}

#[test]
fn tampered_bytes_fail_with_ebadmsg_and_no_plaintext() {
    let key = SealedBytes::seal(buf_of(&[0x42; 32])).unwrap();
    let bytes = key.export();
    assert_eq!(
        bytes.len(),
        88,
        "secbuf_sealed_export(3): a 32-byte secret takes 88 bytes"
    );
    assert_eq!(&bytes[..4], b"SBS1");
    assert!(
        !bytes.windows(32).any(|w| w == [0x42; 32]),
        "plaintext in the sealed bytes"
    );
    // A faithful copy opens; so does the import of its bytes.
    let copy = SealedBytes::import(&bytes).unwrap();
    assert!(copy.with(|k| k == [0x42; 32]).unwrap());
    for at in [20, 50, 87] {
        let mut bad = bytes.clone();
        bad[at] ^= 1;
        let tampered = SealedBytes::import(&bad).unwrap();
        let mut called = false;
        let e = tampered.with(|_| called = true).unwrap_err();
        assert!(!called, "the callback saw a tampered secret");
        assert_eq!((e.op(), e.raw_os_error()), (Op::Open, Some(libc::EBADMSG)));
        assert!(e.to_string().contains("tampered"), "{}", e);
        assert_eq!(
            tampered.open().unwrap_err().raw_os_error(),
            Some(libc::EBADMSG)
        );
    }
    // Truncated or lengthened: not sealed bytes at all.
    for bad in [
        &bytes[..87],
        &bytes[..10],
        &[bytes.clone(), vec![0]].concat()[..],
    ] {
        let e = SealedBytes::import(bad).unwrap_err();
        assert_eq!(
            (e.op(), e.raw_os_error()),
            (Op::Import, Some(libc::EBADMSG))
        );
        assert!(e.to_string().contains("not sealed bytes"), "{}", e);
    }
    // Another size than the type's.
    let e = Sealed::<[u8; 16]>::import(&bytes).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EINVAL));
    let k: Sealed<[u8; 32]> = Sealed::import(&bytes).unwrap();
    assert_eq!(k.with(|v: &[u8; 32]| v[31]).unwrap(), 0x42);
}

#[test]
fn rekey_keeps_secrets_and_retires_old_sealed_bytes() {
    let key = Sealed::<[u8; 32]>::from_reader(&mut &[3u8; 32][..]).unwrap();
    let before = key.export();
    let rekeys = secbuf::seal_stat().rekeys;
    secbuf::seal_rekey().unwrap();
    assert!(secbuf::seal_stat().rekeys > rekeys);
    assert!(key.with(|v: &[u8; 32]| *v == [3; 32]).unwrap());
    assert_ne!(key.export(), before, "the same sealed bytes after a rekey");
    let old = SealedBytes::import(&before).unwrap();
    assert_eq!(
        old.with(|_| ()).unwrap_err().raw_os_error(),
        Some(libc::EBADMSG)
    );
}

#[test]
fn seal_stat_counts_and_names_the_prekey() {
    let key = SealedBytes::seal(buf_of(&[1; 1000])).unwrap();
    let st = secbuf::seal_stat();
    assert!(
        st.sealed >= 1 && st.bytes >= 1000 && st.sealed_bytes > st.bytes,
        "{:?}",
        st
    );
    let prekey = st.prekey.expect("a prekey after a seal");
    assert!(
        ["secretmem", "maplockonfault", "mlock2", "mlock"].contains(&prekey),
        "{}",
        prekey
    );
    drop(key);
}

#[test]
fn a_panic_in_a_callback_is_resumed_after_the_wipe() {
    let key = SealedBytes::seal(buf_of(&[8; 32])).unwrap();
    let caught = panic::catch_unwind(panic::AssertUnwindSafe(|| {
        key.with(|_| panic!("in with")).unwrap();
    }))
    .unwrap_err();
    assert_eq!(caught.downcast_ref::<&str>(), Some(&"in with"));
    let caught = panic::catch_unwind(panic::AssertUnwindSafe(|| {
        let _ = key.each(|_, _| -> ControlFlow<()> { panic!("in each") });
    }))
    .unwrap_err();
    assert_eq!(caught.downcast_ref::<&str>(), Some(&"in each"));
    struct Bomb;
    impl Read for Bomb {
        fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
            panic!("in read")
        }
    }
    let caught = panic::catch_unwind(|| SealedBytes::from_reader(&mut Bomb, 8)).unwrap_err();
    assert_eq!(caught.downcast_ref::<&str>(), Some(&"in read"));
    // The library is none the worse.
    assert_eq!(key.with(|k| k[0]).unwrap(), 8);
}

#[test]
fn debug_shows_the_length_only() {
    let key = SealedBytes::seal(buf_of(&[0xde, 0xad, 0xbe, 0xef])).unwrap();
    let v = Sealed::<u32>::from_reader(&mut &[0xde, 0xad, 0xbe, 0xef][..]).unwrap();
    for s in [
        format!("{:?}", key),
        format!("{:#?}", key),
        format!("{:?}", v),
    ] {
        for needle in ["222", "173", "190", "239", "de", "ad", "be", "ef", "DE"] {
            assert!(!s.contains(needle), "{:?} shows {}", s, needle);
        }
    }
    assert_eq!(format!("{:?}", key), "SealedBytes { len: 4, .. }");
    assert!(format!("{:?}", v).contains("len: 4"));
}

fn assert_send_sync<T: Send + Sync>() {}

#[test]
fn threads_open_one_secret_while_another_rekeys() {
    assert_send_sync::<SealedBytes>();
    assert_send_sync::<Sealed<[u8; 32]>>();
    let key = Arc::new(SealedBytes::seal(buf_of(&pattern(64))).unwrap());
    let want = pattern(64);
    let openers: Vec<_> = (0..4)
        .map(|_| {
            let key = Arc::clone(&key);
            let want = want.clone();
            thread::spawn(move || {
                for _ in 0..300 {
                    assert!(key.with(|k| k == &want[..]).unwrap());
                }
            })
        })
        .collect();
    for _ in 0..20 {
        secbuf::seal_rekey().unwrap();
    }
    for t in openers {
        t.join().unwrap();
    }
    // Made in one thread, freed in another.
    let moved = SealedBytes::seal(buf_of(&[4; 8])).unwrap();
    thread::spawn(move || assert_eq!(moved.with(|k| k[7]).unwrap(), 4))
        .join()
        .unwrap();
}
