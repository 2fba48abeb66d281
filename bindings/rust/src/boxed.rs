//! `SecretBox<T>`: one fixed-size value (a key, an array of words) in
//! secbuf memory, a SecretBuf of its size seen as a T.
use std::fmt;
use std::io::{self, Read};
use std::marker::PhantomData;
use std::mem;

use crate::buf::{fill, SecretBuf};
use crate::error::{Error, Op};
use crate::options::Options;

mod sealed {
    /// Pod's supertrait, out of reach of other crates: only this crate
    /// implements Pod, so only the types below can be boxed.
    pub trait Sealed {}
}

/// The types a [`SecretBox`] may hold: those for which every bit pattern,
/// all zeros included, is a valid value, and which hold no pointers.  The
/// integers (`u8` to `u128`, `i8` to `i128`, `usize`, `isize`) and arrays
/// of them, nested or not (`[u8; 32]`, `[u64; 4]`, `[[u8; 16]; 2]`).
///
/// libsecbuf changes a secret's bytes behind the program's back: a purge
/// ([`crate::purge`]) zeroes every live secret, and a forked child reads
/// the parent's buffers as zeros (wiped on fork); `from_reader` fills a
/// `T` with whatever bytes come.  A reference would then be null, a
/// `NonZeroU64` zero, a `bool`, a `char` or an enum any bit pattern at
/// all: an invalid value, read in safe code.  The trait is sealed (its
/// supertrait is private), so no other crate can implement it, not even
/// with `unsafe impl`; a `#[repr(C)]` struct of keys goes in a
/// `SecretBuf`, or one `SecretBox` per field.
///
/// ```compile_fail,E0277
/// let b = secbuf::SecretBox::new(true); // bool: 0 and 1 only
/// ```
///
/// # Safety
/// The crate implements it only for types without padding, references,
/// pointers or invalid bit patterns.
pub unsafe trait Pod: sealed::Sealed + Copy + 'static {}

macro_rules! pod {
    ($($t:ty)*) => { $(
        impl sealed::Sealed for $t {}
        // SAFETY: a plain integer: every bit pattern is valid, no padding.
        unsafe impl Pod for $t {}
    )* };
}
pod!(u8 u16 u32 u64 u128 usize i8 i16 i32 i64 i128 isize);
impl<T: Pod, const N: usize> sealed::Sealed for [T; N] {}
// SAFETY: an array of Pod has no padding and no invalid bit patterns.
unsafe impl<T: Pod, const N: usize> Pod for [T; N] {}

/// A `T` in secbuf memory, like a `Box<T>` that is locked, guarded, out of
/// core dumps and wiped on drop.  `T` is a [`Pod`] type, whose value stays
/// valid whatever libsecbuf does to its bytes.
///
/// Reading and writing are explicit, as in the `secrecy` crate:
/// [`SecretBox::expose_secret`] lends a `&T`, [`SecretBox::expose_secret_mut`]
/// a `&mut T`.  There is no `Deref`, and the box is not `Clone`: `*boxed`
/// and `boxed.clone()` do not compile, so that the value is not copied
/// onto the stack unseen ([`SecretBox::try_clone`] copies secbuf to
/// secbuf).  Its `Debug` names the type only.
///
/// For a key that is to stay out of ordinary memory, start from
/// [`SecretBox::zeroed`] or [`SecretBox::from_reader`]: [`SecretBox::new`]
/// moves a value that was already somewhere else (on the caller's stack at
/// least).
///
/// ```no_run
/// let mut key = secbuf::SecretBox::<[u8; 32]>::zeroed()?;
/// key.expose_secret_mut()[0] = 1;
/// assert_eq!(key.expose_secret()[0], 1);
/// let nonce = secbuf::SecretBox::new(7u64)?;
/// # Ok::<(), secbuf::Error>(())
/// ```
///
/// ```compile_fail,E0614
/// let key = secbuf::SecretBox::<[u8; 32]>::zeroed().unwrap();
/// let copy: [u8; 32] = *key; // onto the stack
/// ```
///
/// ```compile_fail,E0599
/// let key = secbuf::SecretBox::<[u8; 32]>::zeroed().unwrap();
/// let copy = key.clone();
/// ```
pub struct SecretBox<T: Pod> {
    // size_of::<T>() bytes, aligned for T (checked when made).
    buf: SecretBuf,
    _holds: PhantomData<T>,
}

impl<T: Pod> SecretBox<T> {
    // secbuf's pointers are 16-byte aligned; a T needing more is refused
    // when the program is compiled.
    const FITS: () = assert!(mem::align_of::<T>() <= 16 && mem::size_of::<T>() > 0);

    /// A zeroed `T`, made in place.
    pub fn zeroed() -> Result<SecretBox<T>, Error> {
        SecretBox::zeroed_with(&Options::new())
    }

    /// A zeroed `T` made with `opts`:
    /// `SecretBox::<[u8; 32]>::zeroed_with(&Options::new().packed(true))`.
    pub fn zeroed_with(opts: &Options) -> Result<SecretBox<T>, Error> {
        let mut buf = SecretBuf::with_options(opts, mem::size_of::<T>())?;
        // secbuf's memory comes zeroed; made sure of, as it is small.
        buf.expose_secret_mut().fill(0);
        SecretBox::from_buf(buf)
    }

    /// `buf`, of `size_of::<T>()` bytes, seen as a T once its alignment is
    /// checked.
    pub(crate) fn from_buf(buf: SecretBuf) -> Result<SecretBox<T>, Error> {
        #[allow(clippy::let_unit_value)]
        let () = Self::FITS;
        debug_assert_eq!(buf.len(), mem::size_of::<T>());
        if buf.expose_secret().as_ptr() as usize % mem::align_of::<T>() != 0 {
            let einval = io::Error::from_raw_os_error(libc::EINVAL);
            return Err(Error::new(Op::Alloc, buf.len(), einval));
        }
        Ok(SecretBox {
            buf,
            _holds: PhantomData,
        })
    }

    /// A `T` read with `read_exact` straight into its secbuf memory.
    pub fn from_reader<R: Read + ?Sized>(reader: &mut R) -> Result<SecretBox<T>, Error> {
        SecretBox::from_reader_with(&Options::new(), reader)
    }

    /// [`SecretBox::from_reader`] into memory made with `opts`.
    pub fn from_reader_with<R: Read + ?Sized>(
        opts: &Options,
        reader: &mut R,
    ) -> Result<SecretBox<T>, Error> {
        let mut b = SecretBox::<T>::zeroed_with(opts)?;
        // Any bytes read leave a valid T (Pod).
        fill(reader, b.buf.expose_secret_mut())?;
        Ok(b)
    }

    /// `value` moved into secbuf memory.  The value the caller passes
    /// was in ordinary memory first; see [`SecretBox::zeroed`].
    pub fn new(value: T) -> Result<SecretBox<T>, Error> {
        SecretBox::with_options(&Options::new(), value)
    }

    /// [`SecretBox::new`] into memory made with `opts`.
    pub fn with_options(opts: &Options, value: T) -> Result<SecretBox<T>, Error> {
        let mut b = SecretBox::<T>::zeroed_with(opts)?;
        *b.expose_secret_mut() = value;
        Ok(b)
    }

    /// The value, to read: the one way to see it.  `*boxed.expose_secret()`
    /// as a value copies it out (onto the stack); use it through the
    /// reference.
    #[inline]
    pub fn expose_secret(&self) -> &T {
        // SAFETY: the buffer holds size_of::<T>() initialised bytes, aligned
        // for T (checked in from_buf), and any bytes are a valid T (Pod);
        // the borrow of self keeps it alive.
        unsafe { &*self.buf.expose_secret().as_ptr().cast::<T>() }
    }

    /// The value, to write in place.
    #[inline]
    pub fn expose_secret_mut(&mut self) -> &mut T {
        // SAFETY: as in expose_secret; &mut self makes it the only reference,
        // and whatever is written is a T.
        unsafe { &mut *self.buf.expose_secret_mut().as_mut_ptr().cast::<T>() }
    }

    /// The buffer that holds the value (consumed: its drop frees it).
    pub(crate) fn into_buf(self) -> SecretBuf {
        self.buf
    }

    /// A second box with the same options and value, copied from secbuf
    /// memory to secbuf memory, never through the stack.
    pub fn try_clone(&self) -> Result<SecretBox<T>, Error> {
        SecretBox::from_buf(self.buf.try_clone()?)
    }
}

impl<T: Pod> fmt::Debug for SecretBox<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SecretBox")
            .field("type", &std::any::type_name::<T>())
            .finish_non_exhaustive()
    }
}
