//! Sealed secrets (libsecbuf-seal): [`SealedBytes`] and [`Sealed<T>`],
//! encrypted while idle and opened into secbuf memory only while in use,
//! through a closure (`with`, over `secbuf_sealed_use`) or as a
//! [`SecretBuf`] / [`SecretBox`] (`open`).
//!
//! Callbacks from C: each closure is called from an `extern "C"`
//! trampoline that catches its panic (unwinding through libsecbuf-seal's
//! frames would be undefined behaviour, and would skip the wipe of the
//! opened plaintext), returns to the library, which wipes and frees what
//! it opened, and the panic is resumed once the C call has returned.
use std::any::Any;
use std::fmt;
use std::io::{self, Read};
use std::marker::PhantomData;
use std::mem;
use std::ops::ControlFlow;
use std::panic::{self, AssertUnwindSafe};
use std::ptr::{self, NonNull};
use std::slice;

use libc::{c_int, c_uint, c_void, size_t};

use crate::boxed::{Pod, SecretBox};
use crate::buf::SecretBuf;
use crate::error::{Error, Op};
use crate::ffi;
use crate::options::Options;

/// The flags of an `Options` that say how a sealed secret's opens
/// allocate: the rest (populate) mean nothing to libsecbuf-seal, which
/// would refuse them (`EINVAL`); opens are populated anyway.
const OPEN_FLAGS: c_uint = ffi::SECBUF_BEST_EFFORT | ffi::SECBUF_SECRET | ffi::SECBUF_PACKED;

type Panic = Box<dyn Any + Send + 'static>;

/// A secret of any length kept sealed (XChaCha20-Poly1305 under a key
/// derived, at each open, from the process's 16 KiB prekey), in ordinary
/// memory: while it idles, swap, a core dump or a read of the process
/// find only ciphertext, and it costs no locked memory.  It is opened into
/// locked secbuf memory only while in use: [`SealedBytes::with`] lends
/// the plaintext to a closure and wipes it when the closure returns,
/// [`SealedBytes::open`] hands it over as a [`SecretBuf`] (wiped on its
/// drop), [`SealedBytes::each`] in chunks of at most
/// [`ffi::SECBUF_SEAL_CHUNK`] bytes.
///
/// Made from a [`SecretBuf`], consumed: libsecbuf-seal wipes its bytes as
/// it seals them, and the buffer is freed; or read straight into locked
/// chunks ([`SealedBytes::from_reader`]), the plaintext never whole in
/// memory.  Dropping it frees the sealed bytes.  Not `Clone`; its `Debug`
/// shows the length only.
///
/// A forked child cannot open its parent's sealed secrets (`ENOKEY`):
/// the prekey is not inherited.  See secbuf_seal(3) for the threat model.
///
/// ```no_run
/// use secbuf::{SealedBytes, SecretBuf};
/// let mut f = std::fs::File::open("key.bin")?;
/// let key = SealedBytes::seal(SecretBuf::from_reader(&mut f, 32)?)?; // wiped, freed
/// let first = key.with(|k| k[0])?;  // open, lend, wipe
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// The plaintext lent to `with` cannot outlive the call:
///
/// ```compile_fail
/// let key = secbuf::SealedBytes::seal(secbuf::SecretBuf::new(32).unwrap()).unwrap();
/// let leak: &[u8] = key.with(|k| k).unwrap();
/// ```
pub struct SealedBytes {
    ptr: NonNull<ffi::secbuf_sealed>,
    len: usize,
    // OPEN_FLAGS of the seal: the options of the buffers `open` hands out.
    flags: c_uint,
}

// SAFETY: a handle owns its sealed bytes as a Box would, and every call of
// libsecbuf-seal is thread-safe (secbuf-seal.h, ATTRIBUTES): it may be
// moved to, used and freed in another thread.  A rekey in another thread
// rewrites the bytes in place under the library's write lock, which every
// open and export takes to read, so no Rust-visible state changes.
unsafe impl Send for SealedBytes {}
// SAFETY: &self gives only calls that read the handle (open, use, each,
// export, size), each thread-safe and safe to run in parallel; none lends
// a reference into the handle itself.
unsafe impl Sync for SealedBytes {}

impl SealedBytes {
    /// Seal `buf`'s bytes, which libsecbuf-seal wipes; the buffer is then
    /// freed.  Opens allocate as the buffer was allocated (its
    /// [`Options`]: packed, secret, best effort).  On failure the buffer
    /// is freed all the same (wiped, as every drop of it).
    pub fn seal(buf: SecretBuf) -> Result<SealedBytes, Error> {
        let flags = buf.flags() & OPEN_FLAGS;
        SealedBytes::seal_flags(buf, flags)
    }

    /// [`SealedBytes::seal`], with opens made with `opts`:
    /// `Options::new().secret(true)` puts the opened plaintext (and the
    /// key that opens it) in memfd_secret memory.
    pub fn seal_with(opts: &Options, buf: SecretBuf) -> Result<SealedBytes, Error> {
        SealedBytes::seal_flags(buf, opts.flags() & OPEN_FLAGS)
    }

    fn seal_flags(mut buf: SecretBuf, flags: c_uint) -> Result<SealedBytes, Error> {
        let len = buf.len();
        let plain = buf.expose_secret_mut().as_mut_ptr();
        // SAFETY: plain is len bytes of a live buffer that &mut buf lends;
        // the call reads them and, on success, zeroes them in place.
        let p = unsafe { ffi::secbuf_seal(plain.cast::<c_void>(), len, flags) };
        let sealed = SealedBytes::from_raw(p, len, flags, Op::Seal);
        drop(buf); // wiped by the seal, or now by secbuf_free
        sealed
    }

    /// `len` bytes from `reader`, read with `read_exact` straight into a
    /// locked chunk of libsecbuf-seal, sealed and wiped chunk by chunk
    /// (`secbuf_seal_fill`): a secret of any size sealed without its
    /// plaintext ever whole in memory, nor outside locked memory.  An
    /// early end is an error (`UnexpectedEof`, `Op::Read`), and nothing is
    /// sealed.
    pub fn from_reader<R: Read + ?Sized>(reader: &mut R, len: usize) -> Result<SealedBytes, Error> {
        SealedBytes::from_reader_with(&Options::new(), reader, len)
    }

    /// [`SealedBytes::from_reader`], with opens made with `opts`.
    pub fn from_reader_with<R: Read + ?Sized>(
        opts: &Options,
        reader: &mut R,
        len: usize,
    ) -> Result<SealedBytes, Error> {
        let flags = opts.flags() & OPEN_FLAGS;
        let mut call = FillCall {
            reader,
            err: None,
            panic: None,
        };
        // SAFETY: fill_trampoline::<R> takes arg as the FillCall<R> that
        // lives on this frame for the whole call.
        let p = unsafe {
            ffi::secbuf_seal_fill(
                len,
                Some(fill_trampoline::<R>),
                &mut call as *mut FillCall<'_, R> as *mut c_void,
                flags,
            )
        };
        let sealed = SealedBytes::from_raw(p, len, flags, Op::Seal);
        if let Some(payload) = call.panic {
            panic::resume_unwind(payload);
        }
        if let Some(e) = call.err {
            return Err(Error::new(Op::Read, len, e));
        }
        sealed
    }

    /// A handle from a C call that returned `p`: owned from here, or
    /// errno as an Error of `op` (read before anything else can change
    /// it).
    fn from_raw(
        p: *mut ffi::secbuf_sealed,
        len: usize,
        flags: c_uint,
        op: Op,
    ) -> Result<SealedBytes, Error> {
        match NonNull::new(p) {
            Some(ptr) => Ok(SealedBytes { ptr, len, flags }),
            None => Err(Error::new(op, len, io::Error::last_os_error())),
        }
    }

    /// Open, lend the plaintext to `f`, then wipe and free it
    /// (`secbuf_sealed_use`): `f`'s result, or the error of the open
    /// (`f` not called): `EBADMSG`, `ENOKEY` in a forked child, or that of
    /// allocating locked memory.  A panic in `f` is resumed after the
    /// plaintext is wiped.
    pub fn with<R, F: FnOnce(&[u8]) -> R>(&self, f: F) -> Result<R, Error> {
        let mut call = UseCall {
            f: Some(f),
            out: None,
            panic: None,
        };
        // SAFETY: the handle is live (owned by self); use_trampoline::<F, R>
        // takes arg as the UseCall<F, R> on this frame, alive for the call.
        let rc = unsafe {
            ffi::secbuf_sealed_use(
                self.ptr.as_ptr(),
                Some(use_trampoline::<F, R>),
                &mut call as *mut UseCall<F, R> as *mut c_void,
            )
        };
        let err = io::Error::last_os_error();
        if let Some(payload) = call.panic {
            panic::resume_unwind(payload);
        }
        match call.out {
            Some(out) if rc == 0 => Ok(out),
            _ => Err(Error::new(Op::Open, self.len, err)),
        }
    }

    /// The plaintext in a new [`SecretBuf`] (locked; wiped on its drop),
    /// made with the options the secret was sealed with.
    pub fn open(&self) -> Result<SecretBuf, Error> {
        // SAFETY: the handle is live; the result is NULL or a new secbuf
        // buffer of self.len bytes.
        let p = unsafe { ffi::secbuf_sealed_open(self.ptr.as_ptr()) };
        match NonNull::new(p.cast::<u8>()) {
            // SAFETY: a live secbuf allocation of len bytes, made with
            // these flags, that nothing else frees.
            Some(ptr) => Ok(unsafe { SecretBuf::from_raw(ptr, self.len, self.flags) }),
            None => Err(Error::new(Op::Open, self.len, io::Error::last_os_error())),
        }
    }

    /// Open chunk by chunk (`secbuf_sealed_each`): `f(chunk, offset)` for
    /// each chunk of at most [`ffi::SECBUF_SEAL_CHUNK`] bytes, in order,
    /// in one locked buffer wiped after each call; every chunk is
    /// authenticated before the first is lent.  `Continue(())` when every
    /// chunk was, `f`'s first `Break`, or the error of the open.
    pub fn each<B, F: FnMut(&[u8], usize) -> ControlFlow<B>>(
        &self,
        f: F,
    ) -> Result<ControlFlow<B>, Error> {
        let mut call = EachCall {
            f,
            brk: None,
            panic: None,
        };
        // SAFETY: as in with(); each_trampoline::<F, B> takes the EachCall.
        let rc = unsafe {
            ffi::secbuf_sealed_each(
                self.ptr.as_ptr(),
                Some(each_trampoline::<F, B>),
                &mut call as *mut EachCall<F, B> as *mut c_void,
            )
        };
        let err = io::Error::last_os_error();
        if let Some(payload) = call.panic {
            panic::resume_unwind(payload);
        }
        match (rc, call.brk) {
            (_, Some(b)) => Ok(ControlFlow::Break(b)),
            (0, None) => Ok(ControlFlow::Continue(())),
            _ => Err(Error::new(Op::Open, self.len, err)),
        }
    }

    /// The plaintext's length.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Always false: a sealed secret holds at least one byte.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The sealed bytes (ciphertext; their layout is in
    /// secbuf_sealed_export(3)), to move the secret within this process
    /// or look at them: they open only in the process that sealed them,
    /// until its next rekey, and are no way to store a secret.
    pub fn export(&self) -> Vec<u8> {
        // SAFETY: the handle is live; NULL and 0 ask for the length.
        let n = unsafe { ffi::secbuf_sealed_export(self.ptr.as_ptr(), ptr::null_mut(), 0) };
        let mut out = vec![0u8; n];
        // SAFETY: out has room for the n bytes; a rekey meanwhile keeps
        // the length (it rewrites the bytes in place).
        let m = unsafe {
            ffi::secbuf_sealed_export(self.ptr.as_ptr(), out.as_mut_ptr().cast::<c_void>(), n)
        };
        debug_assert_eq!(m, n);
        out
    }

    /// A sealed secret from exported bytes: `EBADMSG` when they are not
    /// sealed bytes (another layout, truncated, bytes added).  Bytes that
    /// were altered, or sealed in another process or before a rekey,
    /// import, but fail to open with `EBADMSG`.
    pub fn import(bytes: &[u8]) -> Result<SealedBytes, Error> {
        // SAFETY: bytes is a valid slice; the library copies it.
        let p = unsafe { ffi::secbuf_sealed_import(bytes.as_ptr().cast::<c_void>(), bytes.len()) };
        let ptr = match NonNull::new(p) {
            Some(ptr) => ptr,
            None => {
                return Err(Error::new(
                    Op::Import,
                    bytes.len(),
                    io::Error::last_os_error(),
                ))
            }
        };
        // SAFETY: a live handle, just made.
        let len = unsafe { ffi::secbuf_sealed_size(ptr.as_ptr()) };
        // Imported: the header's flags (byte 4, secbuf_sealed_export(3)).
        let flags = c_uint::from(bytes[4]) & OPEN_FLAGS;
        Ok(SealedBytes { ptr, len, flags })
    }
}

impl Drop for SealedBytes {
    fn drop(&mut self) {
        // SAFETY: self owns the handle; it is freed exactly once.
        unsafe { ffi::secbuf_sealed_free(self.ptr.as_ptr()) }
    }
}

impl fmt::Debug for SealedBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SealedBytes")
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}

/// A [`Pod`] value (a `[u8; 32]` key) kept sealed, as [`SealedBytes`]
/// keeps bytes: [`Sealed::with`] lends a `&T` to a closure while it is
/// open, [`Sealed::open`] hands it over as a [`SecretBox<T>`].  Made from
/// a `SecretBox<T>` (consumed: its bytes wiped by the seal, the box
/// freed) or read straight into locked memory ([`Sealed::from_reader`]).
///
/// There is no `Sealed::new(value: T)`: a value passed by value was on
/// the caller's stack, in ordinary memory, before the seal, and the copy
/// left there is out of the crate's reach.  `Sealed::seal(SecretBox::new(v)?)`
/// does that where a stack copy does not matter; start from
/// [`SecretBox::zeroed`] (and write it in place) or a reader where it does.
///
/// ```no_run
/// use secbuf::{Sealed, SecretBox};
/// let mut k = SecretBox::<[u8; 32]>::zeroed()?;
/// k.expose_secret_mut().copy_from_slice(&[7; 32]); // a key made in place
/// let key = Sealed::seal(k)?;                       // wiped, freed
/// let sum: u32 = key.with(|k: &[u8; 32]| k.iter().map(|&b| u32::from(b)).sum())?;
/// # Ok::<(), secbuf::Error>(())
/// ```
///
/// `T` must be [`Pod`], as for a `SecretBox`:
///
/// ```compile_fail,E0277
/// let mut f = std::fs::File::open("flag").unwrap();
/// let b = secbuf::Sealed::<bool>::from_reader(&mut f);
/// ```
pub struct Sealed<T: Pod> {
    bytes: SealedBytes,
    _holds: PhantomData<T>,
}

// Send and Sync follow from SealedBytes's and T's (a Pod: integers and
// arrays of them, Send and Sync), with no impl of their own.

impl<T: Pod> Sealed<T> {
    /// Seal the box's value; its bytes are wiped by the seal and the box
    /// freed.  Opens allocate as the box was allocated.
    pub fn seal(value: SecretBox<T>) -> Result<Sealed<T>, Error> {
        SealedBytes::seal(value.into_buf()).map(Sealed::from_bytes)
    }

    /// [`Sealed::seal`], with opens made with `opts`.
    pub fn seal_with(opts: &Options, value: SecretBox<T>) -> Result<Sealed<T>, Error> {
        SealedBytes::seal_with(opts, value.into_buf()).map(Sealed::from_bytes)
    }

    /// `size_of::<T>()` bytes from `reader`, read straight into locked
    /// memory and sealed there (as [`SealedBytes::from_reader`]).
    pub fn from_reader<R: Read + ?Sized>(reader: &mut R) -> Result<Sealed<T>, Error> {
        Sealed::from_reader_with(&Options::new(), reader)
    }

    /// [`Sealed::from_reader`], with opens made with `opts`.
    pub fn from_reader_with<R: Read + ?Sized>(
        opts: &Options,
        reader: &mut R,
    ) -> Result<Sealed<T>, Error> {
        SealedBytes::from_reader_with(opts, reader, mem::size_of::<T>()).map(Sealed::from_bytes)
    }

    fn from_bytes(bytes: SealedBytes) -> Sealed<T> {
        debug_assert_eq!(bytes.len(), mem::size_of::<T>());
        Sealed {
            bytes,
            _holds: PhantomData,
        }
    }

    /// Open, lend the value to `f`, then wipe and free it: `f`'s result,
    /// or the error of the open, as [`SealedBytes::with`].
    pub fn with<R, F: FnOnce(&T) -> R>(&self, f: F) -> Result<R, Error> {
        let out = self.bytes.with(|b| {
            // The opened buffer is secbuf memory (16-byte aligned, and T
            // needs no more: SecretBox's FITS); checked all the same.
            if b.len() != mem::size_of::<T>() || b.as_ptr() as usize % mem::align_of::<T>() != 0 {
                return None;
            }
            // SAFETY: size_of::<T>() initialised bytes, aligned for T, and
            // any bytes are a valid T (Pod); the reference lives for this
            // call only, while the buffer does.
            Some(f(unsafe { &*b.as_ptr().cast::<T>() }))
        })?;
        out.ok_or_else(|| {
            Error::new(
                Op::Open,
                self.bytes.len,
                io::Error::from_raw_os_error(libc::EINVAL),
            )
        })
    }

    /// The value in a new [`SecretBox<T>`] (locked; wiped on its drop).
    pub fn open(&self) -> Result<SecretBox<T>, Error> {
        SecretBox::from_buf(self.bytes.open()?)
    }

    /// The sealed bytes, as [`SealedBytes::export`].
    pub fn export(&self) -> Vec<u8> {
        self.bytes.export()
    }

    /// A sealed `T` from exported bytes, as [`SealedBytes::import`];
    /// `EINVAL` when they hold another size than a `T`'s.
    pub fn import(bytes: &[u8]) -> Result<Sealed<T>, Error> {
        let b = SealedBytes::import(bytes)?;
        if b.len() != mem::size_of::<T>() {
            let einval = io::Error::from_raw_os_error(libc::EINVAL);
            return Err(Error::new(Op::Import, bytes.len(), einval));
        }
        Ok(Sealed::from_bytes(b))
    }

    /// The sealed bytes of the value, as a [`SealedBytes`].
    pub fn into_bytes(self) -> SealedBytes {
        self.bytes
    }
}

impl<T: Pod> fmt::Debug for Sealed<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sealed")
            .field("type", &std::any::type_name::<T>())
            .field("len", &self.bytes.len)
            .finish_non_exhaustive()
    }
}

/// Draw fresh prekeys and re-seal every sealed secret of the process
/// under them, then wipe the old ones (`secbuf_seal_rekey`): whatever was
/// read of the old prekey, and any copy of the old sealed bytes, opens
/// nothing any more.  Process-wide, not per secret: what a reader of
/// memory holds is the prekey, which only a rekey replaces.  Opens and
/// seals in other threads wait for it.  On failure nothing changed.
pub fn seal_rekey() -> Result<(), Error> {
    // SAFETY: no arguments; failure is -1 and errno.
    if unsafe { ffi::secbuf_seal_rekey() } < 0 {
        return Err(Error::new(Op::Rekey, 0, io::Error::last_os_error()));
    }
    Ok(())
}

/// The process's sealed secrets, as `secbuf_seal_stat` counts them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct SealStat {
    /// Live sealed secrets.
    pub sealed: usize,
    /// Their plaintext bytes.
    pub bytes: usize,
    /// Their sealed bytes, in ordinary memory.
    pub sealed_bytes: usize,
    /// Where the prekey is: a lock method's name ("secretmem" for
    /// memfd_secret memory), `None` before the first seal.
    pub prekey: Option<&'static str>,
    /// Rekeys that succeeded.
    pub rekeys: u64,
}

/// The process's sealed secrets and where its prekey is.
pub fn seal_stat() -> SealStat {
    let mut st = ffi::secbuf_seal_stat::default();
    // SAFETY: st is a valid out-parameter; the call fails only for NULL
    // (or a libsodium without randomness, which leaves st zeroed).
    unsafe { ffi::secbuf_seal_stat(&mut st) };
    let prekey = if st.prekey_method < 0 {
        None
    } else {
        crate::buf::method_name(st.prekey_method).ok()
    };
    // c_ulong is u64 here, u32 on 32-bit targets.
    #[allow(clippy::useless_conversion)]
    let rekeys = u64::from(st.rekeys);
    SealStat {
        sealed: st.sealed,
        bytes: st.bytes,
        sealed_bytes: st.sealed_bytes,
        prekey,
        rekeys,
    }
}

/// What `with` hands its trampoline: the closure, and its result or panic.
struct UseCall<F, R> {
    f: Option<F>,
    out: Option<R>,
    panic: Option<Panic>,
}

/// `fn` of `secbuf_sealed_use`: the closure on the plaintext, its panic
/// caught (never unwound through C).
// The inner unsafe blocks say what each needs (redundant before Rust
// 2024's unsafe_op_in_unsafe_fn, and so allowed).
#[allow(unused_unsafe)]
unsafe extern "C" fn use_trampoline<F: FnOnce(&[u8]) -> R, R>(
    key: *mut c_void,
    len: size_t,
    arg: *mut c_void,
) -> c_int {
    // SAFETY: arg is the UseCall<F, R> that with() passed, alive and not
    // otherwise used during the call; key is len readable bytes of the
    // opened buffer, alive until this returns.
    let call = unsafe { &mut *arg.cast::<UseCall<F, R>>() };
    let bytes = unsafe { slice::from_raw_parts(key.cast::<u8>(), len) };
    if let Some(f) = call.f.take() {
        match panic::catch_unwind(AssertUnwindSafe(|| f(bytes))) {
            Ok(out) => call.out = Some(out),
            Err(payload) => call.panic = Some(payload),
        }
    }
    0
}

/// What `each` hands its trampoline.
struct EachCall<F, B> {
    f: F,
    brk: Option<B>,
    panic: Option<Panic>,
}

/// `fn` of `secbuf_sealed_each`: 0 to go on, 1 to stop (a Break, or a
/// panic, caught).
// The inner unsafe blocks say what each needs (redundant before Rust
// 2024's unsafe_op_in_unsafe_fn, and so allowed).
#[allow(unused_unsafe)]
unsafe extern "C" fn each_trampoline<F: FnMut(&[u8], usize) -> ControlFlow<B>, B>(
    chunk: *mut c_void,
    n: size_t,
    offset: size_t,
    arg: *mut c_void,
) -> c_int {
    // SAFETY: as in use_trampoline: arg is each()'s EachCall, chunk n
    // readable bytes alive until this returns.
    let call = unsafe { &mut *arg.cast::<EachCall<F, B>>() };
    let bytes = unsafe { slice::from_raw_parts(chunk.cast::<u8>(), n) };
    match panic::catch_unwind(AssertUnwindSafe(|| (call.f)(bytes, offset))) {
        Ok(ControlFlow::Continue(())) => 0,
        Ok(ControlFlow::Break(b)) => {
            call.brk = Some(b);
            1
        }
        Err(payload) => {
            call.panic = Some(payload);
            1
        }
    }
}

/// What `from_reader` hands its trampoline: the reader, and its error or
/// panic.
struct FillCall<'r, R: Read + ?Sized> {
    reader: &'r mut R,
    err: Option<io::Error>,
    panic: Option<Panic>,
}

/// `fill` of `secbuf_seal_fill`: `read_exact` into the locked chunk; 1
/// stops the seal (an error or a panic, kept for after the call).
// The inner unsafe blocks say what each needs (redundant before Rust
// 2024's unsafe_op_in_unsafe_fn, and so allowed).
#[allow(unused_unsafe)]
unsafe extern "C" fn fill_trampoline<R: Read + ?Sized>(
    chunk: *mut c_void,
    n: size_t,
    _offset: size_t,
    arg: *mut c_void,
) -> c_int {
    // SAFETY: arg is from_reader_with()'s FillCall; chunk is n writable
    // bytes of a locked buffer, alive until this returns.
    let call = unsafe { &mut *arg.cast::<FillCall<'_, R>>() };
    let dst = unsafe { slice::from_raw_parts_mut(chunk.cast::<u8>(), n) };
    match panic::catch_unwind(AssertUnwindSafe(|| call.reader.read_exact(dst))) {
        Ok(Ok(())) => 0,
        Ok(Err(e)) => {
            call.err = Some(e);
            1
        }
        Err(payload) => {
            call.panic = Some(payload);
            1
        }
    }
}
