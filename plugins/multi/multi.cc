// multi: one plugin, two RPCs. "text.upper" upper-cases args.text; "text.count" counts
// its characters and words. It also answers when polled ("polled": true).
#include <cctype>
#include <sstream>

#include <plugboard/sdk.hpp>

namespace {

class Multi : public plugboard::Plugin {
 public:
  plugboard::Result execute(const plugboard::Request& request) override {
    const auto& args = request.args();
    if (!args.is_object() || !args.contains("text") || !args["text"].is_string()) {
      return plugboard::Result::Failed("args.text must be a string");
    }
    std::string text = args["text"].get<std::string>();
    const std::string rpc = request.rpc();
    if (rpc == "text.upper") {
      for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      return plugboard::Result::Succeeded({{"text", text}});
    }
    if (rpc == "text.count") {
      std::istringstream words(text);
      std::size_t count = 0;
      for (std::string w; words >> w;) ++count;
      return plugboard::Result::Succeeded(
          {{"characters", std::to_string(text.size())}, {"words", std::to_string(count)}});
    }
    return plugboard::Result::Error("multi does not provide '" + rpc + "'");
  }
};

}  // namespace

PLUGBOARD_PLUGIN(Multi, R"({
  "name": "multi",
  "version": "1.0.0",
  "polled": true,
  "provides": ["text.upper", "text.count"],
  "schemas": {
    "text.upper": {"input": {"type": "object", "required": ["text"],
                             "properties": {"text": {"type": "string"}}}},
    "text.count": {"input": {"type": "object", "required": ["text"],
                             "properties": {"text": {"type": "string"}}}}
  },
  "description": "Upper-cases text, or counts its characters and words"
})")
