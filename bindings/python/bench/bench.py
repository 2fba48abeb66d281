"""The Python binding's cost against the C API's, side by side in one
process: alloc+free pairs per second for 32-byte buffers (guarded and
packed), and alloc(1 GiB) + a write to its first 4 KiB + free.  Each
case alternates C and Python rounds; the table gives medians.

usage: bench.py RESULTS.md   (make -C bindings/python bench)"""

import ctypes
import os
import platform
import statistics
import sys
import time

import secbuf

ROUNDS = 15
GIB = 1 << 30
PACKED = 0x4
PAGE = b"\x01" * 4096

build = os.environ["SECBUF_PY_BUILD"]
c = ctypes.CDLL(os.path.join(build, "cloop.so"))
c.cloop_pairs.restype = ctypes.c_double
c.cloop_pairs.argtypes = [ctypes.c_size_t, ctypes.c_uint, ctypes.c_long]
c.cloop_touch.restype = ctypes.c_double
c.cloop_touch.argtypes = [ctypes.c_size_t, ctypes.c_long]


def py_pairs(size, packed, n):
    new = secbuf.SecretBuffer
    t0 = time.perf_counter()
    for _ in range(n):
        new(size, packed=packed).close()
    return time.perf_counter() - t0


def py_touch(size, n):
    new = secbuf.SecretBuffer
    t0 = time.perf_counter()
    for _ in range(n):
        buf = new(size)
        view = memoryview(buf)
        view[:4096] = PAGE
        view.release()
        buf.close()
    return time.perf_counter() - t0


def checked(seconds):
    if seconds < 0:
        sys.exit("bench: the C loop's allocation failed")
    return seconds


def case(name, n, c_round, py_round):
    """Median operations per second of each side, alternating rounds."""
    c_round(n // 10), py_round(n // 10)  # warm: the probe, the slabs
    c_rates, py_rates = [], []
    for _ in range(ROUNDS):
        c_rates.append(n / checked(c_round(n)))
        py_rates.append(n / py_round(n))
    c_med, py_med = statistics.median(c_rates), statistics.median(py_rates)
    row = (name, c_med, py_med, py_med / c_med)
    print("%-34s C %12.0f/s  Python %12.0f/s  ratio %.2f" % row, flush=True)
    return row


def main(out):
    load = os.getloadavg()[0]
    rows = [
        case("32 B alloc+free pairs", 2000,
             lambda n: c.cloop_pairs(32, 0, n), lambda n: py_pairs(32, False, n)),
        case("32 B packed alloc+free pairs", 200000,
             lambda n: c.cloop_pairs(32, PACKED, n), lambda n: py_pairs(32, True, n)),
        case("1 GiB alloc+touch 4 KiB+free", 300,
             lambda n: c.cloop_touch(GIB, n), lambda n: py_touch(GIB, n)),
    ]
    with open(out, "w") as f:
        f.write("# The Python binding against the C API\n\n")
        f.write("`make bench-python` (bindings/python/bench/bench.py): one process, the C\n"
                "loop (bindings/python/bench/cloop.c through ctypes, one call per round) and the same loop\n"
                "in Python on the same libsecbuf.so, rounds alternating, %d each;\n"
                "medians of operations per second.  Ratio: Python / C.\n\n" % ROUNDS)
        f.write("| case | C (/s) | Python (/s) | ratio | C (us/op) | Python (us/op) |"
                " Python - C (us/op) |\n")
        f.write("|---|---:|---:|---:|---:|---:|---:|\n")
        for name, cm, pm, ratio in rows:
            f.write("| %s | %.0f | %.0f | %.2f | %.2f | %.2f | %.2f |\n"
                    % (name, cm, pm, ratio, 1e6 / cm, 1e6 / pm, 1e6 / pm - 1e6 / cm))
        f.write("\nThe binding adds about the same time to every call (the last column):"
                " a Python object, the call and close(), the GIL dropped around a guarded"
                " buffer's system calls.  Behind a guarded buffer's mmap, mlock and munmap it"
                " is lost in the noise; against a packed secret's few hundred nanoseconds it"
                " is most of the cost.\n")
        f.write("\nPython %s (%s), kernel %s, lock method %s, %s; %d CPUs,"
                " load average %.1f at the start and %.1f at the end (shared with other"
                " jobs: compare the ratios, not the rates).\n"
                % (platform.python_version(), sys.executable, platform.release(),
                   secbuf.lock_method(), time.strftime("%Y-%m-%d", time.gmtime()),
                   os.cpu_count(), load, os.getloadavg()[0]))
    print("wrote", out)


if __name__ == "__main__":
    main(sys.argv[1])
