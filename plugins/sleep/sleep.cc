// sleep: waits args.seconds (default 1), then succeeds. Cancelling the call ends the wait
// at once with an Error that says so, which makes it the plugin for deadline tests.
#include <chrono>

#include <plugboard/sdk.hpp>

namespace {

class Sleep : public plugboard::Plugin {
 public:
  plugboard::Result execute(const plugboard::Request& request) override {
    const auto& args = request.args();
    double seconds = 1.0;
    if (args.is_object() && args.contains("seconds")) {
      if (!args["seconds"].is_number() || args["seconds"].get<double>() < 0) {
        return plugboard::Result::Failed("args.seconds must be a non-negative number");
      }
      seconds = args["seconds"].get<double>();
    }
    const auto wait = std::chrono::duration<double>(seconds);
    if (request.waitCancelled(wait)) return plugboard::Result::Error("cancelled while sleeping");
    return plugboard::Result::Succeeded({{"slept", std::to_string(seconds)}});
  }
};

}  // namespace

PLUGBOARD_PLUGIN(Sleep, R"({
  "name": "sleep",
  "version": "1.0.0",
  "provides": ["template.execute"],
  "schemas": {"template.execute": {"input": {"type": "object",
                                             "properties": {"seconds": {"type": "number"}}}}},
  "description": "Waits args.seconds, then succeeds; cancellable"
})")
