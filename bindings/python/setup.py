"""The C extension of pip install ./bindings/python (pyproject.toml):
secbuf/_secbuf.c compiled and linked with the installed library's flags,
as pkg-config secbuf gives them after make install.

The loader must find libsecbuf.so.1 with no variable set.  A library in
one of its directories (/usr/lib, or /usr/local/lib once make install
has run ldconfig) needs nothing; one anywhere else (make install
PREFIX=$HOME/.local) gets a run path to pkg-config's libdir in the
extension.  SECBUF_RPATH=0 leaves it out (a package that installs the
library where the loader looks; the tests' control).

Nothing is written into the source tree: the build's and the metadata's
directories are temporary, and every build compiles afresh, since the
flags depend on which secbuf.pc pkg-config finds, which setuptools'
timestamps cannot see."""

import atexit
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))

# The same warnings and hardening as the Makefile's build (mk/common.mk),
# less -Werror: another compiler's new warning must not stop an install.
CFLAGS = ["-std=gnu11", "-Wall", "-Wextra", "-O2", "-D_FORTIFY_SOURCE=2",
          "-fstack-protector-strong", "-fvisibility=hidden", "-fno-strict-aliasing"]
LDFLAGS = ["-Wl,-z,relro,-z,now", "-pthread"]


def pkg_config(*args):
    """pkg-config's answer for secbuf, or the reason it has none and the fix
    (at once: pip shows it under "Getting requirements to build wheel")."""
    exe = os.environ.get("PKG_CONFIG", "pkg-config")
    if not shutil.which(exe):
        sys.exit(
            f"error: secbuf: {exe} not found: the extension is built with the installed library's "
            "flags from pkg-config secbuf (apt-get install pkg-config)")
    out = subprocess.run([exe, *args, "secbuf"], capture_output=True, text=True)
    if out.returncode != 0:
        path = os.environ.get("PKG_CONFIG_PATH", "")
        sys.exit(
            "error: secbuf: pkg-config cannot find secbuf.pc"
            f"{' (PKG_CONFIG_PATH=' + path + ')' if path else ''}: install the library first "
            "with make install at the top of the secbuf tree (as root for /usr/local), or, "
            "for make install PREFIX=DIR, set PKG_CONFIG_PATH=DIR/lib/pkgconfig")
    return out.stdout.strip()


def ld_so_conf(path):
    """The directories /etc/ld.so.conf names, its includes followed."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return
    for line in lines:
        line = line.split("#", 1)[0].strip()
        if line.startswith("include"):
            for pattern in line.split()[1:]:
                pattern = os.path.join(os.path.dirname(path), pattern)
                for conf in sorted(glob.glob(pattern)):
                    yield from ld_so_conf(conf)
        elif line.startswith("/"):
            yield line


def system_libdir(libdir):
    """Whether the loader finds libdir's libraries without a run path: its
    default directories and those of ld.so.conf (after ldconfig)."""
    multiarch = sysconfig.get_config_var("MULTIARCH") or ""
    dirs = ["/lib", "/usr/lib", "/lib64", "/usr/lib64"]
    if multiarch:
        dirs += [f"/lib/{multiarch}", f"/usr/lib/{multiarch}"]
    dirs += list(ld_so_conf("/etc/ld.so.conf"))
    return os.path.realpath(libdir) in {os.path.realpath(d) for d in dirs}


def flags():
    """The compiler's and the linker's flags for the extension, from
    pkg-config secbuf, with a run path where the loader would not look."""
    cflags = shlex.split(pkg_config("--cflags"))
    libs = shlex.split(pkg_config("--libs"))
    # pkgconf puts PKG_CONFIG_SYSROOT_DIR (a DESTDIR) before libdir; the
    # run path is where the library will be, without it.
    libdir = pkg_config("--variable=libdir")
    sysroot = os.environ.get("PKG_CONFIG_SYSROOT_DIR", "").rstrip("/")
    if sysroot and libdir.startswith(sysroot + "/"):
        libdir = libdir[len(sysroot):]
    rpath = []
    if os.environ.get("SECBUF_RPATH", "1") != "0" and libdir and not system_libdir(libdir):
        rpath = [f"-Wl,-rpath,{libdir}"]
    return CFLAGS + cflags, LDFLAGS + rpath + libs


class BuildExt(build_ext):
    def finalize_options(self):
        super().finalize_options()
        self.force = True  # see the docstring: the flags may have changed


def version():
    """The tree's (mk/common.mk), else the installed library's."""
    try:
        with open(os.path.join(TOP, "mk", "common.mk"), encoding="utf-8") as f:
            found = re.search(r"^VERSION\s*:?=\s*(\S+)", f.read(), re.M)
        if found:
            return found.group(1)
    except OSError:
        pass
    return pkg_config("--modversion")


compile_args, link_args = flags()
scratch = tempfile.mkdtemp(prefix="secbuf-python-build.")
atexit.register(shutil.rmtree, scratch, ignore_errors=True)

setup(
    version=version(),
    # Only the package (never tests/ nor bench/), and the extension's C
    # source built, never installed.
    packages=["secbuf"],
    include_package_data=False,
    ext_modules=[Extension("secbuf._secbuf", ["secbuf/_secbuf.c"],
                           extra_compile_args=compile_args, extra_link_args=link_args)],
    cmdclass={"build_ext": BuildExt},
    options={"build": {"build_base": os.path.join(scratch, "build")},
             "egg_info": {"egg_base": scratch}},
)
