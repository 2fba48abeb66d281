//! Secrets in secbuf memory, from Rust.
//!
//! [`SecretBuf`] is a byte buffer and [`SecretBox<T>`] one fixed-size value
//! (a `[u8; 32]` key), both in memory from libsecbuf: locked in RAM when
//! first touched, never swapped, between guard pages, out of core dumps,
//! zeros in a forked child, wiped and unmapped on drop.  [`Options`] asks
//! for packed secrets (many small keys sharing locked pages) or the secret
//! tier (memfd_secret); each type is made from them with `with_options`.
//! Neither type is `Clone` or prints its bytes.
//!
//! Reading a secret is explicit, as in the `secrecy` crate: `expose_secret()`
//! lends the bytes (or the value), `expose_secret_mut()` lends them to
//! write in place.  Neither type derefs to its contents, so `.clone()`,
//! `*boxed`, `buf.to_vec()` or `&buf[..]` do not compile, and a search for
//! `expose_secret` finds every place that touches a secret.
//!
//! ```no_run
//! use std::fs::File;
//! let mut f = File::open("key.bin")?;
//! let key = secbuf::SecretBuf::from_reader(&mut f, 32)?;  // read(2) into locked memory
//! assert_eq!(key.len(), 32);
//! let first = key.expose_secret()[0];
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Sealed secrets
//!
//! [`SealedBytes`] and [`Sealed<T>`] keep a secret encrypted while it
//! idles (libsecbuf-seal: XChaCha20-Poly1305 under a key derived at each
//! open from a 16 KiB prekey in memfd_secret memory), in ordinary memory
//! and at no cost in locked memory, and open it into secbuf memory only
//! while in use: `with(|k| ...)` lends it to a closure and wipes it after,
//! `open()` hands it over as a `SecretBuf` or `SecretBox`.  For many keys
//! under a small `RLIMIT_MEMLOCK`, or against a partial read of memory.
//!
//! ```no_run
//! let key = secbuf::Sealed::seal(secbuf::SecretBox::<[u8; 32]>::zeroed()?)?;
//! let first = key.with(|k: &[u8; 32]| k[0])?;
//! # Ok::<(), secbuf::Error>(())
//! ```
//!
//! # What still copies a secret
//!
//! The buffer protects only the bytes that stay in it.  Each of these puts
//! a copy in ordinary memory (heap or stack: swappable, in core dumps, not
//! wiped):
//!
//! - `buf.expose_secret().to_vec()`, `Vec::from(buf.expose_secret())`,
//!   `.iter().collect()`, `String::from_utf8_lossy(..)`, `hex` or base64
//!   encoding into a `String`;
//! - `*boxed.expose_secret()` or `let k: [u8; 32] = *boxed.expose_secret()`:
//!   a `SecretBox`'s value copied onto the stack (use the reference);
//! - `format!("{:?}", buf.expose_secret())`: the slice's own `Debug` prints
//!   the bytes (`{:?}` of the `SecretBuf` itself does not);
//! - reading through a `BufReader` or any reader that buffers: its buffer
//!   holds the bytes (read from a `File`, a pipe or a socket directly);
//! - functions that take `&[u8]` and keep or expand it (a cipher's key
//!   schedule on the heap or stack), which the binding cannot see.
//!
//! `from_reader`, `expose_secret`, `expose_secret_mut`, `try_clone` and
//! [`FrozenBuf`] copy nothing out; the binding's tests prove it for
//! `from_reader` by scanning the process's own memory.
//!
//! # Linking
//!
//! The installed libraries through `pkg-config secbuf-seal` (libsecbuf-seal,
//! which needs libsecbuf and libsodium), or the archives in
//! `SECBUF_LIB_DIR` (the tree's `build/lib`), linked statically, and
//! libsodium.
mod boxed;
mod buf;
mod error;
pub mod ffi;
mod options;
mod sealed;

pub use boxed::{Pod, SecretBox};
pub use buf::{FrozenBuf, SecretBuf};
pub use error::{Error, Op};
pub use options::Options;
pub use sealed::{seal_rekey, seal_stat, SealStat, Sealed, SealedBytes};

use std::io;

/// The process's lock method: "maplockonfault" (the patched kernel),
/// "mlock2", "mlock" or "none" (`SECBUF_LOCK=none`).
pub fn lock_method() -> Result<&'static str, Error> {
    // SAFETY: no arguments; failure is -1 and errno.
    let m = unsafe { ffi::secbuf_lock_method() };
    if m < 0 {
        return Err(Error::new(Op::LockMethod, 0, io::Error::last_os_error()));
    }
    buf::method_name(m)
}

/// Zero every live secbuf buffer of the process (`secbuf_purge`): for a
/// crash handler or just before exec.  They stay usable (a frozen one's
/// pages are left writable), and are still freed by their drops.  Every
/// value the crate's types hold is valid as zeros (bytes, or a [`Pod`] in
/// a `SecretBox`), so what is read afterwards is a valid zero, never a
/// null reference or an impossible value.
///
/// # Safety
///
/// Unsafe because it writes, without a lock and without waiting, to memory
/// that safe code may be using at the same time (libsecbuf's purge is made
/// for signal handlers: it never waits, and wipes what it can reach):
///
/// - no other thread may use secbuf while it runs: make, free, freeze or
///   melt a buffer (a buffer freed meanwhile may fault, or its pages,
///   mapped again for something else, be zeroed), or read or write one
///   (a data race);
/// - no reference lent by `expose_secret` or `expose_secret_mut` may be
///   used after the call: it was lent as memory that nothing else changes.
///
/// ```no_run
/// let mut key = secbuf::SecretBuf::new(32)?;
/// key.expose_secret_mut().fill(7);
/// // SAFETY: one thread, and no lent bytes are used after the purge.
/// unsafe { secbuf::purge() };
/// assert!(key.expose_secret().iter().all(|&b| b == 0));
/// # Ok::<(), secbuf::Error>(())
/// ```
pub unsafe fn purge() {
    // SAFETY: takes nothing; the caller keeps the contract above.  (The
    // block is redundant before Rust 2024's unsafe_op_in_unsafe_fn.)
    #[allow(unused_unsafe)]
    unsafe {
        ffi::secbuf_purge()
    }
}
