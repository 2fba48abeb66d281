"""A buffer made before fork() is the parent's: the child may neither use
nor free it (the library would abort), and exits cleanly.  Views the
parent made of it raise ValueError in the child; anything else still
holding its address reads zeros there, and nothing faults."""

import ctypes
import errno
import os
import pickle
import signal

import pytest

import secbuf


def in_child(body):
    """Run body() in a forked child; its failure (a message) or death fails here."""
    rd, wr = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(rd)
        why = "the child ended without a word"
        try:
            why = body() or ""
        except BaseException as e:  # noqa: B036 -- the child must always report and _exit
            why = f"{type(e).__name__}: {e}"
        finally:
            os.write(wr, why.encode()[:4000])
            os._exit(0 if not why else 1)
    os.close(wr)
    with os.fdopen(rd, "rb") as f:
        why = f.read().decode()
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        pytest.fail(f"the child died of {signal.Signals(os.WTERMSIG(status)).name}")
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, why
    assert not why


KINDS = {"plain": {}, "packed": {"packed": True}, "secret": {"secret": True},
         "secret-packed": {"secret": True, "packed": True}}


def make(kind):
    try:
        return secbuf.SecretBuffer(32, **KINDS[kind])
    except secbuf.Error as e:
        if e.errno == errno.ENOSYS and KINDS[kind].get("secret"):
            pytest.skip(f"no secret memory on this kernel: {e}")
        raise


def raises_value_error(use):
    try:
        use()
    except ValueError:
        return True
    return False


def test_child_refuses_the_parents_buffer_and_exits_cleanly():
    buf = secbuf.SecretBuffer(32)
    memoryview(buf)[:] = b"p" * 32

    def child():
        try:
            memoryview(buf)
            return "memoryview(buf) reached the parent's pages"
        except ValueError as e:
            if "fork" not in str(e):
                return f"ValueError without 'fork': {e}"
        if "parent" not in repr(buf):
            return f"repr does not say whose: {buf!r}"
        buf.close()  # forgotten, not freed: no abort
        mine = secbuf.SecretBuffer(16)  # the child's own work fine
        memoryview(mine)[0] = 1
        mine.close()
        return ""

    in_child(child)
    assert memoryview(buf).tobytes() == b"p" * 32  # the parent's is intact
    buf.close()


@pytest.mark.parametrize("kind", KINDS)
def test_views_made_before_fork_raise_value_error_in_the_child(kind):
    buf = make(kind)
    view = memoryview(buf)
    view[:] = b"p" * 32
    part, words = view[8:16], view.cast("Q")

    def child():
        for name, v in (("view", view), ("slice", part), ("cast", words)):
            for what, use in (("v[0]", lambda: v[0]), ("v.tobytes()", v.tobytes),
                              ("bytes(v)", lambda: bytes(v)),
                              ("v[0] = 0", lambda: v.__setitem__(0, 0))):
                if not raises_value_error(use):
                    return f"{what} of the parent's {name} did not raise ValueError"
        buf.close()  # the views were released: nothing is left exported
        if not buf.closed:
            return "close() did not close"
        return ""

    in_child(child)
    assert view.tobytes() == b"p" * 32 and part.tobytes() == b"p" * 8  # the parent's views
    for v in (words, part, view):
        v.release()
    buf.close()


@pytest.mark.parametrize("kind", KINDS)
def test_raw_pointers_made_before_fork_read_zeros_in_the_child(kind):
    """ctypes keeps the address of what it wraps; a memoryview whose own
    buffer is exported (here to a PickleBuffer) cannot be released.  Both
    read zeros in the child, as the library's inherited buffers do."""
    buf = make(kind)
    memoryview(buf)[:] = b"p" * 32
    array = (ctypes.c_char * 32).from_buffer(buf)
    pinned = memoryview(buf)
    pin = pickle.PickleBuffer(pinned)

    def child():
        if array.raw != bytes(32):
            return f"ctypes read {array.raw!r}, not zeros"
        array[0] = b"c"  # the child's own page now, not the parent's
        if pinned.tobytes() != b"c" + bytes(31):
            return f"the pinned view read {pinned.tobytes()!r}"
        if not raises_value_error(lambda: memoryview(buf)):
            return "a new view of the parent's buffer did not raise"
        return ""

    in_child(child)
    assert array.raw == b"p" * 32 and pinned.tobytes() == b"p" * 32  # the parent's
    array = None  # ctypes lets go of its view of buf
    pin.release()
    pinned.release()
    buf.close()


def test_child_dropping_the_parents_buffer_at_exit_does_not_abort():
    buf = secbuf.SecretBuffer(32, packed=True)
    pid = os.fork()
    if pid == 0:
        try:
            del globals()["secbuf"]  # touch nothing, drop the last reference
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    buf.close()
