"""Fail when an installed distribution ships start-up code (a .pth with code, or sitecustomize).

Some litellm releases (1.82.7, 1.82.8, 1.107.*) were malicious uploads that ran code at interpreter
start through a .pth file. This guard lists every .pth / sitecustomize / usercustomize file that an
installed distribution declares in its RECORD and fails unless it is on the allow-list below.
Files no distribution owns (written by the machine's image) are out of scope.
"""

from __future__ import annotations

import sys
from importlib import metadata

# setuptools' distutils shim and pip's editable-install finders are the expected start-up hooks.
ALLOWED_PREFIXES = ("distutils-precedence.pth", "__editable__.", "_virtualenv.pth")


def main() -> int:
    bad = []
    for dist in metadata.distributions():
        for f in dist.files or []:
            name = f.name
            # Only top-level files of site-packages run at start-up; package files do not.
            if "/" in f.as_posix() or not (name.endswith(".pth") or name in ("sitecustomize.py", "usercustomize.py")):
                continue
            if name.startswith(ALLOWED_PREFIXES):
                continue
            bad.append(f"{dist.metadata['Name']} {dist.version}: {f}")
    for line in bad:
        print(f"unexpected start-up hook: {line}", file=sys.stderr)
    print(f"site-packages guard: {len(bad)} unexpected start-up hook(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
