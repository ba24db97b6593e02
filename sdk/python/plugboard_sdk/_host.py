"""The plugin's side of protocol v1 (docs/protocol.md) on stdin and stdout.

Mirrors tools/plugboard-host/main.cc: the protocol keeps a private, close-on-exec copy of
the real stdout, and fd 1 and sys.stdout point at stderr; calls run on a pool of threads
(leader/followers) unless the plugin is serial; `cancel` sets the flag the call's Request
sees; no frame sent exceeds the frame limit (the runtime's hello may set it): a larger
result becomes an Error for its call alone, a longer log line is cut; a call whose handler
ran out of memory is answered with "out_of_memory", so that the runtime replaces this
process; exit 0 after `shutdown` or end of input (once the calls in flight answered, for up
to 10 s), 2 on a protocol error, with the reason on stderr.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import queue
import sys
import threading
from typing import Any, Dict, Optional, Union

from . import PROTOCOL_VERSION, Plugin, Request, error
_sdk = sys.modules[__package__]

FRAME_LIMIT = 16 * 1024 * 1024  # bytes, newline excluded, unless the runtime's hello says
MIN_FRAME_LIMIT = 4096          # the least a runtime may set
MAX_DEPTH = 512                 # levels of arrays and objects a frame may nest; the runtime refuses more
DRAIN_SECONDS = 10.0            # how long shutdown waits for the calls in flight


class ProtocolError(Exception):
    pass


def _quoted(line: bytes) -> str:
    shown = line[:80].decode("utf-8", "replace")
    shown = "".join(" " if ord(c) < 0x20 else c for c in shown)
    return "'" + shown + ("...'" if len(line) > 80 else "'")


def _is_id(m: dict) -> bool:
    v = m.get("id")
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def parse_frame(line: bytes) -> dict:
    """Checks one line from the runtime as core/protocol.cc's parseFrame() does."""
    if line.endswith(b"\r"):
        line = line[:-1]
    try:
        m = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        m = None
    if not isinstance(m, dict):
        raise ProtocolError("not a protocol message (a JSON object per line): " + _quoted(line))
    kind = m.get("type")
    if not isinstance(kind, str):
        raise ProtocolError('message without a "type": ' + _quoted(line))

    def bad(what: str) -> ProtocolError:
        return ProtocolError(f"'{kind}' message {what}: {_quoted(line)}")

    if kind == "hello":
        p = m.get("protocols")
        if not isinstance(p, list) or not p:
            raise bad('needs "protocols", a list of versions')
        if any(not isinstance(v, int) or isinstance(v, bool) for v in p):
            raise bad("lists a version that is not an integer")
        limit = m.get("frame_limit", MIN_FRAME_LIMIT)
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < MIN_FRAME_LIMIT:
            raise bad(f'has a "frame_limit" that is not an integer of at least {MIN_FRAME_LIMIT}')
    elif kind == "execute":
        if not _is_id(m):
            raise bad('needs a non-negative integer "id"')
        if not isinstance(m.get("request"), dict):
            raise bad('needs an object "request"')
    elif kind == "cancel":
        if not _is_id(m):
            raise bad('needs a non-negative integer "id"')
    elif kind != "shutdown":
        raise ProtocolError(f"unknown message type '{kind}' from the runtime: {_quoted(line)}")
    return m


# One encoder: json.dumps() with options builds a new one on every call.
_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


class Channel:
    """Writes whole frames to the protocol descriptor, one at a time."""

    def __init__(self, fd: int):
        self._fd = fd
        self._lock = threading.Lock()
        self.broken = False

    def send(self, message: dict) -> None:
        try:
            text = _encode(message)
        except (TypeError, ValueError):
            text = json.dumps(message, ensure_ascii=False, separators=(",", ":"), default=repr)
        self.send_text(text)

    def send_text(self, text: str) -> None:
        self.send_bytes((text + "\n").encode("utf-8", "replace"))

    def send_bytes(self, data: bytes) -> None:
        """`data` must be one whole frame, newline included."""
        with self._lock:
            if self.broken:
                return
            view = memoryview(data)
            while view:
                try:
                    n = os.write(self._fd, view)
                except InterruptedError:
                    continue
                except OSError:
                    self.broken = True  # the runtime went away; reading will notice
                    return
                view = view[n:]


class _Call:
    __slots__ = ("id", "raw", "cancel")

    def __init__(self, call_id: int, raw: dict):
        self.id = call_id
        self.raw = raw
        self.cancel = threading.Event()


_current = threading.local()  # .call_id while a handler runs on this thread


class _LogHandler(logging.Handler):
    """Forwards `logging` records as log frames (with the call's id inside a call)."""

    def __init__(self, sink):
        super().__init__(logging.DEBUG)
        self._sink = sink
        self.setFormatter(logging.Formatter("%(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        try:
            level = ("debug" if record.levelno <= logging.DEBUG else
                     "info" if record.levelno <= logging.INFO else
                     "warn" if record.levelno <= logging.WARNING else "error")
            self._sink(level, self.format(record), getattr(_current, "call_id", None))
        except Exception:  # noqa: BLE001
            self.handleError(record)


class Server:
    def __init__(self, plugin: Plugin, channel: Channel, frame_limit: int = FRAME_LIMIT):
        self.plugin = plugin
        self.channel = channel
        self.frame_limit = frame_limit
        self.lock = threading.Lock()
        self.idle = threading.Condition(self.lock)
        self.calls: Dict[int, _Call] = {}
        self.greeted = False
        self.serial_queue: Optional[queue.Queue] = None
        if plugin.serial:
            self.serial_queue = queue.Queue()
            threading.Thread(target=self._serial_worker, name="plugboard-serial", daemon=True).start()

    # -- logging
    def log(self, level: str, message: str, call_id: Optional[int]) -> None:
        frame: Dict[str, Any] = {"type": "log", "level": level, "message": message}
        if call_id is None:
            call_id = getattr(_current, "call_id", None)
        if call_id is not None:
            frame["id"] = call_id
        data = _encode(frame).encode("utf-8", "replace")
        while len(data) > self.frame_limit and message:  # cut to fit (escapes make it longer)
            message = message[:max(0, len(message) - (len(data) - self.frame_limit) - 64)]
            frame["message"] = message + " [cut to fit the protocol's frame limit]"
            data = _encode(frame).encode("utf-8", "replace")
        self.channel.send_bytes(data + b"\n")

    # -- calls
    def _run_call(self, call: _Call) -> None:
        _current.call_id = call.id
        _sdk._memory.failed = False
        try:
            if call.cancel.is_set():
                result = error("cancelled before it started").to_json()
            else:
                result = self.plugin.call(Request(call.raw, call.cancel, call.id)).to_json()
        except BaseException as e:  # noqa: BLE001 - nothing may kill the serving thread
            if isinstance(e, MemoryError):
                _sdk._memory.failed = True
            result = error(f"plugin '{self.plugin.name}' failed: {type(e).__name__}: {e}").to_json()
        finally:
            _current.call_id = None
        try:
            data = self._result_frame(call.id, result, _sdk._memory.failed)
        except MemoryError:
            data = self._result_frame(call.id, error(
                f"plugin '{self.plugin.name}' ran out of memory sending its result").to_json(), True)
        self.channel.send_bytes(data)
        with self.lock:
            self.calls.pop(call.id, None)
            self.idle.notify_all()

    def _result_frame(self, call_id: int, result: dict, out_of_memory: bool) -> bytes:
        """The result frame, newline included: an Error instead of a result that is not
        JSON, nests too deep for the runtime, or whose frame would exceed the frame limit."""
        if _deeper_than(result, MAX_DEPTH - 1):  # the frame nests it one level deeper
            result = error(f"plugin '{self.plugin.name}' returned a result nested deeper than "
                           f"{MAX_DEPTH - 1} levels").to_json()
        frame: Dict[str, Any] = {"type": "result", "id": call_id, "result": result}
        if out_of_memory:
            frame["out_of_memory"] = True
        try:
            data = _encode(frame).encode("utf-8", "replace")
        except (TypeError, ValueError) as e:
            frame["result"] = error(
                f"plugin '{self.plugin.name}' returned a result that is not JSON: {e}").to_json()
            data = _encode(frame).encode("utf-8", "replace")
        if len(data) > self.frame_limit:
            frame["result"] = error(
                f"plugin '{self.plugin.name}' returned a result too large for the protocol: its "
                f"frame of {len(data)} bytes exceeds the frame limit of {self.frame_limit} bytes "
                "(the deployer's option 'frame_limit')").to_json()
            data = _encode(frame).encode("utf-8", "replace")
        return data + b"\n"

    def _serial_worker(self) -> None:
        while True:
            call = self.serial_queue.get()
            self._run_call(call)

    # -- frames
    def handle(self, m: dict) -> Union[bool, _Call]:
        """Handles one checked frame: False when the conversation is over, the call to run
        for an `execute` (unless the plugin is serial: then its thread runs it), else True."""
        kind = m["type"]
        if kind == "hello":
            if PROTOCOL_VERSION not in m["protocols"]:
                raise ProtocolError(f"the runtime offers protocols {json.dumps(m['protocols'], separators=(',', ':'))}; "
                                    f"this plugin speaks {PROTOCOL_VERSION}")
            if "frame_limit" in m:  # binds both directions from now on
                self.frame_limit = m["frame_limit"]
            self.channel.send({"type": "hello", "protocol": PROTOCOL_VERSION,
                               "manifest": self.plugin.manifest()})
            self.greeted = True
            return True
        if not self.greeted:
            raise ProtocolError(f"'{kind}' before 'hello'")
        if kind == "execute":
            call = _Call(m["id"], m["request"])
            with self.lock:
                if call.id in self.calls:
                    raise ProtocolError(f"'execute' for id {call.id}, which is already in flight")
                self.calls[call.id] = call
            if self.serial_queue is None:
                return call
            self.serial_queue.put(call)
            return True
        if kind == "cancel":
            with self.lock:
                call = self.calls.get(m["id"])
            if call is not None:
                call.cancel.set()
            return True
        return False  # shutdown

    def _next_frame(self) -> Optional[bytes]:
        """The next non-blank line from the runtime; None at end of input. Leader only."""
        buf = self._buf
        while True:
            nl = buf.find(b"\n", self._scanned)
            if nl < 0:
                self._scanned = len(buf)
                if len(buf) > self.frame_limit:
                    raise ProtocolError(f"a protocol frame exceeds the limit of {self.frame_limit} bytes "
                                        "before its newline")
                try:
                    chunk = os.read(self._fd, 65536)
                except InterruptedError:
                    continue
                if not chunk:
                    return None
                buf += chunk
                continue
            if nl > self.frame_limit:
                raise ProtocolError(f"a protocol frame of {nl} bytes exceeds the limit of {self.frame_limit}")
            line = bytes(buf[:nl])
            del buf[:nl + 1]
            self._scanned = 0
            if line.strip():
                return line

    def _follow(self) -> None:
        """One thread of the pool, leader/followers as in plugboard-host: it waits to lead,
        reads frames until one is a call, hands the reading to the next thread (started
        when none is free) and runs the call itself, so no call waits for a thread."""
        try:
            while True:
                with self._lead:
                    call = None
                    while not isinstance(call, _Call):
                        line = self._next_frame()
                        if line is None:
                            self._finish(0)  # end of input: like shutdown
                        call = self.handle(parse_frame(line))
                        if call is False:
                            self._finish(0)
                    with self.lock:
                        self._free -= 1
                        grow = self._free == 0
                        if grow:
                            self._free += 1
                    if grow:
                        threading.Thread(target=self._follow, name="plugboard-call", daemon=True).start()
                self._run_call(call)
                with self.lock:
                    self._free += 1
        except ProtocolError as e:
            _fail(self.plugin, 2, str(e))
        except BaseException as e:  # noqa: BLE001
            _fail(self.plugin, 2, f"{type(e).__name__}: {e}")

    def serve(self, fd: int = 0, drain_seconds: float = DRAIN_SECONDS) -> None:
        """Serves frames from `fd` on a pool of threads; exits the process at the end."""
        self._fd = fd
        self._buf = bytearray()
        self._scanned = 0
        self._lead = threading.Lock()  # held by the thread reading frames
        self._free = 1                 # threads not running a call
        self._drain_seconds = drain_seconds
        self._follow()

    def _finish(self, status: int) -> None:
        self.drain(self._drain_seconds)
        try:
            sys.stderr.flush()
        finally:
            os._exit(status)

    def drain(self, seconds: float) -> None:
        with self.lock:
            self.idle.wait_for(lambda: not self.calls, timeout=seconds)


def _fail(plugin: Plugin, status: int, message: str) -> None:
    try:
        sys.stderr.write(f"plugin '{plugin.name}': {message}\n")
        sys.stderr.flush()
    finally:
        os._exit(status)


_protocol_fd: Optional[int] = None  # set by claim_stdout()
_input_fd = 0                        # where the runtime's frames come from


def claim_stdout() -> int:
    """Keeps a private, close-on-exec copy of the real stdout for the protocol and points
    fd 1 and sys.stdout at stderr, so that nothing the plugin prints reaches the runtime
    as a frame. When PLUGBOARD_PROTOCOL_FDS=IN,OUT names the channel's descriptors (the
    container deployer passes them through), those are used instead of stdin and stdout.
    Idempotent: the launcher (python -m plugboard_sdk) calls it before the plugin's module
    is imported, run() again when it serves."""
    global _protocol_fd, _input_fd
    if _protocol_fd is not None:
        return _protocol_fd
    try:
        sys.stdout.flush()
    except Exception:  # noqa: BLE001
        pass
    fds = os.environ.pop("PLUGBOARD_PROTOCOL_FDS", None)
    if fds is not None:
        try:
            read_fd, write_fd = (int(x) for x in fds.split(","))
            os.set_inheritable(read_fd, False)
            os.set_inheritable(write_fd, False)
        except (ValueError, OSError) as e:
            raise OSError(f"PLUGBOARD_PROTOCOL_FDS='{fds}' does not name two open descriptors: {e}")
        _input_fd, _protocol_fd = read_fd, write_fd
    else:
        _protocol_fd = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return _protocol_fd


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether `value` nests arrays and objects more than `limit` levels deep (the value
    itself, if one, is the first level). Iterative, so that no depth breaks the stack, and
    it ends on a value that holds itself."""
    stack = [(value, 1)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, dict):
            children = v.values()
        elif isinstance(v, (list, tuple)):
            children = v
        else:
            continue
        if depth > limit:
            return True
        stack.extend((c, depth + 1) for c in children)
    return False


def serve(plugin: Plugin, frame_limit: int = FRAME_LIMIT, drain_seconds: float = DRAIN_SECONDS) -> None:
    """Serves `plugin` on fds 0 and 1 (or PLUGBOARD_PROTOCOL_FDS's); exits the process."""
    try:
        protocol_fd = claim_stdout()
    except OSError as e:
        _fail(plugin, 2, f"cannot set up stdout: {e}")
    channel = Channel(protocol_fd)
    server = Server(plugin, channel, frame_limit)
    _sdk._log_sink = server.log
    root = logging.getLogger()
    root.addHandler(_LogHandler(server.log))
    if root.level == logging.WARNING:  # the default: let info records through
        root.setLevel(logging.INFO)

    server.serve(_input_fd, drain_seconds)
