// core/frontends/arcaflow_values.cc: see arcaflow_values.h.
#include "core/frontends/arcaflow_values.h"

#include <functional>
#include <map>
#include <regex>

#include "core/workflows/arcaflow_expression.h"
#include "core/workflows/expression.h"

namespace plugboard::core {
namespace {

// What a step left for expressions to read.
struct StepState {
  std::string phase;           // the node's phase ("Succeeded", "Skipped"...); empty: not ended
  std::string message;         // the node's message
  std::optional<Json> values;  // outputs.values: the answered fields and output_id
};

// The engine's data model (workflow.go's loopState.data): input, and each step's stages.
Json document(const ArcaflowWorkflow& wf, const Json& input,
              const std::function<StepState(const std::string&)>& state) {
  Json steps = Json::object();
  for (const auto& s : wf.steps) {
    Json stages = Json::object();
    const StepState st = state(s.id);
    if (st.phase == "Skipped" && st.message == arcaflowDisabledMessage(s)) {
      stages["disabled"] = {{"output", {{"message", st.message}}}};
    } else if (st.values && st.values->is_object() && st.values->contains("output_id")) {
      Json data = *st.values;
      const std::string id =
          data["output_id"].is_string() ? data["output_id"].get<std::string>() : "";
      data.erase("output_id");
      stages["outputs"] = {{id, std::move(data)}};
    }
    steps[s.id] = std::move(stages);
  }
  return {{"input", input.is_null() ? Json::object() : input}, {"steps", std::move(steps)}};
}

enum class Got { kValue, kAbsent, kUnresolved };
struct Filled {
  Got got = Got::kValue;
  Json value;
  std::string why;  // kUnresolved: the path no step gave
};

class Filler {
 public:
  Filler(const Json& doc, const std::filesystem::path& files_dir, std::string file)
      : doc_(doc), file_(std::move(file)) {
    context_.files_dir = files_dir;
  }

  Expected<Filled> fill(const Json& v) const {
    const std::string tag = arcaflowTag(v);
    if (tag.empty()) {
      if (v.is_object()) {
        Filled out{Got::kValue, Json::object(), {}};
        for (const auto& [k, member] : v.items()) {
          auto f = fill(member);
          if (!f) return f.error();
          if (f->got == Got::kUnresolved) return f;
          if (f->got == Got::kValue) out.value[k] = std::move(f->value);
        }
        return out;
      }
      if (v.is_array()) {
        Filled out{Got::kValue, Json::array(), {}};
        for (const auto& item : v) {
          auto f = fill(item);
          if (!f) return f.error();
          if (f->got == Got::kUnresolved) return f;
          if (f->got == Got::kValue) out.value.push_back(std::move(f->value));
        }
        return out;
      }
      return Filled{Got::kValue, v, {}};
    }
    if (tag == "!oneof") return oneOf(v);
    const std::string text = v["expr"].get<std::string>();
    if (tag == "!ordisabled") {
      const std::string step = v["step"].get<std::string>();
      const Json& stages = doc_["steps"][step];
      if (stages.contains("disabled")) {
        Json out = stages["disabled"]["output"];
        out["result"] = "disabled";
        return Filled{Got::kValue, std::move(out), {}};
      }
      auto f = expression(text, v);
      if (!f || f->got != Got::kValue) return f;
      if (!f->value.is_object())
        return Error(where(v) + "!ordisabled '" + text + "' is not an object");
      f->value["result"] = "enabled";
      return f;
    }
    auto f = expression(text, v);
    // An optional value whose step gave nothing is left out (resolveOptionalExpression).
    if (f && f->got == Got::kUnresolved && (tag == "!wait-optional" || tag == "!soft-optional"))
      return Filled{Got::kAbsent, {}, {}};
    return f;
  }

 private:
  std::string where(const Json& v) const {
    return file_ + ":" + std::to_string(v.value("line", 0)) + ":" +
           std::to_string(v.value("column", 0)) + ": ";
  }

  // The first option that resolves, with the discriminator set to its key.
  Expected<Filled> oneOf(const Json& v) const {
    std::string why;
    for (const auto& [key, option] : v["one_of"].items()) {
      auto f = fill(option);
      if (!f) return f.error();
      if (f->got != Got::kValue) {
        if (why.empty()) why = f->why;
        continue;
      }
      if (!f->value.is_object())
        return Error(where(v) + "!oneof option '" + key + "' is not an object");
      f->value[v["discriminator"].get<std::string>()] = key;
      return f;
    }
    return Filled{Got::kUnresolved, {}, why.empty() ? "no !oneof option" : why};
  }

  Expected<Filled> expression(const std::string& text, const Json& v) const {
    auto expr = arcaflow::parseExpression(text);
    if (!expr) return Error(where(v) + "'" + text + "': " + expr.error().message());
    for (const auto& path : expr->dependencies()) {
      if (path.size() < 4 || path[1] != "steps") continue;
      const Json* at = &doc_;
      for (std::size_t i = 1; i < std::min<std::size_t>(path.size(), 5); ++i) {
        const std::string key = path[i].is_string() ? path[i].get<std::string>() : path[i].dump();
        if (!at->is_object() || !at->contains(key)) {
          return Filled{Got::kUnresolved, {}, arcaflow::pathText(path)};
        }
        at = &(*at)[key];
      }
      if (path.size() == 4 && at->empty())  // $.steps.X.outputs: any output
        return Filled{Got::kUnresolved, {}, arcaflow::pathText(path)};
    }
    auto value = expr->evaluate(doc_, context_);
    if (!value) return Error(where(v) + "'" + text + "': " + value.error().message());
    return Filled{Got::kValue, std::move(*value), {}};
  }

  const Json& doc_;
  std::string file_;
  arcaflow::Context context_;
};

// The document as the run's scope shows it (the dag's calls beside the one asked about);
// `nested`: a sub-workflow's, whose input is its dag's parameter `input` (the item, as
// JSON text), with its scope's defaults.
Json scopeDocument(const ArcaflowWorkflow& wf, const Scope& scope, bool nested = false) {
  Json input = Json::object();
  if (nested) {
    if (auto given = scope.lookup("inputs.parameters.input")) {
      input = *given;
      if (input.is_string()) {
        Json parsed = Json::parse(input.get<std::string>(), nullptr, false);
        if (!parsed.is_discarded()) input = std::move(parsed);
      }
    }
    if (input.is_object()) input = typedArcaflowInput(wf, std::move(input));
  } else {
    input = scope.lookup("workflow.parameters").value_or(Json::object());
  }
  return document(wf, input, [&](const std::string& id) {
    StepState st;
    const std::string base = "tasks." + id + ".";
    if (auto p = scope.lookup(base + "status"); p && p->is_string())
      st.phase = p->get<std::string>();
    if (auto m = scope.lookup(base + "message"); m && m->is_string())
      st.message = m->get<std::string>();
    st.values = scope.lookup(base + "outputs.values");
    return st;
  });
}

std::string notProduced(const std::string& path) {
  return "not run: it reads " + path + ", which the step did not produce";
}

}  // namespace

std::string arcaflowDisabledMessage(const ArcaflowStep& step) {
  // provider.go transitionToDisabled: "Step <run id>/<plugin step id> disabled".
  return "Step " + step.id + "/" + step.step + " disabled";
}

ArcaflowValues::ArcaflowValues(std::shared_ptr<const ArcaflowWorkflow> workflow,
                               std::filesystem::path files_dir)
    : wf_(std::move(workflow)), files_dir_(std::move(files_dir)) {
  addRoles(*wf_, "", false);
}

// The template names arcaflowModel() gives (arcaflow_workflow.h).
void ArcaflowValues::addRoles(const ArcaflowWorkflow& wf, const std::string& prefix, bool nested) {
  for (const auto& s : wf.steps) {
    const std::string name = prefix + s.id;
    if (s.kind == ArcaflowStep::Kind::kPlugin) {
      roles_[name] = Role{Role::Kind::kStep, &wf, &s, nested};
      continue;
    }
    roles_[name] = Role{Role::Kind::kForeach, &wf, &s, nested};
    if (!s.sub) continue;
    roles_[name + ":workflow"] = Role{Role::Kind::kSubWorkflow, s.sub.get(), &s, true};
    addRoles(*s.sub, name + "/", true);
  }
}

const ArcaflowValues::Role* ArcaflowValues::role(const std::string& template_name) const {
  auto it = roles_.find(template_name);
  return it == roles_.end() ? nullptr : &it->second;
}

Expected<ValueLanguage::Decision> ArcaflowValues::decide(const TemplateCall& call,
                                                         const Template& tmpl,
                                                         const Scope& scope) const {
  (void)call;
  Decision d;
  const Role* r = role(tmpl.name);
  if (r == nullptr || r->kind == Role::Kind::kSubWorkflow) {
    d.args = tmpl.kind == Template::Kind::kPlugin ? tmpl.plugin.args : Json::object();
    return d;
  }
  const ArcaflowStep* step = r->step;
  const Json doc = scopeDocument(*r->wf, scope, r->nested);
  const Filler filler(doc, files_dir_, r->wf->file.string());
  // stop_if already true: the step is cancelled before it runs (its context is).
  if (!step->stop_if.is_null()) {
    auto stop = filler.fill(step->stop_if);
    if (stop && stop->got == Got::kValue && stop->value != Json(false)) {
      d.run = false;
      d.message = "stopped by stop_if before it ran";
      return d;
    }
  }
  const std::string subject = "step '" + step->id + "': ";
  auto fail = [&](const char* field, const Error& e) {
    return Error(subject + field + ": " + e.message());
  };
  // provider.go: the enabling stage reads `enabled`; false is the disabled stage.
  if (!step->enabled.is_null()) {
    auto enabled = filler.fill(step->enabled);
    if (!enabled) return fail("enabled", enabled.error());
    if (enabled->got != Got::kValue) {
      d.run = false;
      d.message = notProduced(enabled->why);
      return d;
    }
    if (!enabled->value.is_boolean())
      return Error(subject + "enabled: " + enabled->value.dump() + " is not a boolean");
    if (!enabled->value.get<bool>()) {
      d.run = false;
      d.message = arcaflowDisabledMessage(*step);
      return d;
    }
  }
  for (const auto& [field, value] :
       {std::pair{"wait_for", &step->wait_for}, std::pair{"input", &step->input}}) {
    if (value->is_null()) continue;
    auto f = filler.fill(*value);
    if (!f) return fail(field, f.error());
    if (f->got != Got::kValue) {
      d.run = false;
      d.message = notProduced(f->why);
      return d;
    }
    if (std::string_view(field) == "input") d.args = std::move(f->value);
  }
  if (r->kind == Role::Kind::kForeach) {
    // internal/step/foreach/provider.go: the execute stage's `items`, a list.
    auto f = filler.fill(step->items);
    if (!f) return fail("items", f.error());
    if (f->got != Got::kValue) {
      d.run = false;
      d.message = notProduced(f->why);
      return d;
    }
    if (!f->value.is_array())
      return Error(subject + "items: " + f->value.dump() + " is not a list");
    // processInput: every item must fit the sub-workflow's input before any runs.
    if (step->sub) {
      for (std::size_t i = 0; i < f->value.size(); ++i) {
        const auto bad = checkArcaflowInput(*step->sub, f->value[i]);
        if (!bad.empty())
          return Error(subject + "invalid input item " + std::to_string(i) +
                       " for the sub-workflow: " + bad.front());
      }
    }
    d.args = {{"items", std::move(f->value)}};
  }
  if (d.args.is_null()) d.args = Json::object();
  return d;
}

bool ArcaflowValues::stops(const TemplateCall& call, const Scope& scope,
                           std::string* message) const {
  const Role* r = role(call.template_name);
  if (r == nullptr || r->kind != Role::Kind::kStep || r->step->stop_if.is_null()) return false;
  const ArcaflowStep* step = r->step;
  const Json doc = scopeDocument(*r->wf, scope, r->nested);
  const Filler filler(doc, files_dir_, r->wf->file.string());
  auto stop = filler.fill(step->stop_if);
  if (!stop || stop->got != Got::kValue || stop->value == Json(false)) return false;
  if (message != nullptr) *message = "stopped by stop_if";
  return true;
}

std::optional<Json> ArcaflowValues::outputs(const Template& tmpl, const Scope& scope) const {
  const Role* r = role(tmpl.name);
  if (r == nullptr || r->kind == Role::Kind::kStep) return std::nullopt;
  if (r->kind == Role::Kind::kSubWorkflow) {
    // The sub-workflow's output, its outputs in file order (a foreach reads `success`).
    const Json doc = scopeDocument(*r->wf, scope, true);
    const Filler filler(doc, files_dir_, r->wf->file.string());
    std::string why;
    for (const auto& [id, value] : r->wf->outputs) {
      auto f = filler.fill(value);
      if (!f) {
        if (why.empty()) why = "output '" + id + "': " + f.error().message();
        continue;
      }
      if (f->got == Got::kValue) return Json{{"output_id", id}, {"data", std::move(f->value)}};
      if (why.empty()) why = "output '" + id + "' reads " + f->why + ", which was not produced";
    }
    return Json{{"error", "no output of sub-workflow " + r->wf->file.filename().string() +
                              " could be produced: " + why}};
  }
  // The foreach step: its items' outputs (the loop task "items" of its dag).
  Json items = scope.lookup("tasks.items.outputs.values").value_or(Json::array());
  if (!items.is_array()) items = Json::array();
  Json data = Json::array(), done = Json::object(), messages = Json::object();
  for (std::size_t i = 0; i < items.size(); ++i) {
    const Json& item = items[i];
    const std::string key = std::to_string(i);
    if (item.is_object() && item.value("output_id", "") == "success") {
      data.push_back(item["data"]);
      done[key] = item["data"];
    } else if (item.is_object() && item.contains("output_id")) {
      messages[key] = "the sub-workflow gave output '" + item["output_id"].get<std::string>() + "'";
    } else if (item.is_object() && item.contains("error") && item["error"].is_string()) {
      messages[key] = item["error"];
    } else {
      messages[key] = "the sub-workflow did not run";
    }
  }
  if (messages.empty()) return Json{{"output_id", "success"}, {"data", std::move(data)}};
  return Json{{"output_id", "error"}, {"data", std::move(done)}, {"messages", std::move(messages)}};
}

Expected<std::optional<ArcaflowValues::Output>> ArcaflowValues::output(const RunResult& result,
                                                                       const Json& input) const {
  std::map<std::string, const NodeStatus*> by_step;
  if (!result.nodes.empty()) {
    const std::string& dag = result.nodes.front().id;
    for (const auto& n : result.nodes) {
      if (n.boundary_id == dag) by_step[n.display_name] = &n;
    }
  }
  const Json doc = document(*wf_, input, [&](const std::string& id) {
    StepState st;
    auto it = by_step.find(id);
    if (it == by_step.end()) return st;
    st.phase = nodePhaseName(it->second->phase);
    st.message = it->second->message;
    if (it->second->outputs.values) st.values = *it->second->outputs.values;
    return st;
  });
  const Filler filler(doc, files_dir_, wf_->file.string());
  std::optional<Output> best;
  std::optional<std::chrono::steady_clock::time_point> best_at;
  for (std::size_t i = 0; i < wf_->outputs.size(); ++i) {
    const auto& [id, value] = wf_->outputs[i];
    auto f = filler.fill(value);
    if (!f) return Error("output '" + id + "': " + f.error().message());
    if (f->got != Got::kValue) continue;
    // When this output's node resolved: as its last step ended.
    std::chrono::steady_clock::time_point at{};
    for (const auto& step : wf_->outputs_depend_on[i]) {
      auto it = by_step.find(step);
      if (it != by_step.end() && it->second->finished) at = std::max(at, *it->second->finished);
    }
    if (!best || at < *best_at) {
      best = Output{id, std::move(f->value), id == "error"};
      best_at = at;
    }
  }
  return best;
}

namespace {

bool plainSafe(const std::string& s) {
  static const std::regex kPlain(R"(^[A-Za-z_/][A-Za-z0-9_ ./,()-]*$)");
  static const std::regex kWord(
      "^(true|True|TRUE|false|False|FALSE|null|Null|NULL|yes|Yes|YES|no|No|NO|on|On|ON|off|Off|"
      "OFF|y|Y|n|N)$");
  return !s.empty() && s.back() != ' ' && std::regex_match(s, kPlain) &&
         !std::regex_match(s, kWord);
}

std::string scalar(const Json& v) {
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    return plainSafe(s) ? s : v.dump();
  }
  if (v.is_null()) return "null";
  return v.dump();
}

void emit(const Json& v, int indent, std::string& out) {
  const std::string pad(indent, ' ');
  if (v.is_object()) {
    for (const auto& [k, member] : v.items()) {
      out += pad + scalar(Json(k)) + ":";
      if ((member.is_object() || member.is_array()) && !member.empty()) {
        out += "\n";
        emit(member, indent + 4, out);
      } else {
        out += " " + (member.is_object() ? "{}" : member.is_array() ? "[]" : scalar(member)) + "\n";
      }
    }
    return;
  }
  for (const auto& item : v) {
    if ((item.is_object() || item.is_array()) && !item.empty()) {
      std::string inner;
      emit(item, indent + 2, inner);
      out += pad + "- " + inner.substr(indent + 2);
    } else {
      out += pad + "- " + (item.is_object() ? "{}" : item.is_array() ? "[]" : scalar(item)) + "\n";
    }
  }
}

}  // namespace

std::string arcaflowOutputYaml(const std::string& id, const Json& data) {
  std::string out;
  emit(Json{{"output_data", data}, {"output_id", id}}, 0, out);
  return out;
}

}  // namespace plugboard::core
