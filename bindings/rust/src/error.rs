//! The one error type: which call failed, for how many bytes, and the
//! OS error (errno) or the reader's error behind it, with the fix named
//! where there is one.
use std::fmt;
use std::io;

/// What a failed call was doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Op {
    /// `secbuf_alloc_flags()` of `size` bytes.
    Alloc,
    /// `secbuf_protect()`: freezing or melting a buffer.
    Protect,
    /// The reader of `from_reader()` failed or ended early.
    Read,
    /// `secbuf_stat()` of a buffer.
    Stat,
    /// `secbuf_lock_method()`.
    LockMethod,
    /// `secbuf_seal()` or `secbuf_seal_fill()`: sealing `size` bytes.
    Seal,
    /// `secbuf_sealed_open()`, `_use()` or `_each()`: opening a sealed
    /// secret of `size` bytes.
    Open,
    /// `secbuf_seal_rekey()`.
    Rekey,
    /// `secbuf_sealed_import()` of `size` bytes.
    Import,
}

/// A failed secbuf call.  [`Error::raw_os_error`] gives its errno
/// (`EINVAL` for a size of 0, `ENOMEM` for one too large to map, `EAGAIN`
/// or `EPERM` when memory may not be locked; for sealed secrets `EBADMSG`
/// for bytes tampered with or not sealed here, `ENOKEY` in a forked child).  `Display` names the fix
/// where there is one, and so does `Debug`, which prints the same message
/// before the fields.  `io::Error::from` keeps its kind and message, and
/// the `Error` itself as the inner error.
pub struct Error {
    op: Op,
    size: usize,
    source: io::Error,
}

impl Error {
    pub(crate) fn new(op: Op, size: usize, source: io::Error) -> Error {
        Error { op, size, source }
    }

    /// The failed call's errno, `None` for a reader's error without one.
    pub fn raw_os_error(&self) -> Option<i32> {
        self.source.raw_os_error()
    }

    /// As `io::Error::kind`: `InvalidInput` for a size of 0,
    /// `UnexpectedEof` for a reader that ended early.
    pub fn kind(&self) -> io::ErrorKind {
        self.source.kind()
    }

    /// What was being done.
    pub fn op(&self) -> Op {
        self.op
    }

    /// The fix, for the errors that have one.
    fn advice(&self) -> Option<&'static str> {
        let errno = self.source.raw_os_error();
        match (self.op, errno) {
            (Op::Alloc, Some(libc::EINVAL)) if self.size == 0 => {
                Some("a buffer holds at least one byte")
            }
            (Op::Seal, Some(libc::EINVAL)) if self.size == 0 => {
                Some("a sealed secret holds at least one byte")
            }
            (Op::Open, Some(libc::ENOKEY)) => Some(
                "a forked child cannot open its parent's sealed secrets: \
                 open it in the parent, or seal it anew in the child",
            ),
            (Op::Open, Some(libc::EBADMSG)) => Some(
                "tampered with or truncated, or not sealed in this process under its \
                 present prekey: sealed bytes open only where they were sealed, until the next rekey",
            ),
            (Op::Import, Some(libc::EBADMSG)) => {
                Some("not sealed bytes: another layout, truncated, or with bytes added")
            }
            (Op::Alloc | Op::Seal | Op::Open | Op::Rekey, Some(libc::EAGAIN | libc::EPERM)) => {
                Some(
                    "memory may not be locked this much: raise RLIMIT_MEMLOCK \
                     (ulimit -l / LimitMEMLOCK=) or use Options::best_effort",
                )
            }
            (Op::Alloc | Op::Seal | Op::Open, Some(libc::ENOSYS)) => Some(
                "no secret memory here (memfd_secret; secretmem.enable=1 before Linux 6.5) \
                 or the forced SECBUF_LOCK method is missing",
            ),
            _ => None,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.op {
            Op::Alloc => write!(f, "secbuf: allocating {} bytes: {}", self.size, self.source)?,
            Op::Protect => write!(
                f,
                "secbuf: changing the access of a buffer: {}",
                self.source
            )?,
            Op::Read => write!(
                f,
                "secbuf: reading {} bytes into a buffer: {}",
                self.size, self.source
            )?,
            Op::Stat => write!(f, "secbuf: the state of a buffer: {}", self.source)?,
            Op::LockMethod => write!(f, "secbuf: the lock method: {}", self.source)?,
            Op::Seal => write!(f, "secbuf: sealing {} bytes: {}", self.size, self.source)?,
            Op::Open => write!(
                f,
                "secbuf: opening a sealed secret of {} bytes: {}",
                self.size, self.source
            )?,
            Op::Rekey => write!(f, "secbuf: re-keying the sealed secrets: {}", self.source)?,
            Op::Import => write!(
                f,
                "secbuf: importing {} sealed bytes: {}",
                self.size, self.source
            )?,
        }
        match self.advice() {
            Some(fix) => write!(f, " ({})", fix),
            None => Ok(()),
        }
    }
}

/// The message of `Display`, fix included, then the fields: what `fn
/// main() -> Result<(), secbuf::Error>` prints when it fails.
impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("message", &self.to_string())
            .field("op", &self.op)
            .field("size", &self.size)
            .field("source", &self.source)
            .finish()
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

impl From<Error> for io::Error {
    /// Its kind and message; `get_ref()` / `into_inner()` give the `Error`
    /// back, with its errno.
    fn from(e: Error) -> io::Error {
        io::Error::new(e.kind(), e)
    }
}
