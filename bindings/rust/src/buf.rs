//! SecretBuf, a byte buffer in secbuf memory, and FrozenBuf, the same
//! buffer made read-only.
use std::fmt;
use std::io::{self, Read};
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;
use std::slice;

use libc::{c_uint, c_void};

use crate::error::{Error, Op};
use crate::ffi;
use crate::options::{raw_alloc, Options};

/// `len` bytes of secbuf memory: locked when touched, between guard pages
/// (unless packed), out of core dumps, zeros in a forked child, wiped and
/// unmapped on drop.  Reads and writes go through `Deref<Target = [u8]>`.
///
/// Not `Clone` ([`SecretBuf::try_clone`] is the explicit copy), and its
/// `Debug` shows the length only.  See the crate's documentation for what
/// still copies the bytes out.
///
/// ```compile_fail,E0599
/// let a = secbuf::SecretBuf::new(32).unwrap();
/// let b = a.clone(); // not Clone
/// ```
///
/// A buffer cannot be used after its drop, nor dropped twice: the
/// compiler refuses both.
///
/// ```compile_fail,E0382
/// let a = secbuf::SecretBuf::new(32).unwrap();
/// drop(a);
/// let n = a.len(); // use after free
/// ```
///
/// ```compile_fail,E0382
/// let a = secbuf::SecretBuf::new(32).unwrap();
/// drop(a);
/// drop(a); // double free
/// ```
pub struct SecretBuf {
    ptr: NonNull<u8>,
    len: usize,
    flags: c_uint,
}

// SAFETY: the buffer is owned memory like a Box<[u8]>, and libsecbuf's calls
// are thread-safe: it may be moved to and freed in another thread.
unsafe impl Send for SecretBuf {}
// SAFETY: shared references give out only &[u8]; the C calls made through
// &self (secbuf_stat) are thread-safe.
unsafe impl Sync for SecretBuf {}

impl SecretBuf {
    /// `len` zero bytes, locked on first touch.  Errors: `EINVAL` for 0,
    /// `ENOMEM` for a size too large to map (`usize::MAX`), `EAGAIN` or
    /// `EPERM` when the pages may not be locked.
    #[inline]
    pub fn new(len: usize) -> Result<SecretBuf, Error> {
        Options::new().alloc(len)
    }

    /// The options of [`Options`], to chain: `SecretBuf::options().packed(true).alloc(32)`.
    #[inline]
    pub fn options() -> Options {
        Options::new()
    }

    /// `len` bytes from `reader`, read straight into the buffer's memory
    /// (`read_exact`): no copy passes through the heap or the stack on the
    /// way, as long as the reader itself keeps none (a `BufReader` does).
    pub fn from_reader<R: Read + ?Sized>(reader: &mut R, len: usize) -> Result<SecretBuf, Error> {
        Options::new().read_from(reader, len)
    }

    /// # Safety
    /// `ptr` must be a live allocation of secbuf of `len` bytes, made with
    /// `flags`, that nothing else frees.
    #[inline]
    pub(crate) unsafe fn from_raw(ptr: NonNull<u8>, len: usize, flags: c_uint) -> SecretBuf {
        SecretBuf { ptr, len, flags }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// Always false: secbuf has no empty buffers.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether it was asked for packed (and is small enough to be).
    pub fn is_packed(&self) -> bool {
        self.flags & ffi::SECBUF_PACKED != 0 && self.len <= ffi::SECBUF_PACKED_MAX
    }

    /// A second buffer with the same options and bytes, copied from
    /// secbuf memory to secbuf memory: the one way to clone a secret.
    pub fn try_clone(&self) -> Result<SecretBuf, Error> {
        let ptr = raw_alloc(self.len, self.flags)?;
        // SAFETY: both are live, distinct allocations of self.len bytes.
        unsafe {
            ptr.as_ptr()
                .copy_from_nonoverlapping(self.ptr.as_ptr(), self.len);
            Ok(SecretBuf::from_raw(ptr, self.len, self.flags))
        }
    }

    /// The method that locks its pages ("maplockonfault", "mlock2",
    /// "mlock", "none", or "secretmem" for the secret tier).
    pub fn lock_method(&self) -> Result<&'static str, Error> {
        let mut st = ffi::secbuf_stat::default();
        // SAFETY: self.ptr is live; st is a valid out-parameter.
        if unsafe { ffi::secbuf_stat(self.ptr.as_ptr() as *const c_void, &mut st) } < 0 {
            return Err(Error::new(Op::Stat, self.len, io::Error::last_os_error()));
        }
        crate::method_name(st.lock_method)
    }

    /// Read-only from now on (`secbuf_protect`): a stray write faults.
    /// A packed buffer shares its pages and cannot be frozen (`EINVAL`);
    /// the error hands the buffer back.
    pub fn freeze(self) -> Result<FrozenBuf, (Error, SecretBuf)> {
        match self.protect(ffi::SECBUF_READONLY) {
            Ok(()) => Ok(FrozenBuf { buf: self }),
            Err(e) => Err((e, self)),
        }
    }

    fn protect(&self, access: libc::c_int) -> Result<(), Error> {
        // SAFETY: self.ptr is live; protecting it changes no Rust-visible
        // invariant as long as no &mut [u8] is handed out while read-only,
        // which FrozenBuf ensures.
        if unsafe { ffi::secbuf_protect(self.ptr.as_ptr() as *mut c_void, access) } < 0 {
            return Err(Error::new(
                Op::Protect,
                self.len,
                io::Error::last_os_error(),
            ));
        }
        Ok(())
    }
}

impl Deref for SecretBuf {
    type Target = [u8];
    #[inline]
    fn deref(&self) -> &[u8] {
        // SAFETY: ptr holds len initialised bytes for as long as self lives.
        unsafe { slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl DerefMut for SecretBuf {
    #[inline]
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in deref, and &mut self makes this the only reference.
        unsafe { slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl AsRef<[u8]> for SecretBuf {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

impl AsMut<[u8]> for SecretBuf {
    fn as_mut(&mut self) -> &mut [u8] {
        self
    }
}

impl Drop for SecretBuf {
    #[inline]
    fn drop(&mut self) {
        // SAFETY: self owns the allocation; it is freed exactly once.
        // secbuf_free checks the canaries, wipes and unmaps (a corrupted
        // buffer aborts the process there, by design).
        unsafe { ffi::secbuf_free(self.ptr.as_ptr() as *mut c_void) }
    }
}

impl fmt::Debug for SecretBuf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SecretBuf")
            .field("len", &self.len)
            .field("packed", &self.is_packed())
            .finish_non_exhaustive()
    }
}

/// A [`SecretBuf`] made read-only by [`SecretBuf::freeze`]: `Deref` only;
/// [`FrozenBuf::melt`] makes it writable again.  Dropping it frees it.
pub struct FrozenBuf {
    buf: SecretBuf,
}

impl FrozenBuf {
    /// Writable again; the error hands the frozen buffer back.
    pub fn melt(self) -> Result<SecretBuf, (Error, FrozenBuf)> {
        match self.buf.protect(ffi::SECBUF_READWRITE) {
            Ok(()) => Ok(self.buf),
            Err(e) => Err((e, self)),
        }
    }
}

impl Deref for FrozenBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.buf
    }
}

impl AsRef<[u8]> for FrozenBuf {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

impl fmt::Debug for FrozenBuf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FrozenBuf")
            .field("len", &self.buf.len)
            .finish_non_exhaustive()
    }
}
