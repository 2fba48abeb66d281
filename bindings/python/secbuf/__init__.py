"""secbuf: secrets in locked, guarded memory that is wiped when closed.

    with open(path, "rb", buffering=0) as f, secbuf.SecretBuffer.from_file(f, 32) as key:
        mac = hmac.digest(key, msg, "sha256")  # reads the key in place
    # here the key's pages are wiped and unmapped

A SecretBuffer is memory from libsecbuf: locked on first touch (never
swapped), out of core dumps, not a forked child's, behind guard pages,
and wiped by close().  Python code reaches it only through the buffer
protocol, memoryview(buf) or any API that takes a bytes-like object, so
that the secret stays in those pages.  The module cannot stop Python
from copying it elsewhere; these idioms do, and the copies are neither
locked nor ever wiped (freed Python memory keeps its bytes):

    copies                                 does not copy
    bytes(buf), bytearray(buf)             memoryview(buf), mv[a:b], mv.cast("Q")
    mv.tobytes(), mv.hex(), mv.tolist()    f.readinto(mv), sock.recv_into(mv)
    bytes(mv[a:b]), b64encode(mv)          os.write(fd, mv), unbuffered f.write(mv)
    int.from_bytes(mv), struct.unpack*()   hmac.compare_digest(buf, other)
    a buffered file or BytesIO that        hmac.digest(buf, msg, "sha256"),
      reads or writes it                     hashlib.sha256(buf): OpenSSL reads
    hmac.new(bytes(buf)): it takes only      it in place (its own state is
      bytes, so the caller must copy         OpenSSL's to wipe)
    any other API that takes only bytes    ctypes: (c_char * n).from_buffer(buf)

Slicing a memoryview is a view (no copy); slicing bytes is a copy.
SecretBuffer itself has no indexing or slicing, so that every access
names memoryview.  pickle and copy.copy() refuse it (TypeError).

After os.fork() the parent's buffers are not the child's.  Any use of one
there raises ValueError (memoryview(buf), len(buf), stat()); close() only
forgets it.  A memoryview of it made before fork(), and its slices and
casts, raise ValueError too ("operation forbidden on released memoryview
object"): the child's fork hook releases them.  Whatever else still holds
the address (a ctypes object from from_buffer(), a memoryview whose own
buffer is exported, to a PickleBuffer say, or frozen by gc.freeze())
reads zeros in the child, and writes to pages of the child's own: never
the parent's secret, never a fault, secret=True included (the child gets
no secret memory; zero pages stand where it was).  Finding the views
walks the child's heap (some 20-40 ms per million objects), only when
views of buffers were alive at fork().

Errors: ValueError for a size below 1, for any use after close() and for
a parent's buffer after fork(); OverflowError above sys.maxsize;
secbuf.Error (an OSError with errno) when libsecbuf refuses, its message
the library's own, as C's secbuf_last_failure() gives it: the cause with
its figures (RLIMIT_MEMLOCK, what is locked already, how many kB more
were needed) and the fix; BufferError from close() while a memoryview is
alive.  lock_method() is how an allocation made now is locked: 'none'
when nothing can be (ulimit -l 0), whatever method the kernel has.
"""

from ._secbuf import PACKED_MAX, CopyWarning, Error, SecretBuffer, lock_method, purge

__all__ = ["SecretBuffer", "Error", "CopyWarning", "lock_method", "purge", "PACKED_MAX"]
