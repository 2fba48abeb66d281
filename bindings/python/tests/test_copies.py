"""The copy proof: a secret read with SecretBuffer.from_file() is found in
this process's anonymous and heap memory only in locked, non-dumpable
mappings; read the naive way, f.read(), it is found elsewhere too.

The secret never exists unmasked in this process outside what is read:
a child makes it, and sends it masked (secret XOR mask, the mask ours)
before the secret itself.  memscan.c compares masked."""

import ctypes
import os
import subprocess
import sys

import pytest

import secbuf

SIZE = 32

# The child: mask on stdin; masked secret, then the secret, on stdout.
CHILD = """
import os, sys
mask = sys.stdin.buffer.read(%d)
secret = os.urandom(%d)
out = sys.stdout.buffer
out.write(bytes(a ^ b for a, b in zip(secret, mask)))
out.flush()
out.write(secret)
out.flush()
""" % (SIZE, SIZE)


class Secret:
    """A child with a fresh secret; .pipe is the unbuffered read end."""

    def __init__(self):
        self.mask = os.urandom(SIZE)
        self.proc = subprocess.Popen([sys.executable, "-c", CHILD], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, bufsize=0)
        self.proc.stdin.write(self.mask)
        self.proc.stdin.close()
        self.pipe = self.proc.stdout
        self.masked = b""
        while len(self.masked) < SIZE:
            part = self.pipe.read(SIZE - len(self.masked))
            assert part, "the child sent no masked secret"
            self.masked += part

    def close(self):
        self.pipe.close()
        assert self.proc.wait() == 0


@pytest.fixture
def secret():
    s = Secret()
    yield s
    s.close()


@pytest.fixture(scope="module")
def scanner(build_dir):
    with open("/proc/self/maps") as f:
        if "libasan" in f.read():
            pytest.skip("under ASan: its shadow memory is terabytes of anonymous mappings")
    lib = ctypes.CDLL(os.path.join(build_dir, "memscan.so"), use_errno=True)
    lib.memscan.restype = ctypes.c_long
    lib.memscan.argtypes = [ctypes.c_int, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_char_p,
                            ctypes.c_char_p, ctypes.c_size_t,
                            ctypes.POINTER(ctypes.c_size_t), ctypes.c_long]
    fd = os.open("/proc/self/mem", os.O_RDONLY)
    yield lib, fd
    os.close(fd)


def mappings():
    """(start, end, flags, name) of every readable anonymous or heap mapping."""
    out, cur = [], None
    with open("/proc/self/smaps") as f:
        for line in f:
            head = line.split()
            if "-" in head[0] and len(head) >= 5 and ":" in head[3]:
                lo, hi = (int(x, 16) for x in head[0].split("-"))
                name = head[5] if len(head) > 5 else ""
                anon = head[4] == "0" and (name == "" or name in ("[heap]", "[stack]")
                                           or name.startswith("[anon:"))
                cur = [lo, hi, set(), name] if anon and head[1][0] == "r" else None
                if cur:
                    out.append(cur)
            elif cur and head[0] == "VmFlags:":
                cur[2] = set(head[1:])
    return out


def scan(scanner, secret):
    """The secret's hits: (in locked non-dumpable mappings, elsewhere)."""
    lib, fd = scanner
    hits = (ctypes.c_size_t * 64)()
    safe, leaks = [], []
    for lo, hi, flags, name in mappings():
        n = lib.memscan(fd, lo, hi, secret.masked, secret.mask, SIZE, hits, 64)
        assert n >= 0, os.strerror(ctypes.get_errno())
        locked = ("lo" in flags or "lf" in flags) and "dd" in flags
        where = [(hits[i], name or "anon", " ".join(sorted(flags))) for i in range(min(n, 64))]
        (safe if locked else leaks).extend(where)
    return safe, leaks


@pytest.mark.parametrize("kind", [{}, {"packed": True}])
def test_from_file_leaves_the_secret_only_in_secbuf(scanner, secret, kind):
    with secbuf.SecretBuffer.from_file(secret.pipe, SIZE, **kind) as buf:
        safe, leaks = scan(scanner, secret)
        assert leaks == [], f"copies outside secbuf at {leaks}"
        # The scanner sees the buffer itself: it could have seen a copy.
        view = memoryview(buf)
        addr = ctypes.addressof(ctypes.c_char.from_buffer(view))
        view.release()
        assert [a for a, _, _ in safe] == [addr]
    # close() wiped it: found nowhere.
    assert scan(scanner, secret) == ([], [])


def test_secret_tier_is_not_even_readable(scanner, secret):
    try:
        buf = secbuf.SecretBuffer.from_file(secret.pipe, SIZE, secret=True)
    except secbuf.Error as e:
        pytest.skip(f"no secret memory on this kernel: {e}")
    with buf:
        assert scan(scanner, secret) == ([], []), "memfd_secret pages read through /proc/self/mem"


def test_control_f_read_leaves_copies(scanner, secret):
    key = secret.pipe.read(SIZE)
    assert len(key) == SIZE
    safe, leaks = scan(scanner, secret)
    assert leaks, "f.read()'s bytes not found: the scan cannot see copies"
    del key


def test_control_bytes_of_the_buffer_is_a_copy(scanner, secret):
    with secbuf.SecretBuffer.from_file(secret.pipe, SIZE) as buf:
        copied = bytes(buf)
        safe, leaks = scan(scanner, secret)
        assert len(safe) == 1 and leaks, "bytes(buf) should be a copy outside secbuf"
        del copied


def test_buffered_file_warns_and_keeps_a_copy(scanner, secret):
    with open(secret.pipe.fileno(), "rb", closefd=False) as f:  # read-ahead buffer
        with pytest.warns(secbuf.CopyWarning, match="buffering=0"):
            buf = secbuf.SecretBuffer.from_file(f, SIZE)
        with buf:
            safe, leaks = scan(scanner, secret)
    assert leaks, "BufferedReader's read-ahead should hold a copy"


def test_memoryview_views_copy_nothing(scanner, secret):
    with secbuf.SecretBuffer.from_file(secret.pipe, SIZE) as buf:
        view = memoryview(buf)
        parts = [view[:], view[0:SIZE], view.cast("Q"), memoryview(view)]
        safe, leaks = scan(scanner, secret)
        assert len(safe) == 1 and leaks == []
        for p in parts:
            p.release()
        view.release()


def test_from_file_hands_readinto_only_views_of_the_buffer(secret):
    """What the scan cannot see, a copy made and freed at once (pymalloc
    soon reuses its block), this sees: from_file() may call nothing but
    readinto(), and only with views into the buffer's own memory."""
    seen = []

    class OnlyReadinto:
        def readinto(self, view):
            seen.append((ctypes.addressof(ctypes.c_char.from_buffer(view)), len(view)))
            return secret.pipe.readinto(view[:5])  # short reads: several calls

    with secbuf.SecretBuffer.from_file(OnlyReadinto(), SIZE) as buf:
        view = memoryview(buf)
        base = ctypes.addressof(ctypes.c_char.from_buffer(view))
        view.release()
        assert len(seen) == -(-SIZE // 5)
        for addr, length in seen:
            assert base <= addr and addr + length == base + SIZE
