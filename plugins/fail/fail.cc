// fail: always fails, with args.message as the reason.
#include <plugboard/sdk.hpp>

namespace {

class Fail : public plugboard::Plugin {
 public:
  plugboard::Result execute(const plugboard::Request& request) override {
    const auto& args = request.args();
    std::string message = "failed as asked";
    if (args.is_object() && args.contains("message") && args["message"].is_string()) {
      message = args["message"].get<std::string>();
    }
    return plugboard::Result::Failed(message);
  }
};

}  // namespace

PLUGBOARD_PLUGIN(Fail, R"({
  "name": "fail",
  "version": "1.0.0",
  "provides": ["template.execute"],
  "description": "Always fails, with args.message as the reason"
})")
