// core/frontends/arcaflow_values.cc: see arcaflow_values.h.
#include "core/frontends/arcaflow_values.h"

#include <functional>
#include <map>
#include <regex>

#include "core/base/text.h"
#include "core/workflows/arcaflow_expression.h"
#include "core/workflows/expression.h"

namespace plugboard::core {
namespace {

// What a step left for expressions to read.
struct StepState {
  std::string phase;           // the node's phase ("Succeeded", "Skipped"...); empty: not ended
  std::string message;         // the node's message
  std::optional<Json> values;  // outputs.values: the answered fields and output_id
  long long finished_ms = -1;  // when it ended (ms into the run); -1: not ended
};

bool endedPhase(const std::string& phase) {
  return phase == "Succeeded" || phase == "Failed" || phase == "Error" || phase == "Skipped" ||
         phase == "Omitted";
}

// The engine's data model (workflow.go's loopState.data): input, and each step's stages;
// and when each step that ended did (what has not ended may still resolve a path).
struct Document {
  Json data;
  std::map<std::string, long long> ended;  // step -> ms into the run
};

Document document(const ArcaflowWorkflow& wf, const Json& input,
                  const std::function<StepState(const std::string&)>& state) {
  Json steps = Json::object();
  std::map<std::string, long long> ended;
  for (const auto& s : wf.steps) {
    Json stages = Json::object();
    const StepState st = state(s.id);
    if (endedPhase(st.phase)) ended[s.id] = std::max(0LL, st.finished_ms);
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
  return {{{"input", input.is_null() ? Json::object() : input}, {"steps", std::move(steps)}},
          std::move(ended)};
}

// kUnresolved: a step it reads ended without the output it reads (it never resolves);
// kPending: a step it reads has not ended (it may resolve later).
enum class Got { kValue, kAbsent, kUnresolved, kPending };
struct Filled {
  Got got = Got::kValue;
  Json value;
  std::string why;    // kUnresolved, kPending: the path no step gave (yet)
  long long at = 0;   // kValue: when it resolved, the last end of a step it read (ms)
};

class Filler {
 public:
  Filler(const Document& doc, const std::filesystem::path& files_dir, bool read_anywhere,
         std::string file)
      : doc_(doc.data), ended_(doc.ended), file_(std::move(file)) {
    context_.files_dir = files_dir;
    context_.read_anywhere = read_anywhere;
  }

  Expected<Filled> fill(const Json& v) const {
    const std::string tag = arcaflowTag(v);
    if (tag.empty()) {
      if (v.is_object() || v.is_array()) {
        // Unresolved when a member never resolves; pending while one may still.
        Filled out{Got::kValue, v.is_object() ? Json::object() : Json::array(), {}};
        std::optional<Filled> pending;
        for (const auto& [k, member] : v.items()) {
          auto f = fill(member);
          if (!f) return f.error();
          if (f->got == Got::kUnresolved) return f;
          if (f->got == Got::kPending) {
            if (!pending) pending = std::move(*f);
            continue;
          }
          if (f->got != Got::kValue) continue;
          out.at = std::max(out.at, f->at);
          if (v.is_object())
            out.value[k] = std::move(f->value);
          else
            out.value.push_back(std::move(f->value));
        }
        if (pending) return std::move(*pending);
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
        return Filled{Got::kValue, std::move(out), {}, endedAt(step)};
      }
      auto f = expression(text, v);
      if (!f || f->got != Got::kValue) return f;
      if (!f->value.is_object())
        return Error(where(v) + "!ordisabled '" + excerpt(text) + "' is not an object");
      f->value["result"] = "enabled";
      return f;
    }
    auto f = expression(text, v);
    // An optional value whose step gave nothing is left out (resolveOptionalExpression):
    // !wait-optional waits for the step to end (executor.go: a CompletionAndDependency),
    // !soft-optional takes what there is when the rest resolved (an OptionalDependency).
    if (f && (f->got == Got::kUnresolved || (f->got == Got::kPending && tag == "!soft-optional")) &&
        (tag == "!wait-optional" || tag == "!soft-optional"))
      return Filled{Got::kAbsent, {}, {}};
    return f;
  }

 private:
  std::string where(const Json& v) const {
    return file_ + ":" + std::to_string(v.value("line", 0)) + ":" +
           std::to_string(v.value("column", 0)) + ": ";
  }

  // The option that resolved first in time (workflow.go resolveOneOfExpression: the first
  // OR dependency resolved; options resolved by the same step's end in key order), with
  // the discriminator set to its key.
  Expected<Filled> oneOf(const Json& v) const {
    std::string why;
    bool pending = false;
    std::optional<Filled> first;
    std::string first_key;
    for (const auto& [key, option] : v["one_of"].items()) {
      auto f = fill(option);
      if (!f) return f.error();
      if (f->got != Got::kValue) {
        if (why.empty()) why = f->why;
        pending = pending || f->got == Got::kPending;
        continue;
      }
      if (!f->value.is_object())
        return Error(where(v) + "!oneof option '" + key + "' is not an object");
      if (!first || f->at < first->at) {
        first = std::move(*f);
        first_key = key;
      }
    }
    if (first) {
      first->value[v["discriminator"].get<std::string>()] = first_key;
      return std::move(*first);
    }
    return Filled{pending ? Got::kPending : Got::kUnresolved, {},
                  why.empty() ? "no !oneof option" : why};
  }

  long long endedAt(const std::string& step) const {
    auto it = ended_.find(step);
    return it == ended_.end() ? 0 : it->second;
  }

  Expected<Filled> expression(const std::string& text, const Json& v) const {
    auto expr = arcaflow::parseExpression(text);
    if (!expr) return Error(where(v) + "'" + excerpt(text) + "': " + expr.error().message());
    long long resolved_at = 0;
    for (const auto& path : expr->dependencies()) {
      if (path.size() < 4 || path[1] != "steps") continue;
      const std::string step = path[2].is_string() ? path[2].get<std::string>() : path[2].dump();
      // A step that has not ended may still give the output; one that ended will not.
      const Got missing = ended_.contains(step) ? Got::kUnresolved : Got::kPending;
      const Json* at = &doc_;
      for (std::size_t i = 1; i < std::min<std::size_t>(path.size(), 5); ++i) {
        const std::string key = path[i].is_string() ? path[i].get<std::string>() : path[i].dump();
        if (!at->is_object() || !at->contains(key)) {
          return Filled{missing, {}, arcaflow::pathText(path)};
        }
        at = &(*at)[key];
      }
      if (path.size() == 4 && at->empty())  // $.steps.X.outputs: any output
        return Filled{missing, {}, arcaflow::pathText(path)};
      resolved_at = std::max(resolved_at, endedAt(step));
    }
    auto value = expr->evaluate(doc_, context_);
    if (!value) return Error(where(v) + "'" + excerpt(text) + "': " + value.error().message());
    return Filled{Got::kValue, std::move(*value), {}, resolved_at};
  }

  const Json& doc_;
  const std::map<std::string, long long>& ended_;
  std::string file_;
  arcaflow::Context context_;
};

// The document as the run's scope shows it (the dag's calls beside the one asked about);
// `nested`: a sub-workflow's, whose input is its dag's parameter `input` (the item, as
// JSON text), with its scope's defaults.
Document scopeDocument(const ArcaflowWorkflow& wf, const Scope& scope, bool nested = false) {
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
    if (auto f = scope.lookup(base + "finishedAt"); f && f->is_string() && !f->get<std::string>().empty())
      st.finished_ms = std::stoll(f->get<std::string>());
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
                               std::filesystem::path files_dir, bool read_anywhere)
    : wf_(std::move(workflow)), files_dir_(std::move(files_dir)), read_anywhere_(read_anywhere) {
  roles_[arcaflowMainTemplate(*wf_)] = Role{Role::Kind::kWorkflow, wf_.get(), nullptr, false};
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
  if (r == nullptr || r->kind == Role::Kind::kSubWorkflow || r->kind == Role::Kind::kWorkflow) {
    d.args = tmpl.kind == Template::Kind::kPlugin ? tmpl.plugin.args : Json::object();
    return d;
  }
  const ArcaflowStep* step = r->step;
  const Document doc = scopeDocument(*r->wf, scope, r->nested);
  const Filler filler(doc, files_dir_, read_anywhere_, r->wf->file.string());
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
    // The execute stage's `parallelism` (parallelismSchema: an integer of at least 1,
    // default 1), an expression resolved as its other inputs are.
    d.parallelism = 1;
    if (!step->parallelism.is_null()) {
      auto p = filler.fill(step->parallelism);
      if (!p) return fail("parallelism", p.error());
      if (p->got != Got::kValue) {
        d.run = false;
        d.message = notProduced(p->why);
        return d;
      }
      if (!p->value.is_number_integer() || p->value.get<long long>() < 1)
        return Error(subject + "parallelism: " + p->value.dump() +
                     " is not an integer of at least 1");
      d.parallelism = static_cast<int>(std::min<long long>(p->value.get<long long>(), 1 << 20));
    }
  }
  if (d.args.is_null()) d.args = Json::object();
  return d;
}

bool ArcaflowValues::stops(const TemplateCall& call, const Scope& scope,
                           std::string* message) const {
  const Role* r = role(call.template_name);
  if (r == nullptr || r->kind != Role::Kind::kStep || r->step->stop_if.is_null()) return false;
  const ArcaflowStep* step = r->step;
  const Document doc = scopeDocument(*r->wf, scope, r->nested);
  const Filler filler(doc, files_dir_, read_anywhere_, r->wf->file.string());
  auto stop = filler.fill(step->stop_if);
  if (!stop || stop->got != Got::kValue || stop->value == Json(false)) return false;
  if (message != nullptr) *message = "stopped by stop_if";
  return true;
}

std::optional<Json> ArcaflowValues::outputs(const Template& tmpl, const Scope& scope) const {
  const Role* r = role(tmpl.name);
  if (r == nullptr || r->kind == Role::Kind::kStep || r->kind == Role::Kind::kWorkflow)
    return std::nullopt;
  if (r->kind == Role::Kind::kSubWorkflow) {
    // Its steps ended and no output resolved (ends() would have taken it).
    const Document doc = scopeDocument(*r->wf, scope, true);
    const Filler filler(doc, files_dir_, read_anywhere_, r->wf->file.string());
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
  // The foreach step: its items' outputs (the loop task "items" of its dag). A loop that
  // never ran its items (its list could not be read: the task ended in Error) gives no
  // output: the step is in Error, never an empty `success`; one with no items does.
  std::optional<Json> looked = scope.lookup("tasks.items.outputs.values");
  if (!looked) {
    if (scope.lookup("tasks.items.status") != Json("Skipped")) return std::nullopt;
    looked = Json::array();
  }
  Json items = std::move(*looked);
  if (!items.is_array()) return std::nullopt;
  Json data = Json::array(), done = Json::object(), messages = Json::object();
  for (std::size_t i = 0; i < items.size(); ++i) {
    const Json& item = items[i];
    const std::string key = std::to_string(i);
    // executeSubWorkflows keeps an item's output data whatever its output id.
    if (item.is_object() && item.contains("output_id")) {
      data.push_back(item["data"]);
      done[key] = item["data"];
    } else if (item.is_object() && item.contains("error") && item["error"].is_string()) {
      messages[key] = item["error"];
    } else {
      messages[key] = "the sub-workflow did not run";
    }
  }
  if (messages.empty()) return Json{{"output_id", "success"}, {"data", std::move(data)}};
  return Json{{"output_id", "error"}, {"data", std::move(done)}, {"messages", std::move(messages)}};
}

std::optional<Json> ArcaflowValues::ends(const Template& tmpl, const Scope& scope) const {
  const Role* r = role(tmpl.name);
  if (r == nullptr || (r->kind != Role::Kind::kWorkflow && r->kind != Role::Kind::kSubWorkflow))
    return std::nullopt;
  const Document doc = scopeDocument(*r->wf, scope, r->kind == Role::Kind::kSubWorkflow);
  const Filler filler(doc, files_dir_, read_anywhere_, r->wf->file.string());
  // workflow.go notifySteps: the first output node that resolves is the workflow's
  // output; outputs resolving at the same event are taken in file order.
  for (const auto& [id, value] : r->wf->outputs) {
    auto f = filler.fill(value);
    if (!f) return Json{{"error", "output '" + id + "': " + f.error().message()}};
    if (f->got == Got::kValue) return Json{{"output_id", id}, {"data", std::move(f->value)}};
  }
  return std::nullopt;
}

std::string ArcaflowValues::failure(const Json& value) const {
  if (value.is_object() && value.contains("error") && value["error"].is_string())
    return value["error"].get<std::string>();
  return {};
}

Expected<std::optional<ArcaflowValues::Output>> ArcaflowValues::output(const RunResult& result) const {
  if (result.nodes.empty()) return std::optional<Output>();
  const NodeIO& out = result.nodes.front().outputs;
  if (!out.values || !out.values->is_object()) return std::optional<Output>();
  const Json& v = *out.values;
  if (v.contains("error") && v["error"].is_string()) return Error(v["error"].get<std::string>());
  if (!v.contains("output_id") || !v["output_id"].is_string()) return std::optional<Output>();
  const std::string id = v["output_id"].get<std::string>();
  return std::optional<Output>(Output{id, v.value("data", Json()), id == "error"});
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

// A map key: one that is an integer's text is the integer it was (JSON keeps every key as
// text; the engine's maps keyed by int, e.g. a foreach's `error` data, print bare).
std::string key(const std::string& k) {
  static const std::regex kInteger("^-?(0|[1-9][0-9]{0,17})$");
  return std::regex_match(k, kInteger) ? k : scalar(Json(k));
}

void emit(const Json& v, int indent, std::string& out) {
  const std::string pad(indent, ' ');
  if (v.is_object()) {
    for (const auto& [k, member] : v.items()) {
      out += pad + key(k) + ":";
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
