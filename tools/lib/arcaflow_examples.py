"""Arcaflow's example workflows as a suite (tools/arcaflow-examples.sh runs this).

Reads tests/fixtures/arcaflow-examples/expected.yaml, checks each stand-in plugin image as
an ATP plugin, then validates (and with --run, runs) each workflow listed there, compares
what plugboard did with what the engine's semantics give, prints a table and exits 1 when
an expectation failed. Arcaflow's files stay in the checkouts given; nothing is copied.
"""
import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXPECTED = os.path.join(ROOT, "tests", "fixtures", "arcaflow-examples", "expected.yaml")
READ_FILE_WORKFLOW = """version: v0.2.0
input:
  root: In
  objects:
    In:
      id: In
      properties: {}
steps:
  step:
    plugin:
      src: %s
      deployment_type: image
    step: %s
    input: {}
outputs:
  success:
    content: !expr readFile(%s)
"""


def fail(message):
    print("arcaflow-examples: " + message, file=sys.stderr)
    sys.exit(2)


def lookup(data, path):
    """The value at `path` (a.b[0].c) in data; raises KeyError naming what is missing."""
    value = data
    for name, index in re.findall(r"([^.\[\]]+)|\[(-?\d+)\]", path):
        if name:
            if not isinstance(value, dict) or name not in value:
                raise KeyError("no %s" % path)
            value = value[name]
        else:
            if not isinstance(value, list) or not -len(value) <= int(index) < len(value):
                raise KeyError("no %s" % path)
            value = value[int(index)]
    return value


def check_field(data, path, want):
    """'' when data's value at path fits want, else why not."""
    try:
        got = lookup(data, path)
    except KeyError as e:
        return str(e.args[0])
    if isinstance(want, dict) and len(want) == 1 and next(iter(want)) in (
            "type", "prefix", "length", "equals"):
        kind, arg = next(iter(want.items()))
        ok = {
            "type": lambda: (arg == "string" and isinstance(got, str) and got != "") or (
                arg == "number" and isinstance(got, (int, float)) and not isinstance(got, bool)),
            "prefix": lambda: isinstance(got, str) and got.startswith(arg),
            "length": lambda: isinstance(got, list) and len(got) == arg,
            "equals": lambda: got == {"host-hostname": socket.gethostname()}.get(arg, arg),
        }[kind]()
        return "" if ok else "%s is %r, expected %s %r" % (path, got, kind, arg)
    return "" if got == want else "%s is %r, expected %r" % (path, got, want)


def engine_output(stdout):
    """The output document the engine prints (output_id, output_data) from run's stdout."""
    lines = stdout.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("output_id:") or line.startswith("output_data:"):
            try:
                doc = yaml.safe_load("\n".join(lines[i:]))
            except yaml.YAMLError:
                return None
            return doc if isinstance(doc, dict) and "output_id" in doc else None
    return None


def run(argv, cwd, env, timeout):
    start = time.monotonic()
    try:
        p = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True,
                           timeout=timeout)
        return p.returncode, p.stdout, p.stderr, time.monotonic() - start
    except subprocess.TimeoutExpired:
        return None, "", "timed out after %ds" % timeout, time.monotonic() - start


def first_line(text):
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:160]
    return ""


def check_plugins(plugins, plugboard, build, env, rows, call):
    """Each stand-in image read as an ATP plugin: validate of a one-step plugboard workflow
    starts it, checks the args against its schema and leaves the schema in the cache; with
    `call`, the workflow is run too (its step must succeed)."""
    cache = os.path.join(env["XDG_CACHE_HOME"], "plugboard", "atp")
    with tempfile.TemporaryDirectory() as tmp:
        for i, p in enumerate(plugins):
            name = "plugin%d" % i
            with open(os.path.join(tmp, name + ".registry.toml"), "w") as f:
                f.write('[plugins.%s."1.0.0"]\natp = { image = "%s" }\n' % (name, p["image"]))
            with open(os.path.join(tmp, name + ".toml"), "w") as f:
                f.write('name = "check"\n[[steps]]\nid = "s"\nplugin = "%s"\n'
                        'rpc = "arcaflow.%s"\nargs = %s\n'
                        % (name, p["step"], toml_inline(p.get("args", {}))))
            before = set(os.listdir(cache)) if os.path.isdir(cache) else set()
            code, out, err, secs = run(
                [plugboard, "validate", name + ".toml", "--plugins", os.path.join(build, "plugins"),
                 "--registry", name + ".registry.toml"], tmp, env, 300)
            after = set(os.listdir(cache)) if os.path.isdir(cache) else set()
            label = "plugin " + p["image"]
            if code != 0:
                rows.append((label, "validate", "FAILED", "exit %s: %s" % (code, first_line(err or out))))
            elif len(after - before) != 1:
                rows.append((label, "validate", "FAILED", "no new schema in the cache %s (%d new files)"
                             % (cache, len(after - before))))
            else:
                rows.append((label, "validate", "passed", "schema read (%.1f s)" % secs))
            if not call:
                continue
            # With --run, one call too: a broken image is told apart from a workflow that
            # does not run.
            code, out, err, secs = run(
                [plugboard, "run", name + ".toml", "--plugins", os.path.join(build, "plugins"),
                 "--registry", name + ".registry.toml"], tmp, env, 300)
            if code == 0:
                rows.append((label, "call", "passed", "%s answered (%.1f s)" % (p["step"], secs)))
            else:
                rows.append((label, "call", "FAILED", "exit %s: %s" % (code, first_line(err or out))))


def toml_inline(value):
    if isinstance(value, dict):
        return "{ " + ", ".join("%s = %s" % (k, toml_inline(v)) for k, v in value.items()) + " }"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_inline(v) for v in value) + "]"
    return '"%s"' % str(value).replace("\\", "\\\\").replace('"', '\\"')


def main():
    ap = argparse.ArgumentParser(prog="tools/arcaflow-examples.sh")
    ap.add_argument("workflows", help="a checkout of arcalot/arcaflow-workflows")
    ap.add_argument("--plugins-src", help="the plugins' and the SDK's checkouts (default: "
                    "the directory holding the workflows checkout)")
    ap.add_argument("--engine", help="a checkout of arcalot/arcaflow-engine: its fixtures too")
    ap.add_argument("--run", action="store_true", help="also run each workflow that runs")
    ap.add_argument("--only", action="append", default=[],
                    help="only the workflows whose path contains this (repeatable)")
    args = ap.parse_args()

    checkouts = {"workflows": os.path.abspath(args.workflows)}
    if not os.path.isdir(os.path.join(checkouts["workflows"], "basic-examples")):
        fail("%s has no basic-examples/: not a checkout of arcaflow-workflows" % args.workflows)
    if args.engine:
        checkouts["engine"] = os.path.abspath(args.engine)
        if not os.path.isfile(os.path.join(checkouts["engine"], "cmd", "arcaflow", "main.go")):
            fail("%s has no cmd/arcaflow/main.go: not a checkout of arcaflow-engine" % args.engine)
    plugins_src = os.path.abspath(args.plugins_src or os.path.dirname(checkouts["workflows"]))
    build = os.path.abspath(os.environ.get("BUILD_DIR", os.path.join(ROOT, "build")))
    plugboard = os.path.join(build, "plugboard")
    if not os.access(plugboard, os.X_OK):
        fail("no %s: build first (tools/setup.sh)" % plugboard)
    timeout = int(os.environ.get("TIMEOUT", "300"))
    with open(EXPECTED) as f:
        expected = yaml.safe_load(f)

    # The images, made when missing (or made from other files): the script says what it made.
    images = subprocess.run([os.path.join(ROOT, "tests", "support",
                                          "make_arcaflow_example_images.sh"), plugins_src])
    if images.returncode != 0:
        fail("the stand-in plugin images could not be made (above)")

    env = dict(os.environ)
    # A schema cache of the suite's own, empty at first, so that the check sees each plugin
    # add its schema and the workflows then find them there.
    cache_home = tempfile.TemporaryDirectory(prefix="arcaflow-examples-")
    env["XDG_CACHE_HOME"] = cache_home.name
    rows = []
    check_plugins(expected.get("plugins", []), plugboard, build, env, rows, args.run)

    listed = set()
    for w in expected["workflows"]:
        home = checkouts.get(w["checkout"])
        if home is None:
            continue
        path = os.path.join(home, w["workflow"])
        listed.add(path)
        if args.only and not any(o in w["workflow"] for o in args.only):
            continue
        name = "%s:%s" % (w["checkout"], w["workflow"])
        if w.get("case"):
            name += " (%s)" % w["case"]
        if "skip" in w:
            rows.append((name, "-", "refused", w["skip"]))
            continue
        if not os.path.isfile(path):
            rows.append((name, "validate", "FAILED", "not in the checkout"))
            continue
        cwd, base = os.path.dirname(path), os.path.basename(path)
        extra = []
        if "read_file" in w:
            # A file the engine's tests read with readFile(): a workflow of the suite's
            # reads it, from the directory the test reads it from, in an output beside one
            # step (a workflow has steps). Its path leads out of that directory (`../..`),
            # which readFile refuses unless widened, as the engine reads any file.
            rf = w["read_file"]
            cwd = os.path.join(home, rf["context"])
            base = os.path.join(cache_home.name, "read-file-%d.yaml" % len(rows))
            with open(base, "w") as f:
                f.write(READ_FILE_WORKFLOW % (rf["image"], rf["step"], json.dumps(rf["path"])))
            extra += ["--context", cwd, "--read-outside-context"]
        if w.get("input"):
            extra += ["--input", w["input"]]
        elif "input_data" in w:
            # Input written in the table, for the fixtures the engine's tests run with
            # input of their own: a file of the suite's.
            given = os.path.join(cache_home.name, "input-%d.yaml" % len(rows))
            with open(given, "w") as f:
                yaml.safe_dump(w["input_data"], f)
            extra += ["--input", given]
        if w.get("config"):
            extra += ["--config", w["config"]]
        code, out, err, secs = run([plugboard, "validate", base, "--plugins",
                                    os.path.join(build, "plugins")] + extra, cwd, env, timeout)
        if code == w["validate"]:
            rows.append((name, "validate", "passed", "exit %d (%.2f s)" % (code, secs)))
        else:
            rows.append((name, "validate", "FAILED", "exit %s, expected %d: %s"
                         % (code, w["validate"], first_line(err or out))))
        if not args.run:
            continue
        if "not_run" in w:
            rows.append((name, "run", "refused", w["not_run"]))
            continue
        want = w["run"]
        code, out, err, secs = run([plugboard, "run", base, "--plugins",
                                    os.path.join(build, "plugins")] + extra, cwd, env, timeout)
        problems = []
        if code != want["exit"]:
            problems.append("exit %s, expected %d: %s" % (code, want["exit"], first_line(err or out)))
        for text in want.get("stderr", []):
            if text not in err:
                problems.append("stderr does not say %r: %s" % (text, first_line(err)))
        doc = engine_output(out)
        if "output_id" not in want:
            # The engine prints no output when it exits 1 or 3 (cmd/arcaflow/main.go).
            if doc is not None:
                problems.append("an output document on stdout, expected none")
        elif doc is None:
            problems.append("no output_id/output_data document on stdout")
        else:
            if doc.get("output_id") != want["output_id"]:
                problems.append("output_id %r, expected %r" % (doc.get("output_id"), want["output_id"]))
            for path, v in want.get("fields", {}).items():
                why = check_field(doc.get("output_data") or {}, path, v)
                if why:
                    problems.append(why)
        detail = "; ".join(problems) if problems else "%s (%.1f s)" % (
            want.get("output_id", "exit %d" % want["exit"]), secs)
        if w.get("departs"):
            detail += "; departs from the engine: " + w["departs"]
        rows.append((name, "run", "FAILED" if problems else "passed", detail))

    # A workflow in the checkouts the table does not know is a failure: write its expectation.
    for c, home in checkouts.items():
        dirs = ["basic-examples"] if c == "workflows" else [
            "fixtures/test-subworkflow", "fixtures/test-readFile", "workflow/test_workflows"]
        for d in dirs:
            for dirpath, _, files in os.walk(os.path.join(home, d)):
                for f in sorted(files):
                    p = os.path.join(dirpath, f)
                    if f.endswith((".yaml", ".yml")) and p not in listed and not f.startswith("input") \
                            and f != "config.yaml" and not args.only:
                        rows.append(("%s:%s" % (c, os.path.relpath(p, home)), "-", "FAILED",
                                     "no expectation in " + os.path.relpath(EXPECTED, ROOT)))

    print()
    print("| workflow | check | result | detail |")
    print("|---|---|---|---|")
    for r in rows:
        print("| %s | %s | %s | %s |" % tuple(x.replace("|", "\\|") for x in r))
    counts = {k: sum(1 for r in rows if r[2] == k) for k in ("passed", "FAILED", "refused")}
    print()
    print("passed %d, failed %d, refused %d" % (counts["passed"], counts["FAILED"], counts["refused"]))
    return 1 if counts["FAILED"] else 0


if __name__ == "__main__":
    sys.exit(main())
