"""welcome: an Arcaflow-style plugin speaking ATP v3 (atpkit.py), run by plugboard's atp
deployer as an Arcaflow engine would run it: `python3 welcome.py --atp`.

Steps: greet {name, greeting?} -> success {message, length}; count {text} -> success
{words}. examples/arcaflow.toml runs it beside a native and a Python step.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import atpkit as k  # noqa: E402

STR = {"type_id": "string"}
SCHEMA = {"steps": {
    "greet": k.step("greet",
                    k.scope("Input", {"Input": {
                        "name": k.prop({"type_id": "string", "min": 1}, description="who to greet"),
                        "greeting": k.prop(STR, default='"Hello"')}}),
                    {"success": k.scope("Out", {"Out": {"message": k.prop(STR),
                                                        "length": k.prop({"type_id": "integer"})}}),
                     "error": k.scope("Err", {"Err": {"error": k.prop(STR)}})}),
    "count": k.step("count",
                    k.scope("Input", {"Input": {"text": k.prop(STR)}}),
                    {"success": k.scope("Out", {"Out": {"words": k.prop({"type_id": "integer"})}})}),
}}


def greet(run, config):
    message = "%s, %s!" % (config.get("greeting", "Hello"), config["name"])
    run.log("greeted " + config["name"])
    return "success", {"message": message, "length": len(message)}


def count(run, config):
    return "success", {"words": len(str(config["text"]).split())}


if __name__ == "__main__":
    k.serve(SCHEMA, {"greet": greet, "count": count})
