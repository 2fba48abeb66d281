//! The C API of `include/secbuf.h` and `include/secbuf-seal.h`, as it
//! is: raw pointers, errno, no checks.  The safe types of this crate are built on it; it is public for
//! the calls they do not wrap (`secbuf_stat`) and for measuring the
//! binding against the C API.  A separate `-sys` crate would hold only
//! these few lines, so it stays a module (`links = "secbuf"` still keeps
//! two copies of the library out of one program).
//!
//! Memory from these calls may read as zeros at any time the program does
//! not rule out: `secbuf_purge()` zeroes every live buffer, and a forked
//! child sees the parent's buffers as zeros.  Code that keeps a Rust value
//! there must choose a type for which zeros are valid, as [`crate::Pod`]
//! does for `SecretBox`.
use libc::{c_char, c_int, c_uint, c_ulong, c_void, size_t};

pub const SECBUF_POPULATE: c_uint = 0x1;
pub const SECBUF_BEST_EFFORT: c_uint = 0x2;
pub const SECBUF_PACKED: c_uint = 0x4;
pub const SECBUF_SECRET: c_uint = 0x8;
pub const SECBUF_INHERIT: c_uint = 0x10;
pub const SECBUF_PACKED_MAX: usize = 256;

pub const SECBUF_NOACCESS: c_int = 0;
pub const SECBUF_READONLY: c_int = 1;
pub const SECBUF_READWRITE: c_int = 2;

#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub struct secbuf_stat {
    pub size: size_t,
    pub mapped_bytes: size_t,
    pub resident_pages: size_t,
    pub locked_pages: size_t,
    pub lock_method: c_int,
    pub flags: c_uint,
}

/// A sealed secret of libsecbuf-seal: opaque, in ordinary memory.
#[repr(C)]
pub struct secbuf_sealed {
    _opaque: [u8; 0],
}

pub const SECBUF_SEAL_PREKEY: usize = 16 * 1024;
pub const SECBUF_SEAL_CHUNK: usize = 16 * 1024;

#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub struct secbuf_seal_stat {
    pub sealed: size_t,
    pub bytes: size_t,
    pub sealed_bytes: size_t,
    pub prekey_method: c_int,
    pub inherit_prekey_method: c_int,
    pub rekeys: c_ulong,
}

/// `fn(chunk, n, offset, arg)` of `secbuf_seal_fill()` and `secbuf_sealed_each()`.
pub type SecbufChunkFn =
    unsafe extern "C" fn(chunk: *mut c_void, n: size_t, offset: size_t, arg: *mut c_void) -> c_int;
/// `fn(key, len, arg)` of `secbuf_sealed_use()`.
pub type SecbufUseFn =
    unsafe extern "C" fn(key: *mut c_void, len: size_t, arg: *mut c_void) -> c_int;

extern "C" {
    pub fn secbuf_alloc(size: size_t) -> *mut c_void;
    pub fn secbuf_alloc_flags(size: size_t, flags: c_uint) -> *mut c_void;
    pub fn secbuf_free(ptr: *mut c_void);
    pub fn secbuf_protect(ptr: *mut c_void, access: c_int) -> c_int;
    pub fn secbuf_size(ptr: *const c_void) -> size_t;
    pub fn secbuf_stat(ptr: *const c_void, st: *mut secbuf_stat) -> c_int;
    pub fn secbuf_lock_method() -> c_int;
    pub fn secbuf_lock_method_name(method: c_int) -> *const c_char;
    pub fn secbuf_purge();

    // libsecbuf-seal (include/secbuf-seal.h).
    pub fn secbuf_seal(plain: *mut c_void, len: size_t, flags: c_uint) -> *mut secbuf_sealed;
    pub fn secbuf_seal_fill(
        len: size_t,
        fill: Option<SecbufChunkFn>,
        arg: *mut c_void,
        flags: c_uint,
    ) -> *mut secbuf_sealed;
    pub fn secbuf_sealed_open(s: *const secbuf_sealed) -> *mut c_void;
    pub fn secbuf_sealed_use(
        s: *const secbuf_sealed,
        f: Option<SecbufUseFn>,
        arg: *mut c_void,
    ) -> c_int;
    pub fn secbuf_sealed_each(
        s: *const secbuf_sealed,
        f: Option<SecbufChunkFn>,
        arg: *mut c_void,
    ) -> c_int;
    pub fn secbuf_sealed_free(s: *mut secbuf_sealed);
    pub fn secbuf_sealed_size(s: *const secbuf_sealed) -> size_t;
    pub fn secbuf_seal_rekey() -> c_int;
    pub fn secbuf_sealed_export(s: *const secbuf_sealed, out: *mut c_void, len: size_t) -> size_t;
    pub fn secbuf_sealed_import(data: *const c_void, len: size_t) -> *mut secbuf_sealed;
    pub fn secbuf_seal_stat(st: *mut secbuf_seal_stat) -> c_int;
}
