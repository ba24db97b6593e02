"""plugboard_sdk: write a plugboard executor plugin in Python (standard library only).

A plugin is a module that declares itself once and serves protocol v1
(docs/protocol.md) on its stdin and stdout when run as ``python3 -m mymodule``::

    import plugboard_sdk as pb

    @pb.plugin(name="pyhello", version="1.0.0", provides=["template.execute"])
    def greet(request):
        name = (request.args or {}).get("name", "world")
        request.log.info("greeting " + name)
        return pb.succeeded({"greeting": f"Hello, {name}!"})

    if __name__ == "__main__":
        pb.run()

See docs/python-plugins.md for the whole API. Mirrors the C++ SDK
(sdk/include/plugboard/sdk.hpp): the same manifest members, request accessors and result
helpers.
"""

from __future__ import annotations

import datetime as _datetime
import json as _json
import re as _re
import threading as _threading
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Union

__all__ = [
    "ABI_MAJOR",
    "PROTOCOL_VERSION",
    "Logger",
    "Plugin",
    "Request",
    "Result",
    "error",
    "failed",
    "handler",
    "not_handled",
    "plugin",
    "register",
    "registered",
    "run",
    "running",
    "pending",
    "succeeded",
]

ABI_MAJOR = 1          # PLUGBOARD_ABI_MAJOR of sdk/include/plugboard/abi.h
PROTOCOL_VERSION = 1   # the out-of-process protocol this SDK speaks

PHASES = ("Succeeded", "Failed", "Error", "Running", "Pending", "NotHandled")

_NAME_RE = _re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_VERSION_RE = _re.compile(
    r"(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)"
    r"(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?")


def _json_text(value: Any) -> str:
    """Compact JSON text of `value`, as the C++ SDK's Json::dump() writes it."""
    return _json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


# --------------------------------------------------------------------------- results


class Result:
    """The outcome of one call. Build it with succeeded(), failed(), error(), running()
    or not_handled()."""

    __slots__ = ("phase", "message", "outputs", "requeue_ms")

    def __init__(self, phase: str, message: str = "", outputs: Optional[dict] = None,
                 requeue_ms: Optional[int] = None):
        if phase not in PHASES:
            raise ValueError(f"phase must be one of {', '.join(PHASES)}, not {phase!r}")
        self.phase = phase
        self.message = "" if message is None else str(message)
        self.outputs = outputs
        self.requeue_ms = requeue_ms

    def with_outputs(self, outputs: dict) -> "Result":
        """Replaces the whole outputs object (for outputs beyond "parameters")."""
        self.outputs = outputs
        return self

    def with_requeue(self, seconds: Union[float, _datetime.timedelta]) -> "Result":
        """Asks to be called again after `seconds`; the runtime honours it on Running and Pending only."""
        self.requeue_ms = _to_ms(seconds)
        return self

    def to_json(self) -> dict:
        """The result object as the runtime receives it."""
        out: Dict[str, Any] = {"phase": self.phase}
        if self.message:
            out["message"] = self.message
        if isinstance(self.outputs, dict) and self.outputs:
            out["outputs"] = self.outputs
        if self.requeue_ms is not None:
            out["requeue_ms"] = int(self.requeue_ms)
        return out

    def __repr__(self) -> str:
        return f"Result({self.to_json()!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Result) and self.to_json() == other.to_json()


def _to_ms(seconds: Union[float, int, _datetime.timedelta]) -> int:
    if isinstance(seconds, _datetime.timedelta):
        seconds = seconds.total_seconds()
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        raise TypeError(f"requeue must be a number of seconds, not {type(seconds).__name__}")
    if seconds != seconds or seconds < 0:
        raise ValueError(f"requeue must be a non-negative number of seconds, not {seconds!r}")
    return int(round(seconds * 1000))


def succeeded(parameters: Optional[Mapping[str, Any]] = None, message: str = "") -> Result:
    """Terminal success. `parameters` maps output names to values; values that are not
    strings are stored as their JSON text, since workflow parameters are strings."""
    params: Dict[str, str] = {}
    if parameters:
        if not isinstance(parameters, Mapping):
            raise TypeError(f"parameters must be a dict, not {type(parameters).__name__}")
        for name, value in parameters.items():
            params[str(name)] = value if isinstance(value, str) else _json_text(value)
    return Result("Succeeded", message, {"parameters": params})


def failed(message: str) -> Result:
    """The step's own logic failed (bad input, a check that did not pass)."""
    return Result("Failed", message)


def error(message: str) -> Result:
    """The plugin or its environment broke; not the step's business logic."""
    return Result("Error", message)


def running(message: str = "", requeue: Union[float, _datetime.timedelta, None] = None) -> Result:
    """Still in progress: the runtime calls again after `requeue` seconds (or its poll
    interval when None)."""
    return Result("Running", message, None, None if requeue is None else _to_ms(requeue))


def pending(message: str = "", requeue: Union[float, _datetime.timedelta, None] = None) -> Result:
    """Accepted but not started yet: called again after `requeue` seconds (or the poll
    interval when None), as for running()."""
    return Result("Pending", message, None, None if requeue is None else _to_ms(requeue))


def not_handled() -> Result:
    """This plugin declines the call; only meaningful while being polled."""
    return Result("NotHandled")


# --------------------------------------------------------------------------- requests

# The sink of log frames, set by run(): fn(level, message, call_id_or_None).
_log_sink: Optional[Callable[[str, str, Optional[int]], None]] = None


class Logger:
    """Sends log lines to the runtime, which tags them with the plugin's name. Thread-safe.
    Outside run() (tests, interactive use) lines go to stderr."""

    __slots__ = ("_call_id",)

    def __init__(self, call_id: Optional[int] = None):
        self._call_id = call_id

    def _write(self, level: str, message: Any) -> None:
        text = message if isinstance(message, str) else str(message)
        sink = _log_sink
        if sink is not None:
            sink(level, text, self._call_id)
        else:
            import sys
            print(f"[{level}] {text}", file=sys.stderr)

    def debug(self, message: Any) -> None:
        self._write("debug", message)

    def info(self, message: Any) -> None:
        self._write("info", message)

    def warn(self, message: Any) -> None:
        self._write("warn", message)

    warning = warn

    def error(self, message: Any) -> None:
        self._write("error", message)


class Request:
    """One call as the runtime sends it. `raw` is the whole request object."""

    __slots__ = ("raw", "_cancel", "log", "id")

    def __init__(self, raw: Optional[dict] = None, cancel: Optional[_threading.Event] = None,
                 call_id: Optional[int] = None):
        self.raw: dict = raw if isinstance(raw, dict) else {}
        self._cancel = cancel if cancel is not None else _threading.Event()
        self.id = call_id
        self.log = Logger(call_id)

    @property
    def rpc(self) -> str:
        """The RPC called, e.g. "template.execute"."""
        value = self.raw.get("rpc")
        return value if isinstance(value, str) else "template.execute"

    @property
    def key(self) -> str:
        """The plugin key as the template wrote it (e.g. "hello-executor-plugin")."""
        value = self.raw.get("key")
        return value if isinstance(value, str) else ""

    @property
    def via(self) -> str:
        """"name" when the template named this plugin, "poll" when it is being polled,
        "direct" for `plugboard call`."""
        value = self.raw.get("via")
        return value if isinstance(value, str) else "name"

    @property
    def polled(self) -> bool:
        return self.via == "poll"

    @property
    def args(self) -> Any:
        """The template's arguments for this plugin (any JSON value; None when absent)."""
        return self.raw.get("args")

    @property
    def workflow(self) -> Any:
        return self.raw.get("workflow")

    @property
    def template(self) -> Any:
        return self.raw.get("template")

    @property
    def cancelled(self) -> bool:
        """Whether the runtime asked this call to stop (deadline, Ctrl-C)."""
        return self._cancel.is_set()

    def wait_cancelled(self, seconds: Optional[float] = None) -> bool:
        """Sleeps up to `seconds` (forever when None); returns True as soon as the call is
        cancelled, False when the time ran out."""
        return self._cancel.wait(seconds)

    def __repr__(self) -> str:
        return f"Request({self.raw!r})"


# --------------------------------------------------------------------------- plugins

Handler = Callable[[Request], Any]


class Plugin:
    """A plugin's manifest and handlers. Usually made by plugin() or register()."""

    def __init__(self, name: str, version: str, provides: Optional[Iterable[str]] = None, *,
                 description: str = "", concurrency: str = "parallel",
                 aliases: Optional[Iterable[str]] = None,
                 schemas: Optional[Mapping[str, Any]] = None,
                 input_schemas: Optional[Mapping[str, Any]] = None,
                 accepts_polled_calls: bool = False,
                 handler: Optional[Handler] = None,
                 handlers: Optional[Mapping[str, Handler]] = None):
        if not isinstance(name, str) or not _NAME_RE.fullmatch(name):
            raise ValueError(f"plugin name {name!r} must be letters, digits, '.', '_' or '-', "
                             "starting with a letter or digit (at most 128 characters)")
        if not isinstance(version, str) or not _VERSION_RE.fullmatch(version):
            raise ValueError(f"plugin version {version!r} must be MAJOR.MINOR.PATCH[-prerelease]")
        if concurrency not in ("parallel", "serial"):
            raise ValueError(f"concurrency must be 'parallel' or 'serial', not {concurrency!r}")
        self.name = name
        self.version = version
        self.description = description or ""
        self.concurrency = concurrency
        self.aliases: List[str] = _strings(aliases, "aliases")
        self.accepts_polled_calls = bool(accepts_polled_calls)
        self.default_handler: Optional[Handler] = handler
        self.handlers: Dict[str, Handler] = dict(handlers or {})
        self._explicit_provides = provides is not None
        self._provides: List[str] = _strings(provides, "provides")
        self.schemas: Dict[str, Any] = {}
        for rpc, schema in (schemas or {}).items():
            self.schemas[rpc] = dict(schema)
        for rpc, schema in (input_schemas or {}).items():
            self.schemas.setdefault(rpc, {})["input"] = schema
        for h in [handler, *self.handlers.values()]:
            if h is not None and not callable(h):
                raise TypeError(f"handler {h!r} is not callable")

    @property
    def provides(self) -> List[str]:
        """The RPCs served: as declared, else the RPCs with a handler. Empty: a legacy
        plugin, polled for every RPC."""
        if self._explicit_provides:
            return list(self._provides)
        return list(self.handlers)

    @property
    def serial(self) -> bool:
        return self.concurrency == "serial"

    def manifest(self) -> dict:
        """The manifest sent in hello: the members a native plugin's manifest has."""
        m: Dict[str, Any] = {"kind": "executor", "name": self.name, "version": self.version,
                             "abi": ABI_MAJOR}
        provides = self.provides
        if provides:
            m["provides"] = provides
        if self.aliases:
            m["aliases"] = list(self.aliases)
        m["concurrency"] = self.concurrency
        # Whether polls reach it: the runtime decides by this, and never polls it when false.
        m["polled"] = self.accepts_polled_calls
        if self.schemas:
            m["schemas"] = self.schemas
        if self.description:
            m["description"] = self.description
        return m

    def handler(self, rpc: Optional[str] = None, *, input_schema: Any = None):
        """Decorator: registers a handler for `rpc`, or for every RPC when None."""
        def decorate(fn: Handler) -> Handler:
            if not callable(fn):
                raise TypeError(f"handler {fn!r} is not callable")
            if rpc is None:
                self.default_handler = fn
            else:
                self.handlers[rpc] = fn
                if input_schema is not None:
                    self.schemas.setdefault(rpc, {})["input"] = input_schema
            return fn
        return decorate

    def call(self, request: Request) -> Result:
        """Runs one call: refuses RPCs not provided, and turns whatever the handler
        raises into an Error result. (Polled calls reach it only when its manifest says
        "polled": the runtime applies that.)"""
        raw = request.raw
        rpc = raw.get("rpc")
        if not isinstance(rpc, str):
            rpc = "template.execute"
        provides = self._provides if self._explicit_provides else self.handlers
        if provides and rpc not in provides:
            return error(f"plugin '{self.name}' does not provide RPC '{rpc}' "
                         f"(it provides {', '.join(provides)})")
        fn = self.handlers.get(rpc, self.default_handler)
        if fn is None:
            return error(f"plugin '{self.name}' has no handler for RPC '{rpc}'")
        try:
            outcome = fn(request)
        except BaseException as e:  # noqa: BLE001 - SystemExit and all: nothing escapes
            if isinstance(e, MemoryError):
                _memory.failed = True
            text = self.describe_exception(e)
            try:
                import traceback
                tb = e.__traceback__
                if tb is not None and tb.tb_frame.f_code is Plugin.call.__code__:
                    tb = tb.tb_next  # start at the handler, not here
                request.log.error("".join(traceback.format_exception(type(e), e, tb)).rstrip())
            except Exception:  # noqa: BLE001
                pass
            return error(text)
        return self._as_result(outcome, rpc)

    def _as_result(self, outcome: Any, rpc: str) -> Result:
        if isinstance(outcome, Result):
            return outcome
        if isinstance(outcome, Mapping):
            try:
                return succeeded(outcome)
            except (TypeError, ValueError) as e:
                return error(f"plugin '{self.name}' returned parameters that are not JSON: {e}")
            except RecursionError:
                return error(f"plugin '{self.name}' returned parameters that are not JSON: "
                             "they nest too deep")
        return error(f"plugin '{self.name}' returned {type(outcome).__name__} for RPC '{rpc}', "
                     "not a Result or a dict of parameters")

    def describe_exception(self, e: BaseException) -> str:
        """"plugin 'x' raised ValueError: bad input (at hello.py:12 in greet; ...)"."""
        import os
        import traceback
        kind = type(e)
        kind_name = kind.__qualname__ if kind.__module__ in ("builtins", "__main__") else \
            f"{kind.__module__}.{kind.__qualname__}"
        if isinstance(e, SystemExit):
            text = f"plugin '{self.name}' called sys.exit({e.code!r})"
        else:
            detail = str(e)
            text = f"plugin '{self.name}' raised {kind_name}" + (f": {detail}" if detail else "")
        frames = traceback.extract_tb(e.__traceback__)
        here = os.path.abspath(__file__)
        frames = [f for f in frames if os.path.abspath(f.filename) != here]
        if frames:
            last = frames[-3:][::-1]  # innermost first
            where = "; called from ".join(
                f"{os.path.basename(f.filename)}:{f.lineno} in {f.name}" for f in last)
            text += f" (at {where})"
        return text

    def run(self, **kwargs) -> None:
        """Serves this plugin over protocol v1 on stdin/stdout; does not return (returns at
        once in the python deployer's embedded mode, which calls the plugin itself)."""
        if _embedded_mode:
            return
        from . import _host
        _host.serve(self, **kwargs)


def _strings(values: Optional[Iterable[str]], what: str) -> List[str]:
    if values is None:
        return []
    if isinstance(values, str):
        values = [values]
    out = list(values)
    for v in out:
        if not isinstance(v, str) or not v:
            raise ValueError(f"{what} must be non-empty strings, not {v!r}")
    return out


# --------------------------------------------------------------------------- registration

_registered: Optional[Plugin] = None
_embedded_mode = False  # True inside the runtime's process (the python deployer's embedded mode)
_memory = _threading.local()  # .failed: a MemoryError ended the call running on this thread
_pending_handlers: Dict[Optional[str], Any] = {}  # rpc -> (handler, input schema)
_lock = _threading.Lock()


def register(name: str, version: str, provides: Optional[Iterable[str]] = None, **kwargs) -> Plugin:
    """Declares this process's plugin (one per process) and returns it. Keyword arguments:
    description, concurrency ("parallel" or "serial"), aliases, schemas
    ({rpc: {"input": schema}}), input_schemas ({rpc: schema}), accepts_polled_calls,
    handler (one function for every RPC), handlers ({rpc: function})."""
    global _registered
    p = Plugin(name, version, provides, **kwargs)
    with _lock:
        if _registered is not None and _registered.name != p.name:
            raise RuntimeError(f"a plugin ('{_registered.name}') is already registered in this process")
        for rpc, (fn, input_schema) in _pending_handlers.items():
            if rpc is None:
                p.default_handler = p.default_handler or fn
            else:
                p.handlers.setdefault(rpc, fn)
                if input_schema is not None:
                    p.schemas.setdefault(rpc, {}).setdefault("input", input_schema)
        _pending_handlers.clear()
        _registered = p
    return p


def plugin(name: str, version: str, provides: Optional[Iterable[str]] = None, **kwargs):
    """Decorator form of register(): the decorated function handles every RPC.

        @plugboard_sdk.plugin(name="x", version="1.0.0", provides=["template.execute"])
        def execute(request): ...
    """
    def decorate(fn: Handler) -> Handler:
        register(name, version, provides, handler=fn, **kwargs)
        return fn
    return decorate


def handler(rpc: Optional[str] = None, *, input_schema: Any = None):
    """Decorator: registers `fn` as the handler of `rpc` (every RPC when None) on this
    process's plugin, declared before or after with register()."""
    def decorate(fn: Handler) -> Handler:
        if not callable(fn):
            raise TypeError(f"handler {fn!r} is not callable")
        with _lock:
            target = _registered
            if target is None:
                _pending_handlers[rpc] = (fn, input_schema)
        if target is not None:
            target.handler(rpc, input_schema=input_schema)(fn)
        return fn
    return decorate


def registered() -> Optional[Plugin]:
    """The plugin declared in this process, if any."""
    return _registered


def run(plugin: Optional[Plugin] = None, **kwargs) -> None:
    """Serves the registered plugin (or `plugin`) over protocol v1 on stdin/stdout and
    exits the process: 0 after shutdown or end of input, 2 on a protocol error. Call it
    from the plugin module's ``if __name__ == "__main__":``."""
    if _embedded_mode:
        return  # the python deployer's embedded mode calls the plugin itself
    from . import _host
    target = plugin if plugin is not None else _registered
    if target is None:
        import sys
        print("plugboard_sdk.run(): no plugin registered (use plugboard_sdk.plugin() or "
              "plugboard_sdk.register())", file=sys.stderr)
        raise SystemExit(3)
    _host.serve(target, **kwargs)
