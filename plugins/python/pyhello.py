"""pyhello: the hello plugin in Python. Greets args.name (default "world") and returns the
greeting as the output parameter "greeting".

    PYTHONPATH=sdk/python:plugins/python python3 -m pyhello
"""
import plugboard_sdk as pb


@pb.plugin(
    name="pyhello",
    version="1.0.0",
    provides=["template.execute"],
    description="Greets someone, from Python",
    input_schemas={
        "template.execute": {
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"],
        }
    },
)
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
