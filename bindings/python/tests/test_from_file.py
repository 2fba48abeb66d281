"""SecretBuffer.from_file(): exactly size bytes by readinto, or an error
and nothing left allocated."""

import io
import os
import socket

import pytest

import secbuf


def pipe_with(data, close=True):
    r, w = os.pipe()
    os.write(w, data)
    if close:
        os.close(w)
    return os.fdopen(r, "rb", buffering=0), (None if close else w)


def test_reads_exactly_size_bytes():
    f, _ = pipe_with(b"0123456789abcdef-rest")
    with f, secbuf.SecretBuffer.from_file(f, 16) as buf:
        assert memoryview(buf).tobytes() == b"0123456789abcdef"
        assert f.read() == b"-rest"  # nothing read ahead


def test_short_reads_are_continued():
    a, b = socket.socketpair()
    with a, b:
        b.sendall(b"abc")
        f = a.makefile("rb", buffering=0)

        class Trickle:  # hands readinto at most 2 bytes at a time
            def readinto(self, view):
                if len(view) > 2:
                    view = view[:2]
                return f.readinto(view)

        b.sendall(b"defgh")
        with secbuf.SecretBuffer.from_file(Trickle(), 8) as buf:
            assert memoryview(buf).tobytes() == b"abcdefgh"


def test_early_eof_is_eof_error():
    f, _ = pipe_with(b"short")
    with f, pytest.raises(EOFError, match="after 5 of 32 bytes"):
        secbuf.SecretBuffer.from_file(f, 32)


def test_nonblocking_without_data_is_blocking_io_error():
    f, w = pipe_with(b"", close=False)
    os.set_blocking(f.fileno(), False)
    with f, pytest.raises(BlockingIOError, match="non-blocking"):
        secbuf.SecretBuffer.from_file(f, 8)
    os.close(w)


def test_object_without_readinto_is_attribute_error():
    with pytest.raises(AttributeError):
        secbuf.SecretBuffer.from_file(object(), 8)


@pytest.mark.parametrize("result", [-1, 99, "x"])
def test_readinto_lying_about_its_count_is_an_error(result):
    class Liar:
        def readinto(self, view):
            return result
    with pytest.raises((RuntimeError, TypeError)):
        secbuf.SecretBuffer.from_file(Liar(), 8)


def test_readinto_keeping_the_view_cannot_reach_freed_memory():
    kept = []

    class Keeper:
        def readinto(self, view):
            kept.append(view)
            view[:] = b"k" * len(view)
            return len(view)

    with secbuf.SecretBuffer.from_file(Keeper(), 8) as buf:
        assert memoryview(buf).tobytes() == b"k" * 8
    assert buf.closed  # the kept view was released: close() was not refused
    with pytest.raises(ValueError):
        kept[0][0] = 1


def test_readinto_error_propagates():
    class Broken:
        def readinto(self, view):
            raise OSError(5, "I/O error")
    with pytest.raises(OSError, match="I/O error"):
        secbuf.SecretBuffer.from_file(Broken(), 8)


@pytest.mark.parametrize("size", [0, -3])
def test_bad_size(size):
    f, _ = pipe_with(b"x")
    with f, pytest.raises(ValueError):
        secbuf.SecretBuffer.from_file(f, size)


def test_options_pass_through():
    f, _ = pipe_with(b"x" * 16)
    with f, secbuf.SecretBuffer.from_file(f, 16, packed=True) as buf:
        assert buf.stat()["packed"]


def test_arguments_by_keyword():
    f, _ = pipe_with(b"z" * 4)
    with f, secbuf.SecretBuffer.from_file(size=4, f=f, packed=True) as buf:
        assert memoryview(buf).tobytes() == b"zzzz"
    with pytest.raises(TypeError, match="missing required argument 'size'"):
        secbuf.SecretBuffer.from_file(f)


def test_bytesio_warns():
    with pytest.warns(secbuf.CopyWarning, match="BytesIO"):
        buf = secbuf.SecretBuffer.from_file(io.BytesIO(b"y" * 4), 4)
    buf.close()
