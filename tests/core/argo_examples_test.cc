// Argo's examples read by the Argo front end: how many become a model and what refuses
// the others. Runs only with ARGO_EXAMPLES=<argo-checkout>/examples (Argo's files are not
// part of this repository); tools/argo-examples.sh sets it. It prints the counts and
// fails only when the reader throws or a refusal names no file:line.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "core/frontends/argo_workflow.h"
#include "tests/support/files.h"

namespace plugboard::core {
namespace {

namespace fs = std::filesystem;

// What a refusal is about: the field a "<path>: not supported" names (its last part), or
// the message's first words.
std::string feature(const ModelProblem& p) {
  static const std::regex kField(R"(^([A-Za-z0-9_.\[\]]+): not supported)");
  std::smatch m;
  if (std::regex_search(p.message, m, kField)) {
    std::string field = std::regex_replace(m[1].str(), std::regex(R"(\[\d+\])"), "");
    return field.substr(field.rfind('.') + 1);
  }
  return p.message.substr(0, p.message.find_first_of(":'"));
}

TEST(ArgoExamples, EveryExampleWorkflowIsReadOrRefusedByFeature) {
  const char* dir = std::getenv("ARGO_EXAMPLES");
  if (dir == nullptr) GTEST_SKIP() << "set ARGO_EXAMPLES=<argo-checkout>/examples";
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file() && e.path().extension() == ".yaml") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  ArgoReadOptions options;
  options.templates_dir = dir;  // Argo's suite applies every WorkflowTemplate of examples/
  int read = 0, not_workflows = 0, no_test = 0;
  std::map<std::string, std::vector<std::string>> refused;
  for (const auto& file : files) {
    std::string text = testing::readFile(file);
    if (!looksLikeArgo(text) || text.find("\nkind: Workflow\n") == std::string::npos) {
      ++not_workflows;  // WorkflowTemplates, CronWorkflows, ConfigMaps, ...: not run alone
      continue;
    }
    ArgoWorkflowLoad load = loadArgoWorkflow(file, options);
    bool untested = load.model && load.model->labels.contains("workflows.argoproj.io/no-test");
    no_test += untested ? 1 : 0;
    std::string name = fs::relative(file, dir).string() + (untested ? " (no-test)" : "");
    if (load.ok()) {
      ++read;
      std::cout << "read     " << name << "\n";
      continue;
    }
    const ModelProblem& p = load.problems.at(0);
    EXPECT_GT(p.where.line, 0) << p.message;
    std::string line = p.where.file + ":" + std::to_string(p.where.line) + ": " +
                       (p.subject.empty() ? "" : p.subject + ": ") + p.message;
    std::cout << "refused  " << name << "  " << line << "\n";
    refused[feature(p)].push_back(name);
  }
  size_t total_refused = 0;
  for (const auto& [f, names] : refused) total_refused += names.size();
  std::cout << "\nexample workflows: " << read + total_refused << " (" << no_test
            << " labelled no-test); read into a model: " << read << "; refused: " << total_refused
            << "; other kinds (not run alone): " << not_workflows << "\nrefused by feature:\n";
  for (const auto& [f, names] : refused) {
    std::cout << "  " << f << ": " << names.size() << "\n";
  }
}

}  // namespace
}  // namespace plugboard::core
