#include "core/workflows/template_text.h"

#include <gtest/gtest.h>

namespace plugboard::core {
namespace {

const Json& variables() {
  static const Json r = [] {
    Json j = Json::parse(R"({
      "inputs": {"parameters": {"who": "Ada", "n": 3}},
      "workflow": {"name": "wf-1"}
    })");
    j["inputs"]["parameters"]["bad"] = "not UTF-8: \xff";
    return j;
  }();
  return r;
}

// The rule as written for a whole template: filled as a value (unknown tags kept), the
// call's name and the inputs' values set, then written as compact JSON.
Expected<std::string> asAWhole(const Json& tmpl, const FillOptions& options,
                               const std::string* name, const Json& inputs) {
  JsonScope scope(variables());
  auto filled = fill(tmpl, scope, options);
  if (!filled) return filled.error();
  Json t = std::move(*filled);
  if (name != nullptr) t["name"] = *name;
  if (t.contains("inputs") && t["inputs"].is_object() && t["inputs"].contains("parameters") &&
      t["inputs"]["parameters"].is_array()) {
    for (Json& p : t["inputs"]["parameters"]) {
      if (!p.is_object() || !p.contains("name") || !p["name"].is_string()) continue;
      if (inputs.contains(p["name"].get<std::string>())) p["value"] = inputs[p["name"].get<std::string>()];
    }
  }
  return t.dump(-1, ' ', false, Json::error_handler_t::replace);
}

struct TextCase {
  const char* what;
  std::string tmpl;  // JSON
  bool prepared;
  const char* name = nullptr;
  std::size_t limit = 1 << 20;
  bool raw = false;  // with a string that is not UTF-8
};

// Each template, written from prepared parts (or as a whole where it cannot be), gives
// the text (or the error) that filling it as a whole gives.
TEST(TemplateTextTest, WritesWhatFillingTheWholeTemplateWrites) {
  const Json inputs = {{"text", "hi \"there\""}, {"who", "Bo"}, {"other", "x"}};
  const TextCase cases[] = {
      {"Argo's plugin template", R"({"name":"echo","inputs":{"parameters":[{"name":"text"}]},
        "outputs":{"parameters":[{"name":"text","valueFrom":{"supplied":{}}}]},
        "plugin":{"echo":{"text":"{{inputs.parameters.text}}"}}})", true},
      {"a parameter's value written over, its tag filled first",
       R"({"name":"t","inputs":{"parameters":[{"name":"who","value":"{{inputs.parameters.n}}",
        "default":"d","valueFrom":{}},{"name":"unset","value":"{{inputs.parameters.who}}"},
        {"name":"none"},7,{"value":"no name"}]},"plugin":{"p":{}}})", true},
      {"tags it does not know left as written, a whole tag keeps its type",
       R"({"name":"{{workflow.name}}","plugin":{"p":{"n":"{{inputs.parameters.n}}",
        "u":"{{outputs.parameters.x}} and {{inputs.parameters.who}}","l":[1,"{{workflow.name}}",
        {"deep":["{{inputs.parameters.n}}",null,true,2.5]}],"e":{},"a":[]}}})", true},
      {"the call's name set over the template's", R"({"name":"{{workflow.name}}","x":1})", true,
       "call-a"},
      {"the call's name added where the template has none",
       R"({"inputs":{"parameters":[{"name":"who"}]},"plugin":{"p":"{{inputs.parameters.who}}"}})",
       true, "call-b"},
      {"names and strings that need escaping",
       R"({"name":"n","a\"b\n":"\u0001\t","plugin":{"p":{"k\\":"{{inputs.parameters.bad}}"}}})",
       true, nullptr, 1 << 20, true},
      {"an expression", R"({"name":"n","plugin":{"p":"{{=inputs.parameters.n + 1}}"}})", true},
      {"an expression that fails",
       R"({"name":"n","plugin":{"p":"{{=asInt('x')}}"},"q":"{{inputs.parameters.who}}"})", true},
      {"an expression that fails in a value written over",
       R"({"name":"n","inputs":{"parameters":[{"name":"who","value":"{{=asInt('x')}}"}]}})",
       true},
      {"a tag without its end", R"({"name":"n","plugin":{"p":"{{inputs"}})", true},
      {"over the limit in the text as written", R"({"name":"n","a":"0123456789","b":"{{workflow.name}}"})",
       true, nullptr, 14},
      {"over the limit in a filled tag", R"({"name":"n","a":"{{inputs.parameters.who}}xxxxxxxx"})",
       true, nullptr, 12},
      {"just under the limit", R"({"name":"n","a":"{{inputs.parameters.who}}xxxxxxx"})", true,
       nullptr, 13},
      {"a tag in a member's name", R"({"name":"n","{{workflow.name}}":1})", false},
      {"inputs as a tag", R"({"name":"n","inputs":"{{workflow.name}}"})", false},
      {"parameters as a tag", R"({"name":"n","inputs":{"parameters":"{{workflow.name}}"}})", false},
      {"a parameter as a tag", R"({"name":"n","inputs":{"parameters":["{{workflow.name}}"]}})",
       false},
      {"a parameter's name as a tag",
       R"({"name":"n","inputs":{"parameters":[{"name":"{{workflow.name}}"}]}})", false, "c"},
  };
  JsonScope scope(variables());
  for (const TextCase& c : cases) {
    SCOPED_TRACE(c.what);
    Json tmpl = Json::parse(c.tmpl);
    if (c.raw) tmpl["raw"] = "\xfe\xff";
    FillOptions options;
    options.keep_unknown = true;
    options.limit = c.limit;
    const std::string name = c.name != nullptr ? c.name : "";
    const std::string* named = c.name != nullptr ? &name : nullptr;
    const TemplateText text(tmpl);
    EXPECT_EQ(text.prepared(), c.prepared);
    auto want = asAWhole(tmpl, options, named, inputs);
    for (int call = 0; call < 2; ++call) {  // a prepared template serves every call alike
      auto got = text.write(scope, options, named, inputs);
      ASSERT_EQ(got.ok(), want.ok()) << (got.ok() ? *got : got.error().message());
      if (want.ok()) {
        EXPECT_EQ(*got, *want);
      } else {
        EXPECT_EQ(got.error().message(), want.error().message());
      }
    }
  }
}

TEST(TemplateTextTest, SetsEachParameterValueFromTheInputsInNameOrder) {
  const TemplateText text(Json::parse(
      R"({"name":"t","inputs":{"parameters":[{"name":"a","default":"1"},{"name":"b","valueFrom":{}}]}})"));
  ASSERT_TRUE(text.prepared());
  JsonScope scope(variables());
  FillOptions options;
  options.keep_unknown = true;
  auto got = text.write(scope, options, nullptr, Json{{"a", "x"}, {"b", "3"}});
  ASSERT_TRUE(got.ok()) << got.error().message();
  EXPECT_EQ(*got, R"({"inputs":{"parameters":[{"default":"1","name":"a","value":"x"},)"
                  R"({"name":"b","value":"3","valueFrom":{}}]},"name":"t"})");
}

}  // namespace
}  // namespace plugboard::core
