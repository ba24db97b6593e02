// tests/core/engine_harness.h: the engine (core/workflows/engine.h) on a virtual clock, with
// LeafCalls that answer per template name as a test planned and record every call, and
// builders for small models written as Argo would parse them.
//
// A leaf without a plan succeeds at once, supplying its inputs as output parameters and
// its input `message` (if any) as its result, like Argo's argosay echoing.
#ifndef PLUGBOARD_TESTS_CORE_ENGINE_HARNESS_H_
#define PLUGBOARD_TESTS_CORE_ENGINE_HARNESS_H_

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <mutex>
#include <string>
#include <vector>

#include "core/workflows/engine.h"
#include "tests/core/virtual_run_env.h"

namespace plugboard::testing {

using core::Json;
using core::NodePhase;
using Millis = std::chrono::milliseconds;

struct LeafAnswer {
  core::Phase phase = core::Phase::kSucceeded;
  std::string message;
  Json outputs;  // null: the inputs echoed
  Millis takes{0};
  bool ignores_cancel = false;
  std::optional<Millis> requeue;

  static LeafAnswer make(core::Phase p, std::string m, Json outputs) {
    LeafAnswer a;
    a.phase = p;
    a.message = std::move(m);
    a.outputs = std::move(outputs);
    return a;
  }
  static LeafAnswer ok(Json outputs = Json()) { return make(core::Phase::kSucceeded, "", std::move(outputs)); }
  static LeafAnswer failed(std::string m = "exit code 1") {
    return make(core::Phase::kFailed, std::move(m), Json::object());
  }
  static LeafAnswer error(std::string m = "pod deleted") {
    return make(core::Phase::kError, std::move(m), Json::object());
  }
  static LeafAnswer sleeping(Millis d, bool ignores_cancel = false) {
    LeafAnswer a = ok();
    a.takes = d;
    a.ignores_cancel = ignores_cancel;
    return a;
  }
  static LeafAnswer running(Millis requeue) {
    LeafAnswer a = make(core::Phase::kRunning, "waiting", Json::object());
    a.requeue = requeue;
    return a;
  }
};

class TestLeaves final : public core::LeafCalls {
 public:
  struct Record {
    std::string tmpl, node_id;
    Json filled, inputs;
    Millis at;
    Json args;  // a plugin leaf's, filled
  };
  explicit TestLeaves(VirtualRunEnv& env) : env_(env) {}

  void plan(const std::string& tmpl, std::vector<LeafAnswer> answers) {
    std::lock_guard lock(mu_);
    plans_[tmpl] = std::move(answers);
    counts_[tmpl] = 0;
  }
  void refuse(const std::string& tmpl, core::Outcome o) {
    std::lock_guard lock(mu_);
    refusals_[tmpl] = std::move(o);
  }

  std::optional<core::Outcome> check(const core::LeafCall& call) override {
    std::lock_guard lock(mu_);
    ++checks_;
    auto it = refusals_.find(call.tmpl->name);
    if (it == refusals_.end()) return std::nullopt;
    return it->second;
  }

  core::Dispatch call(const core::LeafCall& call, core::CallControl& control) override {
    LeafAnswer a;
    {
      std::lock_guard lock(mu_);
      auto plan = plans_.find(call.tmpl->name);
      const std::size_t n = counts_[call.tmpl->name]++;
      if (plan != plans_.end() && !plan->second.empty())
        a = plan->second[std::min(n, plan->second.size() - 1)];
      records_.push_back({call.tmpl->name, call.node_id, Json::parse(call.template_text), call.inputs,
                          std::chrono::duration_cast<Millis>(env_.now() - env_.start()),
                          call.plugin.args});
      max_running_ = std::max(max_running_, ++running_);
    }
    bool cancelled = false;
    if (a.takes.count() > 0) cancelled = env_.sleep(a.takes, a.ignores_cancel ? nullptr : &control);
    std::lock_guard lock(mu_);
    --running_;
    core::Dispatch d;
    d.plugin = "test@1.0.0";
    if (cancelled) {
      d.outcome = core::Outcome::error("cancelled");
      return d;
    }
    d.outcome.phase = a.phase;
    d.outcome.message = a.message;
    d.outcome.requeue = a.requeue;
    if (a.outputs.is_null()) {
      d.outcome.outputs = {{"parameters", call.inputs}};
      if (call.inputs.contains("message")) d.outcome.outputs["result"] = call.inputs["message"];
    } else {
      d.outcome.outputs = a.outputs;
    }
    return d;
  }

  std::vector<Record> records(const std::string& tmpl = "") {
    std::lock_guard lock(mu_);
    std::vector<Record> out;
    for (const auto& r : records_) {
      if (tmpl.empty() || r.tmpl == tmpl) out.push_back(r);
    }
    return out;
  }
  std::vector<Millis> times(const std::string& tmpl) {
    std::vector<Millis> out;
    for (const auto& r : records(tmpl)) out.push_back(r.at);
    return out;
  }
  int checks() {
    std::lock_guard lock(mu_);
    return checks_;
  }
  int maxRunning() {
    std::lock_guard lock(mu_);
    return max_running_;
  }

 private:
  VirtualRunEnv& env_;
  std::mutex mu_;
  std::map<std::string, std::vector<LeafAnswer>> plans_;
  std::map<std::string, core::Outcome> refusals_;
  std::map<std::string, std::size_t> counts_;
  std::vector<Record> records_;
  int running_ = 0, max_running_ = 0, checks_ = 0;
};

// ---- model builders

inline core::ParameterDecl param(std::string name, std::optional<Json> def = std::nullopt) {
  core::ParameterDecl p;
  p.name = std::move(name);
  p.default_value = std::move(def);
  return p;
}

// A plugin leaf whose args pass each input on: {"name": "{{inputs.parameters.name}}"}.
inline core::Template leaf(std::string name, std::vector<std::string> inputs = {},
                           std::vector<core::OutputParameterDecl> outputs = {}) {
  core::Template t;
  t.name = std::move(name);
  t.kind = core::Template::Kind::kPlugin;
  t.plugin.key = "test";
  for (auto& i : inputs) {
    t.plugin.args[i] = "{{inputs.parameters." + i + "}}";
    t.inputs.push_back(param(i));
  }
  t.outputs = std::move(outputs);
  t.original = {{"name", t.name}, {"plugin", {{"test", t.plugin.args}}}};
  return t;
}

// A container leaf (a pod, in Argo's counting) that the harness's leaves answer as any
// other: Argo's parallelism rules tell the two apart.
inline core::Template pod(std::string name) {
  core::Template t;
  t.name = std::move(name);
  t.kind = core::Template::Kind::kContainer;
  t.container->image = "busybox";
  t.original = {{"name", t.name}, {"container", {{"image", "busybox"}}}};
  return t;
}

inline core::OutputParameterDecl output(std::string name,
                                        core::OutputParameterDecl::From from =
                                            core::OutputParameterDecl::From::kSupplied,
                                        std::string source = "") {
  core::OutputParameterDecl o;
  o.name = std::move(name);
  o.from = from;
  o.source = std::move(source);
  return o;
}

inline core::TemplateCall call(std::string name, std::string tmpl,
                               std::vector<std::pair<std::string, Json>> args = {}) {
  core::TemplateCall c;
  c.name = std::move(name);
  c.template_name = std::move(tmpl);
  c.arguments = std::move(args);
  return c;
}

// A dag task: `depends` as written; the tasks it names are found in it.
inline core::TemplateCall task(std::string name, std::string tmpl, std::string depends = "",
                               std::vector<std::pair<std::string, Json>> args = {}) {
  core::TemplateCall c = call(std::move(name), std::move(tmpl), std::move(args));
  c.depends = depends;
  std::string word;
  std::set<std::string> seen;
  auto flush = [&] {
    if (!word.empty() && seen.insert(word).second) c.depends_on.push_back(word);
    word.clear();
  };
  bool after_dot = false;
  for (char ch : depends) {
    if (std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_') {
      if (!after_dot) word += ch;
    } else {
      flush();
      after_dot = ch == '.';
    }
  }
  flush();
  return c;
}

inline core::Template dag(std::string name, std::vector<core::TemplateCall> tasks) {
  core::Template t;
  t.name = std::move(name);
  t.kind = core::Template::Kind::kDag;
  t.tasks = std::move(tasks);
  return t;
}

inline core::Template steps(std::string name, std::vector<std::vector<core::TemplateCall>> groups) {
  core::Template t;
  t.name = std::move(name);
  t.kind = core::Template::Kind::kSteps;
  t.fail_fast = false;  // Argo's default for a steps template
  t.steps = std::move(groups);
  return t;
}

inline core::WorkflowModel workflow(std::string entry, std::vector<core::Template> templates) {
  core::WorkflowModel m;
  m.name = "wf";
  m.file = "wf.yaml";
  m.front_end = "argo";
  m.entrypoint = std::move(entry);
  m.templates = std::move(templates);
  return m;
}

class EngineTest : public ::testing::Test {
 protected:
  ~EngineTest() override { env_.shutdown(); }

  // `checked`: the model must pass checkModel (false: to see what the engine itself does
  // with what the checks would refuse).
  core::RunResult run(const core::WorkflowModel& model, const Json& given = Json::object(),
                      bool checked = true) {
    model_ = model;
    if (checked) {
      for (const auto& p : core::checkModel(model_)) ADD_FAILURE() << p.oneLine();
    }
    auto params = core::resolveParameters(model_, given);
    EXPECT_TRUE(params.ok()) << (params.ok() ? "" : params.error().message());
    engine_ = std::make_unique<core::Engine>(leaves_, options_, nullptr, &env_);
    return engine_->run(model_, params.ok() ? *params : Json::object());
  }
  static const core::NodeStatus& node(const core::RunResult& r, const std::string& name) {
    for (const auto& n : r.nodes) {
      if (n.name == name) return n;
    }
    ADD_FAILURE() << "no node " << name;
    static core::NodeStatus none;
    return none;
  }
  static bool has(const core::RunResult& r, const std::string& name) {
    for (const auto& n : r.nodes) {
      if (n.name == name) return true;
    }
    return false;
  }
  static std::string phase(const core::RunResult& r, const std::string& name) {
    return std::string(core::nodePhaseName(node(r, name).phase));
  }
  static std::string outParam(const core::NodeStatus& n, const std::string& name) {
    const std::string* value = n.outputs.parameter(name);
    return value != nullptr ? *value : "<none>";
  }

  VirtualRunEnv env_;
  TestLeaves leaves_{env_};
  core::EngineOptions options_;
  core::WorkflowModel model_;
  std::unique_ptr<core::Engine> engine_;
};

}  // namespace plugboard::testing

#endif  // PLUGBOARD_TESTS_CORE_ENGINE_HARNESS_H_
