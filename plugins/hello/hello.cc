// hello: greets args.name and returns the greeting as the output parameter "greeting".
#include <plugboard/sdk.hpp>

namespace {

class Hello : public plugboard::Plugin {
 public:
  plugboard::Result execute(const plugboard::Request& request) override {
    const auto& args = request.args();
    std::string name = "world";
    if (args.is_object() && args.contains("name")) {
      if (!args["name"].is_string()) return plugboard::Result::Failed("args.name must be a string");
      name = args["name"].get<std::string>();
    }
    std::string greeting = "Hello, " + name + "!";
    log().info("greeting " + name);
    return plugboard::Result::Succeeded({{"greeting", greeting}}, greeting);
  }
};

}  // namespace

PLUGBOARD_PLUGIN(Hello, R"({
  "name": "hello",
  "version": "1.2.0",
  "provides": ["template.execute", "hello.greet"],
  "aliases": ["greeter"],
  "concurrency": "parallel",
  "schemas": {
    "template.execute": {"input": {"type": "object",
                                   "properties": {"name": {"type": "string"}}},
                         "output": {"type": "object",
                                    "properties": {"greeting": {"type": "string"}}}},
    "hello.greet": {"input": {"type": "object",
                              "properties": {"name": {"type": "string"}}}}
  },
  "description": "Greets someone"
})")
