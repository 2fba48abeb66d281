//! SecretBox<T>: one fixed-size Copy value (a key, a struct of keys) in
//! secbuf memory, used as a T in place.
use std::fmt;
use std::io::{self, Read};
use std::marker::PhantomData;
use std::mem;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;
use std::slice;

use libc::c_void;

use crate::error::{Error, Op};
use crate::ffi;
use crate::options::{fill, raw_alloc, Options};

/// Types for which every bit pattern is a valid value and which hold no
/// pointers: integers, and arrays of them.  `SecretBox::zeroed` and
/// `SecretBox::from_reader` make a `T` from bytes, so they need one.
///
/// # Safety
/// Implement it only for `Copy` types without padding, references,
/// pointers, or values that some bit patterns make invalid (`bool`,
/// `char`, enums): a `#[repr(C)]` struct of `Pod` fields with no padding.
pub unsafe trait Pod: Copy + 'static {}

macro_rules! pod {
    ($($t:ty)*) => { $(
        // SAFETY: a plain integer: every bit pattern is valid, no padding.
        unsafe impl Pod for $t {}
    )* };
}
pod!(u8 u16 u32 u64 u128 usize i8 i16 i32 i64 i128 isize);
// SAFETY: an array of Pod has no padding and no invalid bit patterns.
unsafe impl<T: Pod, const N: usize> Pod for [T; N] {}

/// A `T` in secbuf memory, like a `Box<T>` that is locked, guarded, out of
/// core dumps and wiped on drop.  `T` is read and written in place through
/// `Deref`; `*boxed` as a value copies it out (onto the stack).
///
/// For a key that is to stay out of ordinary memory, start from
/// [`SecretBox::zeroed`] or [`SecretBox::from_reader`] (types that are
/// [`Pod`]): [`SecretBox::new`] moves a value that was already somewhere
/// else (on the caller's stack at least).
///
/// ```no_run
/// let mut key = secbuf::SecretBox::<[u8; 32]>::zeroed()?;
/// key[0] = 1;
/// let nonce = secbuf::SecretBox::new(7u64)?;
/// # Ok::<(), secbuf::Error>(())
/// ```
pub struct SecretBox<T: Copy> {
    ptr: NonNull<T>,
    _owns: PhantomData<T>,
}

// SAFETY: owned memory like Box<T>; moving it moves a T: Send.
unsafe impl<T: Copy + Send> Send for SecretBox<T> {}
// SAFETY: &SecretBox gives out &T only.
unsafe impl<T: Copy + Sync> Sync for SecretBox<T> {}

impl<T: Copy> SecretBox<T> {
    // secbuf's pointers are 16-byte aligned; a T needing more is refused
    // when the program is compiled.
    const FITS: () = assert!(mem::align_of::<T>() <= 16 && mem::size_of::<T>() > 0);

    /// `value` moved into secbuf memory.  The value the caller passes
    /// was in ordinary memory first; see [`SecretBox::zeroed`].
    pub fn new(value: T) -> Result<SecretBox<T>, Error> {
        let ptr = SecretBox::<T>::alloc_raw(&Options::new())?;
        // SAFETY: ptr is ours, aligned and large enough for a T.
        unsafe { ptr.as_ptr().write(value) };
        Ok(SecretBox {
            ptr,
            _owns: PhantomData,
        })
    }

    /// Room for a T from secbuf, not yet a T.
    fn alloc_raw(opts: &Options) -> Result<NonNull<T>, Error> {
        #[allow(clippy::let_unit_value)]
        let () = Self::FITS;
        let size = mem::size_of::<T>();
        let ptr = raw_alloc(size, opts.flags())?.cast::<T>();
        if ptr.as_ptr() as usize % mem::align_of::<T>() != 0 {
            // SAFETY: just allocated, not handed out.
            unsafe { ffi::secbuf_free(ptr.as_ptr() as *mut c_void) };
            let einval = io::Error::from_raw_os_error(libc::EINVAL);
            return Err(Error::new(Op::Alloc, size, einval));
        }
        Ok(ptr)
    }
}

impl<T: Pod> SecretBox<T> {
    /// A zeroed `T`, made in place.
    pub fn zeroed() -> Result<SecretBox<T>, Error> {
        SecretBox::with_options(&Options::new())
    }

    /// A `T` read with `read_exact` straight into its secbuf memory.
    pub fn from_reader<R: Read + ?Sized>(reader: &mut R) -> Result<SecretBox<T>, Error> {
        let mut b = SecretBox::<T>::zeroed()?;
        fill(reader, b.as_bytes_mut(), mem::size_of::<T>())?;
        Ok(b)
    }

    pub(crate) fn with_options(opts: &Options) -> Result<SecretBox<T>, Error> {
        let ptr = SecretBox::<T>::alloc_raw(opts)?;
        // SAFETY: the bytes are ours; all zeros is a valid T (Pod).
        unsafe {
            ptr.as_ptr()
                .cast::<u8>()
                .write_bytes(0, mem::size_of::<T>())
        };
        Ok(SecretBox {
            ptr,
            _owns: PhantomData,
        })
    }

    /// Its bytes, to fill in place.
    pub fn as_bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: T is Pod, so any bytes written leave a valid T.
        unsafe { slice::from_raw_parts_mut(self.ptr.as_ptr().cast::<u8>(), mem::size_of::<T>()) }
    }
}

impl<T: Copy> Deref for SecretBox<T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: ptr is a live, aligned, initialised T for as long as self.
        unsafe { self.ptr.as_ref() }
    }
}

impl<T: Copy> DerefMut for SecretBox<T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in deref; &mut self makes it the only reference.
        unsafe { self.ptr.as_mut() }
    }
}

impl<T: Copy> Drop for SecretBox<T> {
    fn drop(&mut self) {
        // SAFETY: owned, freed exactly once; T: Copy has no destructor.
        unsafe { ffi::secbuf_free(self.ptr.as_ptr() as *mut c_void) }
    }
}

impl<T: Copy> fmt::Debug for SecretBox<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SecretBox")
            .field("type", &std::any::type_name::<T>())
            .finish_non_exhaustive()
    }
}
