"""Under RLIMIT_MEMLOCK, as a user without CAP_IPC_LOCK (nobody): what
lock_method() says, and what secbuf.Error says when the limit refuses.
Each case runs in a python3 of its own, the limit set before secbuf is
imported; root's CAP_IPC_LOCK would lock past any limit."""

import json
import os
import re
import subprocess
import sys

import pytest

NOBODY = 65534

# The child: limit, then secbuf; what it saw as one JSON object on stdout.
CHILD = r"""
import ctypes, json, os, resource, sys
pkg = os.path.join(os.environ["PYTHONPATH"], "secbuf")
if not os.access(pkg, os.R_OK | os.X_OK):
    print(json.dumps({"unreadable": pkg}))
    sys.exit()
limit = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_MEMLOCK, (limit, limit))
import secbuf
lib = ctypes.CDLL("libsecbuf.so.1")  # the one the extension loaded
out = {"uid": os.getuid(), "method": secbuf.lock_method(), "tries": {}}
for name, size, opts in json.loads(sys.argv[2]):
    try:
        with secbuf.SecretBuffer(size, **opts) as buf:
            out["tries"][name] = {"method": buf.stat()["lock_method"]}
    except secbuf.Error as e:
        line = ctypes.create_string_buffer(1024)
        lib.secbuf_last_failure(line, len(line))  # C's words for the same failure
        out["tries"][name] = {"errno": e.errno, "message": str(e), "c": line.value.decode()}
print(json.dumps(out))
"""


def run(build_dir, limit, tries, user=NOBODY):
    """The child's findings, as user (None: as we are)."""
    if user is not None and os.geteuid() != 0:
        pytest.skip("needs root to run a child as nobody")
    env = dict(os.environ, PYTHONPATH=os.path.abspath(build_dir), PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTHONPYCACHEPREFIX", None)
    env.pop("SECBUF_LOCK", None)
    ids = {} if user is None else {"user": user, "group": user, "extra_groups": []}
    p = subprocess.run([sys.executable, "-P", "-c", CHILD, str(limit), json.dumps(tries)],
                       env=env, cwd="/", capture_output=True, text=True, **ids)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    if "unreadable" in out:
        pytest.skip(f"nobody cannot read {out['unreadable']}")
    return out


def test_refusal_by_the_limit_gives_the_kb_needed_as_c_does(build_dir):
    """64 MiB under a 1 MiB limit: the message is the library's, with the
    limit, what is locked already and what more was needed."""
    size = 64 << 20
    out = run(build_dir, 1 << 20, [["big", size, {}]])
    big = out["tries"]["big"]
    assert out["uid"] == NOBODY and "errno" in big, big
    msg = big["message"]
    assert "RLIMIT_MEMLOCK is 1024 kB" in msg, msg
    needed = re.search(r"(\d+) kB more were needed", msg)
    assert needed and int(needed.group(1)) >= size // 1024, msg
    c = re.search(r"(\d+) kB more were needed", big["c"])
    assert c and c.group(1) == needed.group(1), (msg, big["c"])  # C's figure
    assert big["c"] in msg.replace(" (best_effort=True)", ""), (msg, big["c"])
    assert "best_effort=True" in msg and "too large, or over" not in msg, msg


def test_lock_method_under_a_zero_limit_is_what_allocations_get(build_dir):
    """ulimit -l 0: nothing can be locked, so lock_method() is 'none', as
    best_effort buffers are, and a strict one is refused with the cause."""
    out = run(build_dir, 0, [["strict", 32, {}], ["populate", 8192, {"populate": True}],
                             ["best", 32, {"best_effort": True}],
                             ["best-populate", 8192, {"populate": True, "best_effort": True}]])
    tries = out["tries"]
    assert out["method"] == "none", out
    for name in ("strict", "populate"):
        assert "errno" in tries[name] and "RLIMIT_MEMLOCK is 0" in tries[name]["message"], out
    for name in ("best", "best-populate"):
        assert tries[name].get("method") == out["method"], out


def test_lock_method_under_a_limit_with_room_is_what_allocations_get(build_dir):
    out = run(build_dir, 1 << 20, [["strict", 32, {}]])
    assert out["method"] in ("maplockonfault", "mlock2"), out
    assert out["tries"]["strict"].get("method") == out["method"], out


def test_lock_method_of_root_under_a_zero_limit_still_locks(build_dir):
    """CAP_IPC_LOCK locks past RLIMIT_MEMLOCK: the limit alone is not the answer."""
    if os.geteuid() != 0:
        pytest.skip("needs root (CAP_IPC_LOCK)")
    out = run(build_dir, 0, [["strict", 32, {}]], user=None)
    assert out["method"] in ("maplockonfault", "mlock2"), out
    assert out["tries"]["strict"].get("method") == out["method"], out
