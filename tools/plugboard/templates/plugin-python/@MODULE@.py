"""@NAME@: a plugboard plugin. It greets args.name and returns the greeting as the output
parameter "greeting". The declaration names the plugin, the RPC it serves and the JSON
Schema of its args, which `plugboard validate` and `plugboard run` check in a workflow
before any step runs (a direct `plugboard call` passes args as they are)."""
import plugboard_sdk as pb


@pb.plugin(
    name="@NAME@",
    version="0.1.0",
    provides=["template.execute"],
    description="Greets args.name",
    input_schemas={
        "template.execute": {
            "type": "object",
            "properties": {"name": {"type": "string", "description": "who to greet"}},
            "required": ["name"],
        }
    },
)
def greet(request):
    args = request.args if isinstance(request.args, dict) else {}
    name = args.get("name")
    if not isinstance(name, str):
        return pb.failed("args.name must be a string")
    return pb.succeeded({"greeting": f"Hello, {name}!"})


if __name__ == "__main__":
    pb.run()
