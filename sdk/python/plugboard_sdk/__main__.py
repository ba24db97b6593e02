"""python -m plugboard_sdk (--module NAME | --path FILE.py): how the python deployer starts
a plugin in process mode.

It moves stdout out of the plugin's way before the plugin's module is imported (so even a
print at import cannot reach the runtime as a protocol frame), runs the module as
__main__ (its own `if __name__ == "__main__": plugboard_sdk.run()` serves), and serves the
registered plugin itself when the module does not. A module that fails to import exits 1
with one line saying why, which the runtime attaches to the step's error.
"""

import importlib
import os
import runpy
import sys

from . import _errors, _host, run


def main(argv) -> None:
    if len(argv) != 2 or argv[0] not in ("--module", "--path") or not argv[1]:
        print("usage: python -m plugboard_sdk (--module NAME | --path FILE.py)", file=sys.stderr)
        sys.exit(3)
    kind, target = argv
    label = f"'{target}'" if kind == "--module" else target
    try:
        _host.claim_stdout()
    except OSError as e:
        print(f"plugboard_sdk: cannot set up stdout: {e}", file=sys.stderr)
        sys.exit(2)
    try:
        if kind == "--module":
            runpy.run_module(target, run_name="__main__", alter_sys=True)
        else:
            sys.path.insert(0, os.path.dirname(os.path.abspath(target)))
            sys.argv = [target]
            runpy.run_path(target, run_name="__main__")
    except BaseException as e:  # noqa: BLE001 - SystemExit at import too
        importlib_dir = os.path.dirname(importlib.__file__)
        print(f"plugboard_sdk: cannot import {label}: "
              f"{_errors.describe(e, [importlib_dir, runpy.__file__])}", file=sys.stderr)
        sys.exit(1)
    run()


main(sys.argv[1:])
