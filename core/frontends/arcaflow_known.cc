// core/frontends/arcaflow_known.cc: see arcaflow_known.h.
#include "core/frontends/arcaflow_known.h"

#include "core/workflows/arcaflow_expression.h"

namespace plugboard::core {
namespace {

constexpr int kMaxDepth = 256;

Json known(const Json& value, const Json* input, const arcaflow::Context& context, int depth) {
  if (depth > kMaxDepth) return value;
  const std::string tag = arcaflowTag(value);
  if (tag.empty()) {
    if (!value.is_structured()) return value;
    Json out = value;
    for (auto& item : out) item = known(item, input, context, depth + 1);
    return out;
  }
  if (tag != "!expr" && tag != "!wait-optional" && tag != "!soft-optional") return value;
  const Json& text = value["expr"];
  if (!text.is_string()) return value;
  auto expr = arcaflow::parseExpression(text.get<std::string>());
  if (!expr) return value;
  for (const auto& path : expr->dependencies()) {
    if (input == nullptr || path.size() < 2 || path[1] != "input") return value;
  }
  const Json doc = {{"input", input != nullptr ? *input : Json::object()},
                    {"steps", Json::object()}};
  auto result = expr->evaluate(doc, context);
  return result ? *result : value;
}

void addSteps(const ArcaflowWorkflow& wf, const std::string& prefix, const Json* input,
              const arcaflow::Context& context, std::map<std::string, Json>& out) {
  for (const auto& s : wf.steps) {
    const std::string name = prefix + s.id;
    if (s.kind == ArcaflowStep::Kind::kPlugin) {
      out[name] = known(s.input.is_null() ? Json::object() : s.input, input, context, 0);
    } else if (s.sub) {
      addSteps(*s.sub, name + "/", nullptr, context, out);
    }
  }
}

}  // namespace

std::map<std::string, Json> arcaflowKnownInputs(const ArcaflowWorkflow& wf, const Json* input,
                                                const std::filesystem::path& files_dir,
                                                bool read_anywhere) {
  arcaflow::Context context;
  context.files_dir = files_dir;
  context.read_anywhere = read_anywhere;
  std::map<std::string, Json> out;
  addSteps(wf, "", input, context, out);
  return out;
}

bool arcaflowUnknown(const Json& value) { return !arcaflowTag(value).empty(); }

}  // namespace plugboard::core
