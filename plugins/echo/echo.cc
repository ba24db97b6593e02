// echo: returns its args as output parameters (an object's members one by one; any other
// value as the single parameter "value").
#include <plugboard/sdk.hpp>

namespace {

class Echo : public plugboard::Plugin {
 public:
  plugboard::Result execute(const plugboard::Request& request) override {
    const auto& args = request.args();
    if (args.is_object()) return plugboard::Result::Succeeded(args);
    return plugboard::Result::Succeeded({{"value", args}});
  }
};

}  // namespace

PLUGBOARD_PLUGIN(Echo, R"({
  "name": "echo",
  "version": "1.0.0",
  "provides": ["template.execute"],
  "description": "Returns its arguments as output parameters"
})")
