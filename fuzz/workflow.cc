// fuzz/workflow.cc: a workflow file as `run` and `validate` read it: the file's own checks
// (core/workflows/workflow.h), the input values, and the checks against installed plugins
// (core/workflows/workflow_check.h), here a catalog of manifests with schemas, aliases and
// declared outputs, so that the fuzzer reaches every check without plugin files; and the
// file read a step at a time against the same file read whole.
#include <cmath>
#include <string>
#include <vector>

#include "core/manifests/catalog.h"
#include "core/workflows/workflow.h"
#include "core/workflows/workflow_check.h"
#include "fuzz/support.h"
#include "tests/support/workflow_dump.h"

namespace {

namespace core = plugboard::core;

const core::Catalog& catalog() {
  static const core::Catalog made = [] {
    const char* manifests[] = {
        R"({"kind":"executor","name":"hello","version":"1.2.0","abi":1,
            "provides":["template.execute"],"aliases":["greeter"],
            "schemas":{"template.execute":{
              "input":{"type":"object","required":["name"],"additionalProperties":false,
                       "properties":{"name":{"type":"string","minLength":1,"maxLength":40,
                                             "pattern":"^[A-Za-z ]+$"},
                                     "times":{"type":"integer","minimum":1,"maximum":10}}},
              "output":{"properties":{"greeting":{"type":"string"}}}}}})",
        R"({"kind":"executor","name":"hello","version":"1.0.0","abi":1,
            "provides":["template.execute"]})",
        R"({"kind":"executor","name":"multi","version":"2.0.0-rc.1","abi":1,
            "provides":["text.count","text.upper"],
            "schemas":{"text.count":{"input":{"type":"object","properties":{
              "text":{"type":["string","null"]},"words":{"type":"array","items":{"type":"string"},
              "maxItems":3},"mode":{"enum":["chars","words"]}}}}}})",
        R"({"kind":"executor","name":"legacy","version":"0.1.0","abi":1})",
    };
    std::vector<core::CatalogEntry> entries;
    for (const char* text : manifests) {
      auto m = core::parseManifest(text);
      FUZZ_CHECK(m.ok());
      const std::string label = m->name + "@" + m->version.text();
      entries.push_back({std::move(*m), "/plugins/" + label + ".so", label});
    }
    return core::Catalog::fromEntries(std::move(entries), {});
  }();
  return made;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = plugboard::fuzz::asText(data, size);
  const auto loaded = core::parseWorkflow(text, "fuzz.toml");
  // Read a step at a time or whole, the file gives the same workflow and problems.
  const std::string whole =
      plugboard::testing::workflowDump(
          core::parseWorkflow(text, "fuzz.toml", core::WorkflowReading::kWhole))
          .dump();
  FUZZ_CHECK(plugboard::testing::workflowDump(loaded).dump() == whole);
  for (const auto& p : loaded.problems) FUZZ_CHECK(!p.oneLine().empty());
  if (!loaded.workflow) {
    FUZZ_CHECK(!loaded.problems.empty());
    return 0;
  }
  const core::Workflow& wf = *loaded.workflow;
  // A duration is never negative nor beyond the longest, however large the number written;
  // a retry factor is a finite number of at least 1 (TOML allows inf and nan).
  for (const auto& step : wf.steps) {
    FUZZ_CHECK(!step.timeout ||
               (step.timeout->count() >= 0 && *step.timeout <= core::kMaxDuration));
    FUZZ_CHECK(step.retry.backoff.count() >= 0 && step.retry.backoff <= core::kMaxDuration);
    FUZZ_CHECK(std::isfinite(step.retry.factor) && step.retry.factor >= 1);
  }
  auto inputs = core::resolveInputs(wf, {});
  const core::Json values = inputs ? *inputs : core::Json::object();
  for (const auto& p : core::checkWorkflow(wf, catalog(), values)) {
    FUZZ_CHECK(!p.message.empty());
  }
  return 0;
}
