"""The `tessera` command of a pip-installed package: runs the bundled CLI (tessera/bin/tessera)."""
import os
import sys


def main() -> None:
    exe = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "tessera")
    if not os.path.exists(exe):
        sys.exit(f"error: the tessera CLI is not part of this installation ({exe} is missing); "
                 "in a build tree use build/tools/tessera")
    os.execv(exe, [exe, *sys.argv[1:]])
