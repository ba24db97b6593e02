// @NAME@: a plugboard plugin. It greets args.name and returns the greeting as the output
// parameter "greeting". The manifest at the bottom names the plugin, the RPC it serves and
// the JSON Schema of its args, which `plugboard validate` and `plugboard run` check in a
// workflow before any step runs (a direct `plugboard call` passes args as they are).
#include <string>

#include <plugboard/sdk.hpp>

class @CLASS@ : public plugboard::Plugin {
 public:
  plugboard::Result execute(const plugboard::Request& request) override {
    const plugboard::Json& args = request.args();
    if (!args.is_object() || !args.contains("name") || !args["name"].is_string()) {
      return plugboard::Result::Failed("args.name must be a string");
    }
    const std::string greeting = "Hello, " + args["name"].get<std::string>() + "!";
    return plugboard::Result::Succeeded({{"greeting", greeting}});
  }
};

PLUGBOARD_PLUGIN(@CLASS@, R"({
  "name": "@NAME@",
  "version": "0.1.0",
  "provides": ["template.execute"],
  "description": "Greets args.name",
  "schemas": {"template.execute": {"input": {
    "type": "object",
    "properties": {"name": {"type": "string", "description": "who to greet"}},
    "required": ["name"]
  }}}
})")
