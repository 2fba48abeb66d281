//! The copy proof: a random 32-byte key read the recommended way
//! (`SecretBuf::from_reader` from a pipe) is found in this process's
//! memory only in locked, non-dumpable mappings; read the naive way
//! (`read_to_end` into a `Vec`, or through a `BufReader`) it is found
//! outside them, which shows the scan can fail.
mod memscan;

use std::fs::File;
use std::io::{BufReader, Read};
use std::os::unix::io::FromRawFd;

use memscan::{Needle, LEN};
use secbuf::SecretBuf;

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

#[test]
fn from_reader_leaves_no_copy_outside_locked_memory() {
    let needle = Needle::random();
    let key = SecretBuf::from_reader(&mut pipe_with(&needle), LEN).unwrap();
    let hits = memscan::scan(&needle);
    assert!(hits.scanned > 0, "nothing was scanned");
    assert!(
        hits.inside >= 1,
        "the key was not found in its own buffer ({} bytes scanned): the scan is blind",
        hits.scanned
    );
    assert!(
        hits.outside.is_empty(),
        "copies outside locked memory: {:x?}",
        hits.outside
    );
    drop(key);
}

#[test]
fn control_read_to_end_into_vec_is_found_outside() {
    let needle = Needle::random();
    let mut v = Vec::new();
    pipe_with(&needle).read_to_end(&mut v).unwrap();
    let hits = memscan::scan(&needle);
    let heap = (v.as_ptr() as u64, v.as_ptr() as u64 + v.len() as u64);
    assert!(
        hits.outside.iter().any(|&(a, _)| a >= heap.0 && a < heap.1),
        "the Vec's copy at {:x} was not found: {:?}",
        heap.0,
        hits
    );
}

#[test]
fn control_bufreader_keeps_a_copy_outside() {
    let needle = Needle::random();
    let mut r = BufReader::new(pipe_with(&needle));
    let key = SecretBuf::from_reader(&mut r, LEN).unwrap();
    let hits = memscan::scan(&needle);
    assert!(
        hits.inside >= 1,
        "the key's own buffer was not found: {:?}",
        hits
    );
    assert!(
        !hits.outside.is_empty(),
        "BufReader's buffer was not found: {:?}",
        hits
    );
    drop((key, r));
}
