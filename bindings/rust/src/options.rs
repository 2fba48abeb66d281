//! How a buffer is to be made: the flags of `secbuf_alloc_flags()` as
//! plain data with a builder.  The types build themselves from it
//! (`SecretBuf::with_options`, `SecretBox::zeroed_with`), so that this
//! module knows none of them.
use libc::c_uint;

use crate::ffi;

/// Options for a [`SecretBuf`](crate::SecretBuf) or a
/// [`SecretBox`](crate::SecretBox); all off by default.  A `Copy` value:
/// each setter returns the changed options.
///
/// ```no_run
/// use secbuf::{Options, SecretBox, SecretBuf};
/// let opts = Options::new().packed(true);
/// let key = SecretBuf::with_options(&opts, 32)?;
/// let word = SecretBox::<[u64; 4]>::zeroed_with(&opts)?;
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
    #[must_use]
    fn set(mut self, flag: c_uint, on: bool) -> Options {
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
    #[must_use]
    pub fn packed(self, on: bool) -> Options {
        self.set(ffi::SECBUF_PACKED, on)
    }

    /// Pages from memfd_secret(2), out of the kernel's direct map: not
    /// readable through /proc/PID/mem, not even by root.  An error (ENOSYS)
    /// where the kernel has none, unless `best_effort` is on too.
    #[must_use]
    pub fn secret(self, on: bool) -> Options {
        self.set(ffi::SECBUF_SECRET, on)
    }

    /// Succeed with unlocked memory when locking is refused.
    #[must_use]
    pub fn best_effort(self, on: bool) -> Options {
        self.set(ffi::SECBUF_BEST_EFFORT, on)
    }

    /// Fault in and lock every page now rather than on first touch.
    #[must_use]
    pub fn populate(self, on: bool) -> Options {
        self.set(ffi::SECBUF_POPULATE, on)
    }

    /// The flags of `secbuf_alloc_flags()`.
    #[inline]
    pub(crate) fn flags(&self) -> c_uint {
        self.flags
    }
}
