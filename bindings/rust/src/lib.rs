//! Secrets in secbuf memory, from Rust.
//!
//! [`SecretBuf`] is a byte buffer and [`SecretBox<T>`] one fixed-size value
//! (a `[u8; 32]` key), both in memory from libsecbuf: locked in RAM when
//! first touched, never swapped, between guard pages, out of core dumps,
//! zeros in a forked child, wiped and unmapped on drop.  [`Options`] asks
//! for packed secrets (many small keys sharing locked pages) or the secret
//! tier (memfd_secret).  Neither type is `Clone` or prints its bytes.
//!
//! ```no_run
//! use std::fs::File;
//! let mut f = File::open("key.bin")?;
//! let key = secbuf::SecretBuf::from_reader(&mut f, 32)?;  // read(2) into locked memory
//! assert_eq!(key.len(), 32);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # What still copies a secret
//!
//! The buffer protects only the bytes that stay in it.  Each of these puts
//! a copy in ordinary memory (heap or stack: swappable, in core dumps, not
//! wiped):
//!
//! - `buf.to_vec()`, `Vec::from(&buf[..])`, `buf.iter().collect()`,
//!   `String::from_utf8_lossy(&buf)`, `hex` or base64 encoding into a `String`;
//! - `*boxed` or `let k: [u8; 32] = *boxed`: a `SecretBox`'s value copied
//!   onto the stack (use `&*boxed` or `&boxed[..]` instead);
//! - `format!("{:?}", &buf[..])`: the slice's own `Debug` prints the bytes
//!   (`{:?}` of the `SecretBuf` itself does not);
//! - reading through a `BufReader` or any reader that buffers: its buffer
//!   holds the bytes (read from a `File`, a pipe or a socket directly);
//! - functions that take `&[u8]` and keep or expand it (a cipher's key
//!   schedule on the heap or stack), which the binding cannot see.
//!
//! `from_reader`, `Deref`/`DerefMut`, `try_clone` and [`FrozenBuf`] copy
//! nothing out; the binding's tests prove it for `from_reader` by scanning
//! the process's own memory.
//!
//! # Linking
//!
//! The installed library through `pkg-config secbuf`, or the archive in
//! `SECBUF_LIB_DIR` (the tree's `build/lib`), linked statically.
mod boxed;
mod buf;
mod error;
pub mod ffi;
mod options;

pub use boxed::{Pod, SecretBox};
pub use buf::{FrozenBuf, SecretBuf};
pub use error::{Error, Op};
pub use options::Options;

use std::ffi::CStr;
use std::io;

/// The process's lock method: "maplockonfault" (the patched kernel),
/// "mlock2", "mlock" or "none" (`SECBUF_LOCK=none`).
pub fn lock_method() -> Result<&'static str, Error> {
    // SAFETY: no arguments; failure is -1 and errno.
    let m = unsafe { ffi::secbuf_lock_method() };
    if m < 0 {
        return Err(Error::new(Op::LockMethod, 0, io::Error::last_os_error()));
    }
    method_name(m)
}

pub(crate) fn method_name(m: libc::c_int) -> Result<&'static str, Error> {
    // SAFETY: the name is NULL or a static C string of libsecbuf.
    let p = unsafe { ffi::secbuf_lock_method_name(m) };
    if p.is_null() {
        return Err(Error::new(
            Op::LockMethod,
            0,
            io::Error::from_raw_os_error(libc::EINVAL),
        ));
    }
    // SAFETY: non-NULL: a static, NUL-terminated ASCII name.
    Ok(unsafe { CStr::from_ptr(p) }.to_str().unwrap_or("?"))
}

/// Zero every live secbuf buffer of the process (`secbuf_purge`): for a
/// crash handler or just before exec.  They stay usable, and are still
/// freed by their drops.
pub fn purge() {
    // SAFETY: takes nothing, may be called at any time.
    unsafe { ffi::secbuf_purge() }
}
