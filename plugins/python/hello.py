"""hello, in Python: the same plugin as the native plugins/hello (name, version, RPCs,
alias, schemas and behaviour), so that one workflow can run "hello" natively, as Python
and from a container image (examples/containers.toml) and get the same answers.

    PYTHONPATH=sdk/python python3 plugins/python/hello.py
"""
import plugboard_sdk as pb

_NAME = {"type": "object", "properties": {"name": {"type": "string"}}}

plugin = pb.register(
    "hello",
    "1.2.0",
    ["template.execute", "hello.greet"],
    aliases=["greeter"],
    description="Greets someone (in Python)",
    schemas={
        "template.execute": {"input": _NAME,
                             "output": {"type": "object",
                                        "properties": {"greeting": {"type": "string"}}}},
        "hello.greet": {"input": _NAME},
    },
)


@pb.handler()
def greet(request):
    args = request.args if isinstance(request.args, dict) else {}
    name = args.get("name", "world")
    if not isinstance(name, str):
        return pb.failed("args.name must be a string")
    greeting = f"Hello, {name}!"
    request.log.info("greeting " + name)
    return pb.succeeded({"greeting": greeting}, greeting)


if __name__ == "__main__":
    pb.run()
