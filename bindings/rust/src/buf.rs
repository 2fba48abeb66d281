//! SecretBuf, a byte buffer in secbuf memory, and FrozenBuf, the same
//! buffer made read-only; the raw allocation and the fill that SecretBox
//! builds on.
use std::ffi::CStr;
use std::fmt;
use std::io::{self, Read};
use std::ptr::NonNull;
use std::slice;

use libc::{c_uint, c_void};

use crate::error::{Error, Op};
use crate::ffi;
use crate::options::Options;

/// `len` bytes of secbuf memory: locked when touched, between guard pages
/// (unless packed), out of core dumps, zeros in a forked child, wiped and
/// unmapped on drop.  Reading and writing are explicit:
/// [`SecretBuf::expose_secret`] and [`SecretBuf::expose_secret_mut`] lend
/// the bytes as a slice, and nothing else does (no `Deref`, no `AsRef`),
/// so that every place that touches the secret says so.
///
/// Not `Clone` ([`SecretBuf::try_clone`] is the explicit copy, secbuf to
/// secbuf), and its `Debug` shows the length only.  See the crate's
/// documentation for what still copies the bytes out.
///
/// ```compile_fail,E0599
/// let a = secbuf::SecretBuf::new(32).unwrap();
/// let b = a.clone(); // not Clone
/// ```
///
/// ```compile_fail,E0599
/// let a = secbuf::SecretBuf::new(32).unwrap();
/// let v = a.to_vec(); // no Deref: a copy out is a.expose_secret().to_vec()
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
        SecretBuf::with_options(&Options::new(), len)
    }

    /// `len` zero bytes made with `opts`:
    /// `SecretBuf::with_options(&Options::new().packed(true), 32)`.
    #[inline]
    pub fn with_options(opts: &Options, len: usize) -> Result<SecretBuf, Error> {
        let ptr = raw_alloc(len, opts.flags())?;
        // SAFETY: ptr is a live secbuf allocation of len bytes, owned from here.
        Ok(unsafe { SecretBuf::from_raw(ptr, len, opts.flags()) })
    }

    /// `len` bytes from `reader`, read straight into the buffer's memory
    /// (`read_exact`): no copy passes through the heap or the stack on the
    /// way, as long as the reader itself keeps none (a `BufReader` does).
    /// An early end is an error (`UnexpectedEof`), and the buffer is freed,
    /// wiped.
    pub fn from_reader<R: Read + ?Sized>(reader: &mut R, len: usize) -> Result<SecretBuf, Error> {
        SecretBuf::from_reader_with(&Options::new(), reader, len)
    }

    /// [`SecretBuf::from_reader`] into a buffer made with `opts`.
    pub fn from_reader_with<R: Read + ?Sized>(
        opts: &Options,
        reader: &mut R,
        len: usize,
    ) -> Result<SecretBuf, Error> {
        let mut buf = SecretBuf::with_options(opts, len)?;
        fill(reader, buf.expose_secret_mut())?;
        Ok(buf)
    }

    /// # Safety
    /// `ptr` must be a live allocation of secbuf of `len` bytes, made with
    /// `flags`, that nothing else frees.
    #[inline]
    pub(crate) unsafe fn from_raw(ptr: NonNull<u8>, len: usize, flags: c_uint) -> SecretBuf {
        SecretBuf { ptr, len, flags }
    }

    /// The bytes, to read: the one way to see them.  Whatever the caller
    /// does with the slice (`to_vec()`, formatting it) is a copy the
    /// buffer no longer protects.
    #[inline]
    pub fn expose_secret(&self) -> &[u8] {
        // SAFETY: ptr holds len initialised bytes for as long as self lives.
        unsafe { slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// The bytes, to write in place (`copy_from_slice`, `fill`, a cipher's
    /// output buffer).
    #[inline]
    pub fn expose_secret_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in expose_secret, and &mut self makes this the only
        // reference.
        unsafe { slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// Always false: secbuf has no empty buffers.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The flags of `secbuf_alloc_flags()` it was made with.
    #[inline]
    pub(crate) fn flags(&self) -> c_uint {
        self.flags
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
        method_name(st.lock_method)
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

/// A [`SecretBuf`] made read-only by [`SecretBuf::freeze`]: its bytes are
/// read through [`FrozenBuf::expose_secret`] only; [`FrozenBuf::melt`]
/// makes it writable again.  Dropping it frees it.
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

    /// The bytes, to read, as [`SecretBuf::expose_secret`].
    #[inline]
    pub fn expose_secret(&self) -> &[u8] {
        self.buf.expose_secret()
    }

    pub fn len(&self) -> usize {
        self.buf.len
    }

    /// Always false: secbuf has no empty buffers.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }
}

impl fmt::Debug for FrozenBuf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FrozenBuf")
            .field("len", &self.buf.len)
            .finish_non_exhaustive()
    }
}

/// `secbuf_alloc_flags()`, its errno as an [`Error`].
#[inline]
pub(crate) fn raw_alloc(len: usize, flags: c_uint) -> Result<NonNull<u8>, Error> {
    // SAFETY: any size and flags are valid input; failure is NULL and errno.
    let p = unsafe { ffi::secbuf_alloc_flags(len, flags) };
    NonNull::new(p.cast::<u8>())
        .ok_or_else(|| Error::new(Op::Alloc, len, io::Error::last_os_error()))
}

/// `dst` filled with `read_exact`, its failure as an [`Error`] of `Op::Read`.
pub(crate) fn fill<R: Read + ?Sized>(reader: &mut R, dst: &mut [u8]) -> Result<(), Error> {
    let len = dst.len();
    reader
        .read_exact(dst)
        .map_err(|e| Error::new(Op::Read, len, e))
}

/// The name of a lock method of libsecbuf.
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
