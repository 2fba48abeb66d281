//! How a buffer is made: the flags of `secbuf_alloc_flags()` as a builder,
//! in the shape of `std::fs::OpenOptions`.
use std::io::{self, Read};
use std::ptr::NonNull;

use libc::c_uint;

use crate::boxed::{Pod, SecretBox};
use crate::buf::SecretBuf;
use crate::error::{Error, Op};
use crate::ffi;

/// Options for a [`SecretBuf`] or [`SecretBox`]; all off by default.
///
/// ```no_run
/// let key = secbuf::SecretBuf::options().packed(true).alloc(32)?;
/// # Ok::<(), secbuf::Error>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    flags: c_uint,
}

impl Options {
    #[inline]
    pub fn new() -> Options {
        Options::default()
    }

    #[inline]
    fn set(&mut self, flag: c_uint, on: bool) -> &mut Options {
        if on {
            self.flags |= flag;
        } else {
            self.flags &= !flag;
        }
        self
    }

    /// Share locked slab pages with other packed secrets (sizes up to
    /// [`ffi::SECBUF_PACKED_MAX`]; larger ones get guard pages anyway):
    /// no guard page of its own, so an overflow is caught at free rather
    /// than at once, and it cannot be frozen.  For many small keys.
    #[inline]
    pub fn packed(&mut self, on: bool) -> &mut Options {
        self.set(ffi::SECBUF_PACKED, on)
    }

    /// Pages from memfd_secret(2), out of the kernel's direct map: not
    /// readable through /proc/PID/mem, not even by root.  An error (ENOSYS)
    /// where the kernel has none, unless `best_effort` is on too.
    pub fn secret(&mut self, on: bool) -> &mut Options {
        self.set(ffi::SECBUF_SECRET, on)
    }

    /// Succeed with unlocked memory when locking is refused.
    pub fn best_effort(&mut self, on: bool) -> &mut Options {
        self.set(ffi::SECBUF_BEST_EFFORT, on)
    }

    /// Fault in and lock every page now rather than on first touch.
    pub fn populate(&mut self, on: bool) -> &mut Options {
        self.set(ffi::SECBUF_POPULATE, on)
    }

    pub(crate) fn flags(&self) -> c_uint {
        self.flags
    }

    /// A buffer of `len` zero bytes.
    #[inline]
    pub fn alloc(&self, len: usize) -> Result<SecretBuf, Error> {
        let ptr = raw_alloc(len, self.flags)?;
        // SAFETY: ptr is a live secbuf allocation of len bytes, owned from here.
        Ok(unsafe { SecretBuf::from_raw(ptr, len, self.flags) })
    }

    /// A buffer of `len` bytes read with `read_exact` straight into its
    /// memory; an early end is an error (`UnexpectedEof`) and the buffer
    /// is freed, wiped.
    pub fn read_from<R: Read + ?Sized>(
        &self,
        reader: &mut R,
        len: usize,
    ) -> Result<SecretBuf, Error> {
        let mut buf = self.alloc(len)?;
        fill(reader, &mut buf, len)?;
        Ok(buf)
    }

    /// A [`SecretBox`] holding a zeroed `T`.
    pub fn alloc_box<T: Pod>(&self) -> Result<SecretBox<T>, Error> {
        SecretBox::with_options(self)
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

pub(crate) fn fill<R: Read + ?Sized>(
    reader: &mut R,
    dst: &mut [u8],
    len: usize,
) -> Result<(), Error> {
    reader
        .read_exact(dst)
        .map_err(|e| Error::new(Op::Read, len, e))
}
