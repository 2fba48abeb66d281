"""Eight threads at once: allocations, views and closes, and one buffer
shared among them whose close races their views."""

import threading

import secbuf

THREADS = 8
ROUNDS = 300


def run(worker):
    errors, start = [], threading.Barrier(THREADS)

    def body(i):
        try:
            start.wait()
            worker(i)
        except BaseException as e:  # reported below, with its thread
            errors.append((i, repr(e)))
    threads = [threading.Thread(target=body, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_private_buffers_in_eight_threads():
    def worker(i):
        for n in range(ROUNDS):
            kind = [{}, {"packed": True}][n % 2]
            size = 1 + (n * 7 + i) % 300
            with secbuf.SecretBuffer(size, **kind) as buf:
                view = memoryview(buf)
                view[:] = bytes([i]) * size
                assert view.tobytes() == bytes([i]) * size
                view.release()
    run(worker)


def test_shared_buffer_close_races_views():
    buf = secbuf.SecretBuffer(4096)
    memoryview(buf)[:] = b"s" * 4096
    outcomes = {"closed": 0, "refused": 0, "read": 0, "after": 0}
    lock = threading.Lock()

    def count(what):
        with lock:
            outcomes[what] += 1

    def worker(i):
        for n in range(ROUNDS):
            if i == 0 and n == ROUNDS // 2:
                try:
                    buf.close()
                    count("closed")
                except BufferError:
                    count("refused")
                continue
            try:
                view = memoryview(buf)
            except ValueError:
                count("after")  # closed: refused, no access
                continue
            assert view[n % 4096] == ord("s")
            count("read")
            view.release()
    run(worker)
    buf.close()  # idempotent, or the close that was refused
    assert buf.closed and outcomes["read"] > 0
