"""Where this interpreter looks for the packages of PREFIX: make install's
directory for the binding (Makefile), one line on stdout.

Its own site directories first, then the user site:
  /usr/local   /usr/local/lib/python3.11/dist-packages   (Debian's python3)
  /usr         /usr/lib/python3/dist-packages            (a package's, DESTDIR)
  ~/.local     ~/.local/lib/python3.11/site-packages     (the user site)
  a venv       its lib/python3.11/site-packages
Anywhere else, the prefix scheme's directory, PREFIX/lib/python3.11/
site-packages, which the interpreter reads only from PYTHONPATH: exit 3
then, after printing it.  Not pip's --prefix: Debian's puts local/ after
any prefix (/usr/local/local/lib/...; its scheme is posix_local).

usage: python3 sitedir.py PREFIX"""

import os
import site
import sys
import sysconfig


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.rsplit("\n", 1)[-1])
    prefix = os.path.normpath(sys.argv[1])
    looks = list(site.getsitepackages())
    if site.ENABLE_USER_SITE:
        looks.append(site.getusersitepackages())
    for d in looks:
        if os.path.normpath(d).startswith(os.path.join(prefix, "lib") + os.sep):
            print(os.path.normpath(d))
            return 0
    scheme = "posix_prefix" if "posix_prefix" in sysconfig.get_scheme_names() else None
    print(sysconfig.get_path("platlib", scheme, vars={"base": prefix, "platbase": prefix}))
    return 3


if __name__ == "__main__":
    sys.exit(main())
