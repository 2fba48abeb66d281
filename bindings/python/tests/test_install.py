"""Installing the binding as Python users do, each way README.md's "Python"
gives, into temporary directories only: make install to a prefix (the
extension's run path), pip's --prefix, a venv (with the system's packages,
and a plain one from a wheel), the user site, root's system site as Debian's
pip places it, and make install with DESTDIR where /usr/bin/python3 looks.

Each install is then imported by a fresh interpreter whose environment
names no library directory (no LD_LIBRARY_PATH) and no package directory
unless the case needs one, which makes a SecretBuffer(32) and reads back
what it wrote.  The controls show that each check can fail: without the
run path the import fails, libsecbuf.so.1 not found; the interpreter
outside a venv does not see the venv's install; the user site's install
is invisible with -s; Debian's pip refuses a plain install (PEP 668)."""

import glob
import os
import shutil
import subprocess
import sys
import sysconfig

import pytest

PY = sys.executable  # make check's PYTHON: Debian's /usr/bin/python3
PYVER = f"python{sys.version_info[0]}.{sys.version_info[1]}"

# A fresh interpreter's round trip; what it imported, from where.
PROBE = r"""
import secbuf
data = bytes(range(32))
with secbuf.SecretBuffer(32) as buf:
    view = memoryview(buf)
    view[:] = data
    same = view == data
    view.release()
lib = [l.split()[-1] for l in open("/proc/self/maps") if "/libsecbuf.so" in l]
print(secbuf.__file__)
print(lib[0] if lib else "-")
print("round trip" if same else "differs")
"""


@pytest.fixture(scope="module", autouse=True)
def not_under_asan():
    with open("/proc/self/maps") as f:
        if "libasan" in f.read():
            pytest.skip("under ASan: each install builds an extension of its own, uninstrumented "
                        "(make check runs them)")


@pytest.fixture(scope="module")
def top():
    top = os.environ.get("SECBUF_TOP")
    if not top:
        pytest.fail("SECBUF_TOP is not set: run the tests with make check")
    return top


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    return tmp_path_factory.mktemp("install")


def clean_env(**extra):
    """The caller's environment without what would point Python, the loader,
    pkg-config or pip elsewhere (make check's PYTHONPATH names the tree's
    build; check-asan preloads ASan), plus extra."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTHON", "LD_", "PKG_CONFIG", "PIP_", "ASAN_", "UBSAN_"))}
    env.update(extra)
    return env


def run(cmd, env, cwd=None, ok=True):
    out = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    if ok and out.returncode != 0:
        pytest.fail(f"{' '.join(map(str, cmd))}: exit {out.returncode}\n{out.stdout[-3000:]}")
    return out


def probe(python, env, cwd):
    """A fresh interpreter (-P: not the current directory first) imports
    secbuf and round-trips 32 bytes: (module file, libsecbuf mapped,
    verdict), or the failure's last line."""
    out = run([python, "-P", "-c", PROBE], env, cwd=cwd, ok=False)
    if out.returncode != 0:
        return None, out.stdout.strip().splitlines()[-1], "failed"
    return tuple(out.stdout.split("\n")[:3])


def runpath(so):
    dyn = subprocess.run(["readelf", "-dW", so], check=True, capture_output=True,
                         text=True).stdout
    return [l.split("[", 1)[1].rstrip("]") for l in dyn.splitlines() if "PATH)" in l]


def extension(site):
    found = glob.glob(os.path.join(site, "secbuf", "_secbuf*.so"))
    assert len(found) == 1, (site, found)
    return found[0]


def pip(python, *args, env, ok=True):
    """pip install of the binding's directory, offline (--no-build-isolation:
    Debian's setuptools and wheel, not PyPI's)."""
    return run([python, "-m", "pip", "install", "--no-build-isolation", *args,
                os.path.join(os.environ["SECBUF_TOP"], "bindings", "python")], env, ok=ok)


@pytest.fixture(scope="module")
def prefix(top, work):
    """make install PREFIX=$HOME/.local, HOME a temporary one: the library,
    secbuf.pc, and the binding, in the user site."""
    home = work / "uhome"
    p = home / ".local"
    run(["make", "-s", "-C", top, "install", f"PREFIX={p}", f"PYTHON={PY}"],
        clean_env(HOME=str(home)))
    assert os.path.exists(p / "lib" / "pkgconfig" / "secbuf.pc")
    return p


def test_make_install_home_local_runs_with_its_run_path(prefix, work):
    """No variable at all: the user site finds the package, the extension's
    run path the library."""
    p = prefix
    site = str(p / "lib" / PYVER / "site-packages")
    assert runpath(extension(site)) == [f"{p}/lib"]
    got = probe(PY, clean_env(HOME=str(p.parent)), work)
    assert got == (f"{site}/secbuf/__init__.py", f"{p}/lib/libsecbuf.so.1", "round trip"), got


def test_pip_prefix_run_path_and_control_without_it(prefix, work):
    """pip install --prefix against the prefix's secbuf.pc: the run path
    makes the import work with no LD_LIBRARY_PATH; built without it
    (SECBUF_RPATH=0), the same import fails."""
    p = prefix
    pc = str(p / "lib" / "pkgconfig")
    env = clean_env(PKG_CONFIG_PATH=pc, HOME=str(work / "nohome"))
    pip(PY, f"--prefix={work}/pyprefix", env=env)
    # Where Debian's pip puts a --prefix: its prefix scheme, posix_local
    # (PREFIX/local/lib/python3.11/dist-packages).
    site = sysconfig.get_path("platlib", sysconfig.get_preferred_scheme("prefix"),
                              vars={"base": f"{work}/pyprefix", "platbase": f"{work}/pyprefix"})
    assert runpath(extension(site)) == [f"{p}/lib"]
    got = probe(PY, clean_env(PYTHONPATH=site), work)
    assert got == (f"{site}/secbuf/__init__.py", f"{p}/lib/libsecbuf.so.1", "round trip"), got

    pip(PY, f"--target={work}/norpath", env=dict(env, SECBUF_RPATH="0"))
    assert runpath(extension(f"{work}/norpath")) == []
    got = probe(PY, clean_env(PYTHONPATH=f"{work}/norpath"), work)
    assert got[1:] == ("ImportError: libsecbuf.so.1: cannot open shared object file: "
                       "No such file or directory", "failed"), got


def test_pip_without_secbuf_pc_says_make_install(work):
    empty = work / "no-pc"
    empty.mkdir()
    out = pip(PY, f"--target={work}/never",
              env=clean_env(PKG_CONFIG_PATH=str(empty), PKG_CONFIG_LIBDIR=str(empty)), ok=False)
    assert out.returncode != 0
    assert ("secbuf: pkg-config cannot find secbuf.pc" in out.stdout
            and "make install" in out.stdout and "PKG_CONFIG_PATH=DIR/lib/pkgconfig" in out.stdout), \
        out.stdout[-2000:]
    out = pip(PY, f"--target={work}/never", env=clean_env(PKG_CONFIG="/nonexistent/pkg-config"),
              ok=False)
    assert out.returncode != 0
    assert "secbuf: /nonexistent/pkg-config not found" in out.stdout, out.stdout[-2000:]
    assert not os.path.exists(f"{work}/never/secbuf")


def test_venv_with_system_site_packages(prefix, work):
    """python3 -m venv --system-site-packages (Debian's setuptools and wheel
    for --no-build-isolation): the venv's pip installs into the venv, whose
    python imports it; the system's python does not see it (control)."""
    p = prefix
    venv = work / "venv"
    run([PY, "-m", "venv", "--system-site-packages", str(venv)], clean_env())
    python = str(venv / "bin" / "python")
    pip(python, env=clean_env(PKG_CONFIG_PATH=f"{p}/lib/pkgconfig", HOME=str(work / "nohome")))
    site = f"{venv}/lib/{PYVER}/site-packages"
    got = probe(python, clean_env(), work)
    assert got == (f"{site}/secbuf/__init__.py", f"{p}/lib/libsecbuf.so.1", "round trip"), got
    got = probe(PY, clean_env(), work)
    assert got[1:] == ("ModuleNotFoundError: No module named 'secbuf'", "failed"), got


def test_plain_venv_from_a_wheel(prefix, work):
    """A plain venv has no wheel package, so its pip cannot build offline
    (control: bdist_wheel); the wheel Debian's python3 builds installs."""
    p = prefix
    venv = work / "plain"
    run([PY, "-m", "venv", str(venv)], clean_env())
    python = str(venv / "bin" / "python")
    env = clean_env(PKG_CONFIG_PATH=f"{p}/lib/pkgconfig", HOME=str(work / "nohome"))
    out = pip(python, env=env, ok=False)
    assert out.returncode != 0 and "invalid command 'bdist_wheel'" in out.stdout, out.stdout[-2000:]
    run([PY, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "-w", f"{work}/wheels",
         f"{os.environ['SECBUF_TOP']}/bindings/python"], env)
    wheel, = glob.glob(f"{work}/wheels/secbuf-*.whl")
    run([python, "-m", "pip", "install", wheel], env)
    got = probe(python, clean_env(), work)
    site = f"{venv}/lib/{PYVER}/site-packages"
    assert got == (f"{site}/secbuf/__init__.py", f"{p}/lib/libsecbuf.so.1", "round trip"), got


def test_user_site_needs_break_system_packages(prefix, work):
    """pip install --user with Debian's pip: refused (PEP 668, EXTERNALLY-
    MANAGED) unless --break-system-packages, which then writes only under
    ~/.local; found through the user site, and not with -s (control); pip
    uninstall, with the same flag, removes it."""
    p = prefix
    home = work / "home"
    env = clean_env(PKG_CONFIG_PATH=f"{p}/lib/pkgconfig", HOME=str(home))
    out = pip(PY, "--user", env=env, ok=False)
    assert out.returncode != 0 and "externally-managed-environment" in out.stdout, out.stdout[-2000:]
    assert not home.exists() or not list(home.rglob("secbuf"))
    pip(PY, "--user", "--break-system-packages", env=env)
    site = f"{home}/.local/lib/{PYVER}/site-packages"
    elsewhere = [str(f) for f in home.rglob("secbuf*") if not str(f).startswith(f"{home}/.local/")]
    assert os.path.exists(f"{site}/secbuf") and not elsewhere, elsewhere
    got = probe(PY, clean_env(HOME=str(home)), work)
    assert got == (f"{site}/secbuf/__init__.py", f"{p}/lib/libsecbuf.so.1", "round trip"), got
    out = run([PY, "-s", "-P", "-c", "import secbuf"], clean_env(HOME=str(home)), cwd=work, ok=False)
    assert "No module named 'secbuf'" in out.stdout, out.stdout
    run([PY, "-m", "pip", "uninstall", "-y", "--break-system-packages", "secbuf"], env)
    assert not os.path.exists(f"{site}/secbuf")


def test_system_install_as_debian_pip_places_it(prefix, work):
    """Root's pip install --break-system-packages goes to /usr/local/lib/
    python3.11/dist-packages, where /usr/bin/python3 looks and dpkg never
    writes; checked under --root, so nothing outside the temporary tree."""
    p = prefix
    root = work / "root"
    env = clean_env(PKG_CONFIG_PATH=f"{p}/lib/pkgconfig", HOME=str(work / "nohome"))
    pip(PY, "--break-system-packages", f"--root={root}", env=env)
    site = f"/usr/local/lib/{PYVER}/dist-packages"
    assert site in run([PY, "-c", "import sys; print(sys.path)"], clean_env()).stdout
    got = probe(PY, clean_env(PYTHONPATH=f"{root}{site}"), work)
    assert got == (f"{root}{site}/secbuf/__init__.py", f"{p}/lib/libsecbuf.so.1", "round trip"), got


@pytest.mark.parametrize("prefix_", ["/usr/local", "/usr"])
def test_make_install_destdir_where_python_looks(top, work, prefix_):
    """make install DESTDIR=... PREFIX=...: the binding lands where
    /usr/bin/python3 looks for that prefix (/usr/local: dist-packages of
    python3.11; /usr: python3/dist-packages, a package's), built against the
    library in DESTDIR, with no run path (a system directory); make uninstall
    leaves nothing.  PYTHON= installs no binding (control)."""
    dest = work / f"dest{prefix_.replace('/', '-')}"
    make = ["make", "-s", "-C", top, f"DESTDIR={dest}", f"PREFIX={prefix_}"]
    run(make + ["install", f"PYTHON={PY}"], clean_env(HOME=str(work / "nohome")))
    site = {"/usr/local": f"/usr/local/lib/{PYVER}/dist-packages",
            "/usr": "/usr/lib/python3/dist-packages"}[prefix_]
    assert site in run([PY, "-c", "import sys; print(sys.path)"], clean_env()).stdout
    assert runpath(extension(f"{dest}{site}")) == []
    got = probe(PY, clean_env(PYTHONPATH=f"{dest}{site}", LD_LIBRARY_PATH=f"{dest}{prefix_}/lib"),
                work)
    assert got == (f"{dest}{site}/secbuf/__init__.py", f"{dest}{prefix_}/lib/libsecbuf.so.1",
                   "round trip"), got
    run(make + ["uninstall", f"PYTHON={PY}"], clean_env())
    assert not dest.exists() or not list(dest.rglob("*")), list(dest.rglob("*"))

    if prefix_ == "/usr/local":
        run(make + ["install", "PYTHON="], clean_env())
        assert os.path.exists(f"{dest}{prefix_}/lib/libsecbuf.so.1")
        assert not list(dest.rglob("*python*")), list(dest.rglob("*python*"))
        run(make + ["uninstall", "PYTHON="], clean_env())
    shutil.rmtree(dest, ignore_errors=True)
