"""make install: the library into a DESTDIR, then the binding built
against it as pkg-config secbuf names it, imported from there."""

import os
import subprocess
import sys

import pytest


def test_installed_binding_links_the_installed_library(tmp_path):
    top = os.environ.get("SECBUF_TOP")
    if not top:
        pytest.fail("SECBUF_TOP is not set: run the tests with make check")
    dest, prefix = str(tmp_path), "/usr/local"
    env = dict(os.environ, PKG_CONFIG_PATH=f"{dest}{prefix}/lib/pkgconfig",
               PKG_CONFIG_SYSROOT_DIR=dest, PKG_CONFIG_LIBDIR="")
    make = ["make", "-s", f"DESTDIR={dest}", f"PREFIX={prefix}"]
    subprocess.run(make + ["-C", f"{top}/libsecbuf", "install"], check=True, env=env,
                   stdout=subprocess.DEVNULL)
    subprocess.run(make + ["-C", f"{top}/bindings/python", "-B", "install"], check=True,
                   env=env, stdout=subprocess.DEVNULL)
    site = f"{dest}{prefix}/lib/python{sys.version_info[0]}.{sys.version_info[1]}/dist-packages"
    probe = ("import secbuf; b = secbuf.SecretBuffer(8); memoryview(b)[0] = 1; b.close();"
             "print(secbuf.__file__);"
             "print([l.split()[-1] for l in open('/proc/self/maps') if 'libsecbuf' in l][0])")
    run_env = dict(os.environ, PYTHONPATH=site, LD_LIBRARY_PATH=f"{dest}{prefix}/lib")
    out = subprocess.run([sys.executable, "-P", "-c", probe], check=True, env=run_env,
                         capture_output=True, text=True).stdout.split()
    assert out[0].startswith(site), out
    assert out[1].startswith(f"{dest}{prefix}/lib/libsecbuf.so"), out
    subprocess.run(make + ["-C", f"{top}/bindings/python", "uninstall"], check=True,
                   stdout=subprocess.DEVNULL)
    assert not os.path.exists(f"{site}/secbuf")
