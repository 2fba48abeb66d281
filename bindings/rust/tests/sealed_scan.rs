//! The sealing proof, by scanning this process's own memory (memscan,
//! as copy_scan.rs does): a random 32-byte key sealed is nowhere in the
//! process while it idles, neither in locked memory nor outside it; while
//! open it is found in locked, non-dumpable mappings only; once the
//! closure returns (or panics) it is gone again.  The control: a copy the
//! closure makes into a Vec is found outside, which shows the scan sees
//! ordinary memory.
mod memscan;

use std::fs::File;
use std::os::unix::io::FromRawFd;
use std::panic;

use memscan::{Needle, LEN};
use secbuf::{Sealed, SealedBytes, SecretBox};

/// A pipe holding the needle's secret, written a byte at a time.
fn pipe_with(needle: &Needle) -> File {
    let mut fds = [0; 2];
    // SAFETY: fds is a valid array of two ints.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0, "pipe");
    // SAFETY: pipe() just returned these descriptors, owned by nothing else.
    let (r, mut w) = unsafe { (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) };
    needle.write_to(&mut w);
    r
}

fn assert_nowhere(needle: &Needle, when: &str) {
    let hits = memscan::scan(needle);
    assert!(hits.scanned > 0, "{}: nothing was scanned", when);
    assert!(
        hits.inside == 0 && hits.outside.is_empty(),
        "{}: the key is in the process: {:?}",
        when,
        hits
    );
}

fn assert_locked_only(needle: &Needle, when: &str) {
    let hits = memscan::scan(needle);
    assert!(
        hits.inside >= 1,
        "{}: the open key was not found ({} bytes scanned): the scan is blind",
        when,
        hits.scanned
    );
    assert!(
        hits.outside.is_empty(),
        "{}: copies outside locked memory: {:x?}",
        when,
        hits.outside
    );
}

#[test]
fn an_idle_sealed_key_is_nowhere_and_open_only_in_locked_memory() {
    let needle = Needle::random();
    let key = SealedBytes::from_reader(&mut pipe_with(&needle), LEN).unwrap();
    assert_nowhere(&needle, "sealed, idle");
    key.with(|_| assert_locked_only(&needle, "inside with()"))
        .unwrap();
    assert_nowhere(&needle, "after with()");
    let opened = key.open().unwrap();
    assert_locked_only(&needle, "open() as a SecretBuf");
    drop(opened);
    assert_nowhere(&needle, "after the opened buffer's drop");
    let caught = panic::catch_unwind(panic::AssertUnwindSafe(|| {
        key.with(|_| panic!("mid-use")).unwrap();
    }));
    assert!(caught.is_err());
    assert_nowhere(&needle, "after a panic in with()");
}

#[test]
fn a_sealed_box_leaves_no_plaintext_behind() {
    let needle = Needle::random();
    let b = SecretBox::<[u8; LEN]>::from_reader(&mut pipe_with(&needle)).unwrap();
    assert_locked_only(&needle, "in the SecretBox, before the seal");
    let key = Sealed::seal(b).unwrap();
    assert_nowhere(&needle, "sealed from a SecretBox, idle");
    key.with(|_: &[u8; LEN]| assert_locked_only(&needle, "inside Sealed::with()"))
        .unwrap();
    assert_nowhere(&needle, "after Sealed::with()");
}

#[test]
fn control_a_copy_out_of_the_closure_is_found_outside() {
    let needle = Needle::random();
    let key = SealedBytes::from_reader(&mut pipe_with(&needle), LEN).unwrap();
    let copy = key.with(|k| k.to_vec()).unwrap();
    let hits = memscan::scan(&needle);
    let heap = (copy.as_ptr() as u64, copy.as_ptr() as u64 + LEN as u64);
    assert!(
        hits.outside.iter().any(|&(a, _)| a >= heap.0 && a < heap.1),
        "the Vec's copy at {:x} was not found: {:?}",
        heap.0,
        hits
    );
}
