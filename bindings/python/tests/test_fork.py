"""A buffer made before fork() is the parent's: the child may neither use
nor free it (the library would abort), and exits cleanly."""

import os

import secbuf


def test_child_refuses_the_parents_buffer_and_exits_cleanly():
    buf = secbuf.SecretBuffer(32)
    memoryview(buf)[:] = b"p" * 32
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            try:
                memoryview(buf)
                code = 10  # reached the parent's pages
            except ValueError as e:
                code = 0 if "fork" in str(e) else 11
            if code == 0 and "parent" not in repr(buf):
                code = 12
            buf.close()  # forgotten, not freed: no abort
            mine = secbuf.SecretBuffer(16)  # the child's own work fine
            memoryview(mine)[0] = 1
            mine.close()
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status), f"child died: {status:#x}"
    assert os.WEXITSTATUS(status) == 0
    assert memoryview(buf).tobytes() == b"p" * 32  # the parent's is intact
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
