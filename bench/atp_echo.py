"""atp_echo: one trivial Arcaflow step over ATP (plugins/arcaflow/atpkit.py), its config
back as its output, for bench/atp_bench.cc. Run: python3 atp_echo.py --atp"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "plugins", "arcaflow"))
import atpkit as k  # noqa: E402

STR = {"type_id": "string"}
SCHEMA = {"steps": {"echo": k.step(
    "echo", k.scope("In", {"In": {"greeting": k.prop(STR)}}),
    {"success": k.scope("Out", {"Out": {"greeting": k.prop(STR)}})})}}

if __name__ == "__main__":
    k.serve(SCHEMA, {"echo": lambda run, config: ("success", config)})
