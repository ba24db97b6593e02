"""One line about an exception, for error results and start-up failures."""

from __future__ import annotations

import os
import traceback
from typing import Iterable


def describe(e: BaseException, skip: Iterable[str] = ()) -> str:
    """"ValueError: bad input (at hello.py:12 in load; called from ...)", innermost frame
    first; frames in `skip` (directories or files), in this SDK and in frozen modules are
    left out."""
    if isinstance(e, SyntaxError) and e.filename:
        where = f" ({os.path.basename(e.filename)}, line {e.lineno})" if e.lineno else ""
        return f"SyntaxError: {e.msg}{where}"
    if isinstance(e, SystemExit):
        text = f"called sys.exit({e.code!r})"
    else:
        text = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
    skipped = [os.path.dirname(os.path.abspath(__file__)), *map(os.path.abspath, skip)]

    def shown(filename: str) -> bool:
        if filename.startswith("<frozen "):
            return False
        path = os.path.abspath(filename)
        return not any(path == s or path.startswith(s + os.sep) for s in skipped)

    frames = [f for f in traceback.extract_tb(e.__traceback__) if shown(f.filename)]
    if frames:
        text += " (at " + "; called from ".join(
            f"{os.path.basename(f.filename)}:{f.lineno} in {f.name}" for f in frames[-3:][::-1]) + ")"
    return text
