// fuzz/argo_args.cc: Argo's messages (core/serving/argo.h) and a plugin's result
// (core/launch/outcome.h), both read by hand-written passes over the bytes.
//
// The input is read twice: as an ExecuteTemplateArgs body, whose streaming reader must
// agree with the JSON library's parse of the whole body (the last of a repeated member
// counts) and refuse it exactly when it is nested too deep or holds a NUL byte; and as a plugin's
// result, whose ExecuteTemplateReply must be valid JSON that carries every output parameter exactly
// once.
#include <set>
#include <string>

#include <plugboard/host/json_text.h>

#include "core/launch/outcome.h"
#include "core/serving/argo.h"
#include "fuzz/support.h"

namespace {

namespace core = plugboard::core;
using core::Json;

void checkArgs(std::string_view body) {
  auto request = core::parseExecuteTemplateArgs(body);
  const Json whole = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!request) {
    FUZZ_CHECK(!request.error().message().empty());
    // Refused: then the body holds a NUL byte, is too deep, or is not JSON of the expected
    // shape. (The JSON library would read "{...}\0..." as the object before the NUL.)
    if (plugboard::host::holdsNul(body)) {
      FUZZ_CHECK(request.error().message() == std::string("the body ") + plugboard::host::kNulText);
      return;
    }
    if (plugboard::host::jsonDeeperThan(body)) {
      // JSON that deep is refused for its depth; text that is not JSON for whichever of
      // the two the reader meets first.
      FUZZ_CHECK(request.error().message() == "the body is " + plugboard::host::tooDeepText() ||
                 whole.is_discarded());
      return;
    }
    if (whole.is_discarded() || !whole.is_object()) return;
    const auto tmpl = whole.find("template");
    const auto workflow = whole.find("workflow");
    FUZZ_CHECK((workflow != whole.end() && !workflow->is_object()) || tmpl == whole.end() ||
               !tmpl->is_object() || !tmpl->contains("plugin") || !(*tmpl)["plugin"].is_object() ||
               (*tmpl)["plugin"].size() != 1);
    return;
  }
  FUZZ_CHECK(!whole.is_discarded() && !plugboard::host::holdsNul(body));
  const Json& plugin = whole.at("template").at("plugin");
  FUZZ_CHECK(plugin.is_object() && plugin.size() == 1);
  FUZZ_CHECK(plugin.begin().key() == request->key);
  FUZZ_CHECK(plugin.begin().value() == request->args);
  FUZZ_CHECK(request->context_text == body);
}

void checkReply(std::string_view result) {
  core::Outcome outcome = core::parseOutcome(result, "plugin@1.0.0");
  FUZZ_CHECK(!outcome.requeue ||
             (outcome.requeue->count() >= 0 && *outcome.requeue <= core::kMaxDuration));
  core::keepArgoDecodable(outcome, "plugin@1.0.0");
  FUZZ_CHECK(core::checkArgoOutputs(outcome.outputs).ok());
  const std::string reply = core::executeTemplateReply(outcome, core::Millis(1000));
  Json j = Json::parse(reply, nullptr, /*allow_exceptions=*/false);
  FUZZ_CHECK(j.is_object() && j.contains("node"));
  const auto parameters = outcome.outputs.find("parameters");
  if (parameters == outcome.outputs.end() || !parameters->is_object() || parameters->empty())
    return;
  std::set<std::string> sent;
  for (const auto& p : j["node"]["outputs"]["parameters"]) {
    const std::string& name = p.at("name").get_ref<const std::string&>();
    FUZZ_CHECK(sent.insert(name).second);
    const auto kept = parameters->find(name);
    FUZZ_CHECK(kept != parameters->end() && *kept == p.at("value"));
  }
  FUZZ_CHECK(sent.size() == parameters->size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input = plugboard::fuzz::asText(data, size);
  checkArgs(input);
  checkReply(input);
  return 0;
}
