"""The Python side of the python deployer's embedded mode (deployers/python/embedded.cc).

The runtime's own process holds one interpreter; each plugin is imported into it and
called straight from the runtime's worker threads, which take the GIL for the call. No
protocol, no child: a call is a function call plus one JSON parse and one JSON dump.

What this module does for the runtime:
* load() imports a plugin module (again, so a changed file is read again) and captures the
  plugin it registers, without disturbing the plugins already loaded;
* Loaded.execute() runs one call, turning whatever happens into a result's JSON text;
* Loaded.cancel() sets the call's cancel flag and, when the call has not returned after the
  cancel grace, raises CallInterrupted inside it (only Python code notices that: a call
  blocked in C code runs on until it returns);
* prints and `logging` records go to the runtime's log, tagged with the plugin's name, and
  sys.stdin reads nothing: the runtime's own stdin and stdout are not the plugin's.
"""

from __future__ import annotations

import importlib
import importlib.util
import io
import json
import logging
import os
import sys
import threading
from typing import Any, Callable, Dict, Optional

import _plugboard_embedded  # built into the runtime by deployers/python/embedded.cc

from . import Plugin, Request, _errors, error

_sdk = sys.modules[__package__]

LogFn = Callable[[str, str], None]  # (level, text), bound to one plugin by the runtime


class CallInterrupted(BaseException):
    """Raised inside a call that did not stop within the cancel grace of being cancelled."""


_current = threading.local()  # .loaded while a call runs on this thread
_load_lock = threading.Lock()
_fallback_log: Optional[LogFn] = None  # the log of the deployer, for lines outside any call


def _log(level: str, text: str) -> None:
    loaded = getattr(_current, "loaded", None)
    loading = getattr(_current, "loading", None)
    if loaded is not None:
        loaded.log_fn(level, f"[{loaded.plugin.name}] {text}")
    elif loading is not None:  # (log function, label) while load() imports a plugin
        loading[0](level, f"[{loading[1]}] {text}")
    elif _fallback_log is not None:
        _fallback_log(level, text)
    else:
        sys.__stderr__.write(f"[{level}] {text}\n")


class _LineWriter(io.TextIOBase):
    """sys.stdout and sys.stderr: whole lines to the log, per thread."""

    def __init__(self, level: str, what: str):
        super().__init__()
        self._level = level
        self._what = what
        self._partial = threading.local()

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        pending = getattr(self._partial, "text", "") + text
        *lines, rest = pending.split("\n")
        self._partial.text = rest
        for line in lines:
            _log(self._level, f"{self._what}: {line}")
        return len(text)

    def flush(self) -> None:
        rest = getattr(self._partial, "text", "")
        if rest:
            self._partial.text = ""
            _log(self._level, f"{self._what}: {rest}")


class _LogHandler(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        try:
            level = ("debug" if record.levelno <= logging.DEBUG else
                     "info" if record.levelno <= logging.INFO else
                     "warn" if record.levelno <= logging.WARNING else "error")
            _log(level, self.format(record))
        except Exception:  # noqa: BLE001
            self.handleError(record)


def set_up(fallback_log: LogFn) -> None:
    """Called once, when the runtime starts the interpreter."""
    global _fallback_log
    _fallback_log = fallback_log
    _sdk._embedded_mode = True
    # Like process mode's PYTHONDONTWRITEBYTECODE: no __pycache__ beside plugins, and so no
    # stale bytecode when a plugin's file is replaced within the same second at equal size.
    sys.dont_write_bytecode = True
    _sdk._log_sink = lambda level, text, call_id: _log(level, text)
    sys.stdout = _LineWriter("info", "stdout")
    sys.stderr = _LineWriter("info", "stderr")
    sys.stdin = io.StringIO("")
    root = logging.getLogger()
    root.addHandler(_LogHandler(logging.DEBUG))
    if root.level == logging.WARNING:  # the default: let info records through
        root.setLevel(logging.INFO)


def _describe(e: BaseException) -> str:
    return _errors.describe(e, [os.path.dirname(importlib.__file__)])


def _add_path(directory: str) -> None:
    if directory and directory not in sys.path:
        sys.path.insert(0, directory)


def _add_venv(venv: str) -> None:
    import glob
    import site
    for found in sorted(glob.glob(os.path.join(venv, "lib", "python3*", "site-packages"))):
        if found not in sys.path:
            site.addsitedir(found)


def load(module: str, directory: str, path: str, venv: str, log_fn: LogFn, grace: float,
         label: str) -> "Loaded":
    """Imports the plugin (module `module` from `directory`, or the file `path`) afresh and
    returns it ready to call. Raises RuntimeError saying what went wrong."""
    with _load_lock:
        saved = (_sdk._registered, dict(_sdk._pending_handlers))
        _sdk._registered = None
        _sdk._pending_handlers.clear()
        _current.loading = (log_fn, module or os.path.splitext(os.path.basename(path))[0])
        try:
            if venv:
                _add_venv(venv)
            if module:
                _add_path(directory)
                sys.modules.pop(module, None)
                importlib.invalidate_caches()
                importlib.import_module(module)
            else:
                name = os.path.splitext(os.path.basename(path))[0]
                _add_path(os.path.dirname(path))
                spec = importlib.util.spec_from_file_location(name, path)
                if spec is None or spec.loader is None:
                    raise RuntimeError(f"cannot load {path} as a Python module")
                mod = importlib.util.module_from_spec(spec)
                sys.modules[name] = mod
                spec.loader.exec_module(mod)
            plugin = _sdk._registered
        except RuntimeError:
            raise
        except BaseException as e:  # noqa: BLE001 - SystemExit at import included
            raise RuntimeError(f"cannot import {label}: {_describe(e)}") from None
        finally:
            _current.loading = None
            _sdk._registered, pending = saved
            _sdk._pending_handlers.clear()
            _sdk._pending_handlers.update(pending)
        if plugin is None:
            raise RuntimeError(f"{label} registers no plugin (use plugboard_sdk.plugin() or "
                               "plugboard_sdk.register())")
        return Loaded(plugin, log_fn, grace)


# One encoder: json.dumps() with options builds a new one on every call.
_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


_flag_lock = threading.Lock()


class _CancelFlag:
    """What Request needs of a threading.Event (is_set, wait, set), making the Event only
    when a call waits: most calls never do, and an Event costs more than the call."""

    __slots__ = ("_set", "_event")

    def __init__(self):
        self._set = False
        self._event: Optional[threading.Event] = None

    def is_set(self) -> bool:
        return self._set

    def set(self) -> None:
        self._set = True
        event = self._event
        if event is not None:
            event.set()

    def wait(self, timeout: Optional[float] = None) -> bool:
        event = self._event
        if event is None:
            with _flag_lock:  # one Event, however many threads wait
                event = self._event
                if event is None:
                    event = threading.Event()
                    self._event = event
            if self._set:  # set() may have run before the event existed
                event.set()
        return event.wait(timeout)


class _Call:
    __slots__ = ("cancel", "thread", "interrupted", "done")

    def __init__(self):
        self.cancel = _CancelFlag()
        self.thread = threading.get_ident()
        self.interrupted = False
        self.done = False


class Loaded:
    """One plugin in the interpreter, as the runtime's handle holds it."""

    def __init__(self, plugin: Plugin, log_fn: LogFn, grace: float):
        self.plugin = plugin
        self.log_fn = log_fn
        self.grace = grace
        self.calls: Dict[int, _Call] = {}
        self.lock = threading.Lock()
        self.serial = threading.Lock() if plugin.serial else None

    def manifest(self) -> str:
        return json.dumps(self.plugin.manifest(), ensure_ascii=False, separators=(",", ":"))

    def execute(self, call_id: int, text: str) -> str:
        call = _Call()
        with self.lock:
            if call_id in self.calls:
                return self._error(f"call {call_id} is already in flight")
            self.calls[call_id] = call
        outer = getattr(_current, "loaded", None)
        _current.loaded = self
        try:
            raw = json.loads(text)
            if self.serial is not None:
                with self.serial:
                    outcome = self.plugin.call(Request(raw, call.cancel, call_id))
            else:
                outcome = self.plugin.call(Request(raw, call.cancel, call_id))
            if call.interrupted:
                return self._error(f"did not stop within {self.grace:g}s of being cancelled, "
                                   "and was interrupted")
            return _encode(outcome.to_json())
        except (TypeError, ValueError) as e:
            return self._error(f"returned a result that is not JSON: {e}")
        except BaseException as e:  # noqa: BLE001 - CallInterrupted between handler and here
            if call.interrupted:
                return self._error(f"did not stop within {self.grace:g}s of being cancelled, "
                                   "and was interrupted")
            return self._error(f"failed: {type(e).__name__}: {e}")
        finally:
            with self.lock:
                call.done = True
                self.calls.pop(call_id, None)
            _current.loaded = outer
            if call.interrupted:  # the async exception may not have been raised yet
                _plugboard_embedded.interrupt(call.thread, None)

    def _error(self, what: str) -> str:
        return json.dumps(error(f"plugin '{self.plugin.name}' {what}").to_json(),
                          ensure_ascii=False, separators=(",", ":"))

    def cancel(self, call_id: int) -> None:
        with self.lock:
            call = self.calls.get(call_id)
        if call is None or call.cancel.is_set():
            return
        call.cancel.set()
        if self.grace > 0:
            timer = threading.Timer(self.grace, self._interrupt, (call,))
            timer.daemon = True
            timer.start()

    def _interrupt(self, call: _Call) -> None:
        with self.lock:
            if call.done:
                return
            call.interrupted = True
            _plugboard_embedded.interrupt(call.thread, CallInterrupted)
        self.log_fn("warn", f"[{self.plugin.name}] a cancelled call did not stop within "
                            f"{self.grace:g}s; CallInterrupted was raised in it")

    def close(self) -> None:
        with self.lock:
            calls = list(self.calls.values())
        for call in calls:
            call.cancel.set()
