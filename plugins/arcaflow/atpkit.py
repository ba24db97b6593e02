"""A small server of the Arcaflow Transport Protocol, version 3, for Arcaflow-style plugins
written without the Arcaflow SDK: what plugboard's atp deployer talks to (docs/arcaflow.md).

Needs only the standard library and cbor2 (Debian: python3-cbor2). A plugin gives a schema
(the dict an Arcaflow hello carries) and a function per step; serve() then runs the
protocol on stdin/stdout: it waits for the start output, sends the hello, runs each
WORK_START in a thread of its own (several runs at once), answers with WORK_DONE or ERROR,
passes SIGNALs to the run's handler, and after CLIENT_DONE waits for its runs and exits.

    def greet(run, config):          # run.log(text), run.cancelled (a threading.Event)
        return "success", {"message": "Hello, " + config["name"]}
    serve(SCHEMA, {"greet": greet})
"""
import sys
import threading
import traceback

import cbor2

WORK_START, WORK_DONE, SIGNAL, CLIENT_DONE, ERROR = 1, 2, 3, 4, 5


class Run:
    """One run of a step: its id, a cancel event its handler may watch, and log()."""

    def __init__(self, server, run_id):
        self.server = server
        self.run_id = run_id
        self.cancelled = threading.Event()

    def log(self, text):
        self.server.log(text)


class StepFailed(Exception):
    """Raised by a step whose input is invalid: answered with a step_fatal ERROR."""


class Server:
    def __init__(self, schema, steps, out=None, inp=None):
        self.schema = schema
        self.steps = steps
        self.out = out or sys.stdout.buffer
        self.inp = inp or sys.stdin.buffer
        self.lock = threading.Lock()
        self.logs = ""  # cumulative, as Arcaflow's SDK keeps them
        self.runs = {}
        self.threads = []

    def send(self, message):
        data = cbor2.dumps(message)
        with self.lock:
            self.out.write(data)
            self.out.flush()

    def log(self, text):
        with self.lock:
            self.logs += text + "\n"

    def error(self, run_id, text, step_fatal=False, server_fatal=False):
        self.send({"id": ERROR, "run_id": run_id,
                   "data": {"error": text, "step_fatal": step_fatal, "server_fatal": server_fatal}})

    def hello(self, version=3):
        self.send({"version": version, "schema": self.schema})

    def start(self, run_id, data):
        step = data.get("id")
        run = Run(self, run_id)
        self.runs[run_id] = run

        def body():
            try:
                if step not in self.steps:
                    raise StepFailed("no such step: %r" % (step,))
                output_id, output = self.steps[step](run, data.get("config"))
            except Exception as e:  # every failure of a step is step_fatal in Arcaflow
                # Worded as the Arcaflow SDK words it: the exception, then its traceback.
                self.error(run_id, "Error while calling step %s/%s:%s %s"
                           % (run_id, step, e, traceback.format_exc()), step_fatal=True)
                return
            with self.lock:
                logs = self.logs
            self.send({"id": WORK_DONE, "run_id": run_id,
                       "data": {"output_id": output_id, "output_data": output,
                                "debug_logs": logs}})

        t = threading.Thread(target=body, daemon=True)
        self.threads.append(t)
        t.start()

    def signal(self, run_id, data):
        run = self.runs.get(run_id)
        if run is None or data.get("signal_id") != "cancel":
            self.error(run_id, "no handler for signal %r" % (data.get("signal_id"),))
            return
        run.cancelled.set()

    def serve(self):
        decoder = cbor2.CBORDecoder(self.inp)
        decoder.decode()  # the start output
        self.hello()
        while True:
            try:
                message = decoder.decode()
            except (cbor2.CBORDecodeError, EOFError) as e:
                self.error("", "cannot decode: %s" % e, server_fatal=True)
                break
            kind = message.get("id")
            if kind == WORK_START:
                self.start(message["run_id"], message["data"])
            elif kind == SIGNAL:
                self.signal(message["run_id"], message["data"])
            elif kind == CLIENT_DONE:
                break
            else:
                self.error(message.get("run_id", ""), "unknown message id %r" % (kind,))
        for t in self.threads:
            t.join()


def serve(schema, steps):
    """Runs the protocol on stdin and stdout when the plugin was started with --atp."""
    if "--atp" not in sys.argv[1:]:
        sys.stderr.write("usage: %s --atp\n" % sys.argv[0])
        sys.exit(64)
    Server(schema, steps).serve()


# Schema helpers: the Arcaflow schema's shapes (objects, properties, types by type_id).
def prop(type_, required=True, description=None, default=None):
    p = {"type": type_, "required": required}
    if description:
        p["display"] = {"name": description, "description": description}
    if default is not None:
        p["default"] = default  # JSON text, as Arcaflow writes defaults
        p["required"] = False
    return p


def scope(root, objects):
    return {"root": root, "objects": {name: {"id": name, "properties": props}
                                      for name, props in objects.items()}}


def step(step_id, input_scope, outputs, cancel=False):
    s = {"id": step_id, "display": {"name": step_id}, "input": input_scope,
         "outputs": {out_id: {"schema": sc, "error": False} for out_id, sc in outputs.items()}}
    if cancel:
        s["signal_handlers"] = {"cancel": {"id": "cancel", "data_schema": scope("cancelInput", {"cancelInput": {}}),
                                           "display": {"name": "cancel"}}}
    return s
