"""SecretBuffer's surface: sizes, the buffer protocol, close, errors."""

import copy
import errno
import gc
import hmac
import pickle
import sys

import pytest

import secbuf


def test_lock_method_names_a_method():
    assert secbuf.lock_method() in ("maplockonfault", "mlock2", "mlock", "none")


@pytest.mark.parametrize("kind", [{}, {"packed": True}])
def test_zero_filled_writable_and_locked(kind):
    with secbuf.SecretBuffer(32, **kind) as buf:
        assert len(buf) == 32
        view = memoryview(buf)
        assert not view.readonly and view.format == "B" and view.nbytes == 32
        assert view.tobytes() == bytes(32)
        view[:] = bytes(range(32))
        assert memoryview(buf)[5] == 5  # a second view sees the same memory
        st = buf.stat()
        assert st["size"] == 32 and st["packed"] == bool(kind)
        if st["lock_method"] != "none":
            assert st["locked_pages"] >= 1
        view.release()


def test_secret_tier():
    try:
        buf = secbuf.SecretBuffer(64, secret=True)
    except secbuf.Error as e:
        assert e.errno == errno.ENOSYS and "memfd_secret" in str(e)
        pytest.skip(f"no secret memory on this kernel: {e}")
    with buf:
        memoryview(buf)[:3] = b"abc"
        assert buf.stat()["lock_method"] == "secretmem"
        assert bytes(memoryview(buf)[:3]) == b"abc"


def test_large_buffer_is_lazy():
    with secbuf.SecretBuffer(64 << 20, best_effort=True) as buf:
        memoryview(buf)[-1] = 1
        assert buf.stat()["resident_pages"] <= 2  # only the touched page


@pytest.mark.parametrize("size", [0, -1, -(2**70)])
def test_size_below_one_is_value_error(size):
    with pytest.raises(ValueError, match="at least 1"):
        secbuf.SecretBuffer(size)


@pytest.mark.parametrize("size", [sys.maxsize + 1, 2**64 - 1, 2**64, 2**200])
def test_size_beyond_ssize_t_is_overflow_error(size):
    with pytest.raises(OverflowError, match="sys.maxsize"):
        secbuf.SecretBuffer(size)


@pytest.mark.parametrize("size", [sys.maxsize, 2**62])
def test_size_too_large_for_memory_is_secbuf_error(size):
    with pytest.raises(secbuf.Error) as info:
        secbuf.SecretBuffer(size)
    assert isinstance(info.value, OSError) and info.value.errno == errno.ENOMEM
    # libsecbuf's explanation (secbuf_last_failure()), not a guess of ours
    assert f"secbuf_alloc_flags({size}): ENOMEM: " in str(info.value)


@pytest.mark.parametrize("size", ["32", 3.0, None, b"x"])
def test_size_not_an_int_is_type_error(size):
    with pytest.raises(TypeError):
        secbuf.SecretBuffer(size)


def test_options_are_keyword_only():
    with pytest.raises(TypeError, match="keywords"):
        secbuf.SecretBuffer(32, True)
    with pytest.raises(TypeError, match="bogus"):
        secbuf.SecretBuffer(32, bogus=True)
    with pytest.raises(TypeError, match="missing required argument 'size'"):
        secbuf.SecretBuffer()
    with pytest.raises(TypeError, match="multiple values"):
        secbuf.SecretBuffer(8, size=8)


def test_size_by_keyword():
    with secbuf.SecretBuffer(size=8, packed=True) as buf:
        assert len(buf) == 8 and buf.stat()["packed"]


def test_new_through_a_dict_of_options():
    buf = secbuf.SecretBuffer.__new__(secbuf.SecretBuffer, 8, **{"packed": True})
    assert buf.stat()["packed"]
    buf.close()


def test_not_subclassable():
    with pytest.raises(TypeError):
        type("Sub", (secbuf.SecretBuffer,), {})


def test_close_is_idempotent_and_every_use_after_it_raises():
    buf = secbuf.SecretBuffer(32)
    assert not buf.closed
    buf.close()
    buf.close()
    assert buf.closed and "closed" in repr(buf)
    for use in (memoryview, len, bytes, bytearray, lambda b: b.stat(),
                lambda b: b.__enter__(), lambda b: hmac.compare_digest(b, bytes(32))):
        with pytest.raises(ValueError, match="closed"):
            use(buf)


def test_context_manager_closes_even_on_error():
    with pytest.raises(RuntimeError):
        with secbuf.SecretBuffer(32) as buf:
            raise RuntimeError
    assert buf.closed


def test_close_while_exported_is_buffer_error():
    buf = secbuf.SecretBuffer(32)
    view = memoryview(buf)
    part = view[4:8]  # a slice shares the export of its view
    with pytest.raises(BufferError, match="memoryview"):
        buf.close()
    view.release()
    with pytest.raises(BufferError):
        buf.close()
    part[0] = 7  # still valid: nothing was freed
    part.release()
    buf.close()
    assert buf.closed
    with pytest.raises(ValueError):
        part[0]  # a released view raises, never touches freed memory


def test_with_block_exit_refuses_while_exported():
    view = None
    with pytest.raises(BufferError):
        with secbuf.SecretBuffer(32) as buf:
            view = memoryview(buf)
    assert not buf.closed
    view.release()
    buf.close()


def test_unclosed_buffer_is_freed_when_collected():
    buf = secbuf.SecretBuffer(32)
    memoryview(buf)[0] = 1
    del buf
    gc.collect()  # no crash, no leak visible here; valgrind-free by construction


def test_repr_never_shows_contents():
    with secbuf.SecretBuffer(4) as buf:
        memoryview(buf)[:] = b"KEY!"
        assert "KEY" not in repr(buf) and "KEY" not in str(buf)


def test_no_indexing_no_slicing_on_the_buffer_itself():
    with secbuf.SecretBuffer(4) as buf:
        with pytest.raises(TypeError):
            buf[0]
        with pytest.raises(TypeError):
            buf[0:2]


@pytest.mark.parametrize("dup", [pickle.dumps, copy.copy, copy.deepcopy])
def test_pickle_and_copy_refused(dup):
    with secbuf.SecretBuffer(4) as buf:
        with pytest.raises(TypeError, match="copy"):
            dup(buf)


def test_purge_zeroes_live_buffers():
    with secbuf.SecretBuffer(8) as a, secbuf.SecretBuffer(8, packed=True) as b:
        memoryview(a)[:] = b"\xff" * 8
        memoryview(b)[:] = b"\xff" * 8
        secbuf.purge()
        assert memoryview(a).tobytes() == bytes(8)
        assert memoryview(b).tobytes() == bytes(8)


def test_hmac_reads_the_buffer_in_place():
    with secbuf.SecretBuffer(32) as key:
        memoryview(key)[:] = b"k" * 32
        assert hmac.digest(key, b"msg", "sha256") == hmac.digest(b"k" * 32, b"msg", "sha256")
        with pytest.raises(TypeError):
            hmac.new(key, b"msg", "sha256")  # wants bytes: the copy the docs warn of
        assert hmac.compare_digest(key, b"k" * 32)
