// shout: upper-cases args.text and adds an exclamation mark.
#include <cctype>

#include <plugboard/sdk.hpp>

class Shout : public plugboard::Plugin {
 public:
  plugboard::Result execute(const plugboard::Request& request) override {
    const auto& args = request.args();
    if (!args.is_object() || !args.contains("text") || !args["text"].is_string()) {
      return plugboard::Result::Failed("args.text must be a string");
    }
    std::string text = args["text"].get<std::string>();
    for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return plugboard::Result::Succeeded({{"text", text + "!"}});
  }
};

PLUGBOARD_PLUGIN(Shout, R"({
  "name": "shout",
  "version": "0.1.0",
  "provides": ["template.execute"],
  "description": "Upper-cases args.text and adds an exclamation mark"
})")
