// Variables, inputs and outputs of nodes: Argo's workflow/common/common.go (the names),
// operator.go (buildLocalScope, processAggregateNodeOutputs, getTemplateOutputsFromScope,
// addOutputsToGlobalScope), common/ancestry.go (a dependency's bare name),
// dag.go (evaluateDependsLogic); docs/decisions.md, "Argo's node rules".
#include <algorithm>
#include <cctype>

#include "core/base/text.h"
#include "core/workflows/engine_state.h"
#include "core/workflows/tags.h"

namespace plugboard::core {
namespace {



// A node's result as an item of an aggregate: JSON when it parses, else the text.
Json resultItem(const Json& result) {
  if (!result.is_string()) return result;
  Json parsed = Json::parse(result.get<std::string>(), nullptr, false);
  return parsed.is_discarded() ? result : parsed;
}

}  // namespace

std::vector<std::string_view> conjunctionTerms(std::string_view e) {
  std::vector<std::string_view> terms;
  std::size_t pos = 0;
  while (pos <= e.size()) {
    std::size_t next = e.find("&&", pos);
    if (next == std::string_view::npos) next = e.size();
    std::string_view term = e.substr(pos, next - pos);
    while (!term.empty() && term.front() == ' ') term.remove_prefix(1);
    while (!term.empty() && term.back() == ' ') term.remove_suffix(1);
    int dots = 0;
    bool ok = !term.empty() && term.front() != '.' && term.back() != '.';
    for (char c : term) {
      if (c == '.') {
        ++dots;
      } else if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') {
        ok = false;
      }
    }
    if (!ok || dots > 1) return {};
    terms.emplace_back(term);
    pos = next + 2;
  }
  return terms;
}

TemplateInfo makeTemplateInfo(const Template& t, const std::string* target_text) {
  TemplateInfo ti;
  if (t.kind == Template::Kind::kSteps) {
    for (const auto& group : t.steps) {
      for (const auto& call : group) {
        ti.index.emplace(call.name, static_cast<std::uint32_t>(ti.calls.size()));
        ti.calls.push_back(&call);
      }
    }
    return ti;
  }
  if (t.kind != Template::Kind::kDag) return ti;
  const std::size_t n = t.tasks.size();
  for (const auto& call : t.tasks) {
    const auto i = static_cast<std::uint32_t>(ti.calls.size());
    ti.index.emplace(call.name, i);
    // A name without '-' is found in `index` as it is; one with '-' under its '_' form,
    // unless a task written so came first (the first task of a name wins, as before).
    if (call.name.find('-') != std::string::npos) {
      std::string key = ed::underscored(call.name);
      if (!ti.index.contains(key)) ti.depends_index.emplace(std::move(key), i);
    }
    ti.calls.push_back(&call);
  }
  ti.deps.start.reserve(n + 1);
  ti.depends.reserve(n);
  ti.conjunction.start.reserve(n + 1);
  std::vector<std::uint32_t> dependents_count(n, 0);
  for (std::uint32_t i = 0; i < n; ++i) {
    const TemplateCall& call = t.tasks[i];
    const auto first = static_cast<std::ptrdiff_t>(ti.deps.items.size());
    for (const auto& d : call.depends_on) {
      auto it = ti.index.find(d);
      if (it == ti.index.end()) {
        ti.problem = "task '" + call.name + "' depends on unknown task '" + d + "'";
        continue;
      }
      if (std::find(ti.deps.items.begin() + first, ti.deps.items.end(), it->second) !=
          ti.deps.items.end())
        continue;
      ti.deps.items.push_back(it->second);
      ++dependents_count[it->second];
    }
    ti.deps.endList();
    std::string_view depends = call.depends;
    if (depends.find('-') != std::string_view::npos)
      depends = ti.underscored.emplace_back(ed::underscored(call.depends));
    ti.depends.push_back(depends);
    for (std::string_view term : conjunctionTerms(depends)) ti.conjunction.items.push_back(term);
    ti.conjunction.endList();
  }
  // Each task's dependents in task order, as the lists of its dependencies give them.
  ti.dependents.start.resize(n + 1);
  for (std::uint32_t i = 0; i < n; ++i)
    ti.dependents.start[i + 1] = ti.dependents.start[i] + dependents_count[i];
  ti.dependents.items.resize(ti.deps.items.size());
  for (std::uint32_t i = 0; i < n; ++i) dependents_count[i] = ti.dependents.start[i];
  for (std::uint32_t i = 0; i < n; ++i) {
    for (std::uint32_t d : ti.deps[i]) ti.dependents.items[dependents_count[d]++] = i;
  }
  // Dependencies first (Kahn); what remains is a cycle.
  std::vector<std::uint32_t> left(n);
  for (std::uint32_t i = 0; i < n; ++i) left[i] = static_cast<std::uint32_t>(ti.deps[i].size());
  for (std::uint32_t i = 0; i < n; ++i) {
    if (left[i] == 0) ti.order.push_back(i);
  }
  for (std::size_t k = 0; k < ti.order.size(); ++k) {
    for (std::uint32_t d : ti.dependents[ti.order[k]]) {
      if (--left[d] == 0) ti.order.push_back(d);
    }
  }
  if (ti.order.size() != n && ti.problem.empty()) {
    for (std::uint32_t i = 0; i < n; ++i) {
      if (left[i] != 0) {
        ti.problem = "dependency cycle through task '" + t.tasks[i].name + "'";
        break;
      }
    }
  }
  // Targets: dag.target, else the tasks nothing depends on; needed: them and their ancestry.
  ti.needed.assign(n, 0);
  const std::string& target = target_text != nullptr ? *target_text : t.dag_target;
  if (!target.empty()) {
    std::size_t pos = 0;
    while (pos < target.size()) {
      std::size_t next = target.find(' ', pos);
      if (next == std::string::npos) next = target.size();
      std::string name = target.substr(pos, next - pos);
      pos = next + 1;
      if (name.empty() || name.find("{{") != std::string::npos) continue;  // filled at run time
      auto it = ti.index.find(name);
      if (it == ti.index.end()) {
        if (ti.problem.empty()) ti.problem = "target task '" + name + "' does not exist";
        continue;
      }
      ti.targets.push_back(it->second);
    }
    std::vector<std::uint32_t> stack(ti.targets.begin(), ti.targets.end());
    while (!stack.empty()) {
      const std::uint32_t i = stack.back();
      stack.pop_back();
      if (ti.needed[i]) continue;
      ti.needed[i] = 1;
      for (std::uint32_t d : ti.deps[i]) stack.push_back(d);
    }
  } else {
    for (std::uint32_t i = 0; i < n; ++i) {
      ti.needed[i] = 1;
      if (ti.dependents[i].empty()) ti.targets.push_back(i);
    }
  }
  ti.needed_count = static_cast<std::uint32_t>(std::count(ti.needed.begin(), ti.needed.end(), 1));
  ti.is_target.assign(n, 0);
  for (std::uint32_t t : ti.targets) ti.is_target[t] = 1;
  return ti;
}

std::optional<Json> NodeScope::lookup(std::string_view dotted) const {
  if (extra_ != nullptr) {
    auto it = extra_->find(std::string(dotted));
    if (it != extra_->end()) return *it;
  }
  return run_.lookup(frame_, item_, self_, dotted);
}

// The outputs of a step or task as its siblings see them (Argo's buildLocalScope), or
// for a loop their aggregate as JSON lists (processAggregateNodeOutputs).
Json EngineRun::stepRef(std::uint32_t, const Slot& slot, std::string_view rest,
                        bool& found) const {
  found = true;
  if (slot.loop) {
    if (rest == "outputs.values") {  // each item's values, null where it has none
      Json list = Json::array();
      for (std::uint32_t n : slot.items)
        list.push_back(n != kNoNode && status_[n].outputs.values ? *status_[n].outputs.values : Json());
      return list;
    }
    Json params = Json::array(), results = Json::array();
    std::map<std::string, Json, std::less<>> by_name;
    for (std::uint32_t n : slot.items) {
      if (n == kNoNode) continue;
      const NodeStatus& s = status_[n];
      if (s.phase != NodePhase::kSucceeded) continue;
      if (!s.outputs.parameters.empty()) {
        Json one = Json::object();
        for (const auto& [name, value] : s.outputs.parameters) {
          one[name] = value;
          auto& list = by_name[name];
          if (list.is_null()) list = Json::array();
          list.push_back(value);
        }
        params.push_back(std::move(one));
      }
      if (s.outputs.result) results.push_back(resultItem(Json(*s.outputs.result)));
    }
    if (rest == "outputs.result") return results.dump();
    if (rest == "outputs.parameters") return params.dump();
    if (ed::startsWith(rest, "outputs.parameters.")) {
      auto it = by_name.find(rest.substr(19));
      return it != by_name.end() ? it->second.dump() : Json::array().dump();
    }
    const std::uint32_t top = slot.node;
    if (top != kNoNode && rest == "status") return std::string(nodePhaseName(status_[top].phase));
    if (top != kNoNode && rest == "id") return status_[top].id;
    found = false;
    return Json();
  }
  if (slot.node == kNoNode) {
    found = false;
    return Json();
  }
  const NodeStatus& s = status_[slot.node];
  if (rest == "id") return s.id;
  if (rest == "status") return std::string(nodePhaseName(s.phase));
  if (rest == "message") return s.message;
  if (rest == "startedAt" || rest == "finishedAt") {
    auto tp = rest == "startedAt" ? s.started : s.finished;
    if (!tp) return "";
    return std::to_string(std::chrono::duration_cast<Millis>(*tp - started_).count());
  }
  if (rest == "exitCode" || rest == "outputs.exitCode" || rest == "outputs.result") {
    const auto& value = rest == "outputs.result" ? s.outputs.result : s.outputs.exit_code;
    if (value) return *value;
    found = false;
    return Json();
  }
  if (rest == "outputs.values") {
    if (s.outputs.values) return *s.outputs.values;
    found = false;
    return Json();
  }
  if (rest == "outputs.parameters") {  // name -> value, for `outputs.parameters['a-b']`
    Json all = Json::object();
    for (const auto& [name, value] : s.outputs.parameters) all[name] = value;
    return all;
  }
  if (ed::startsWith(rest, "outputs.parameters.")) {
    if (const std::string* v = s.outputs.parameter(rest.substr(19))) return *v;
    // Argo's addSkippedNodeOutputsToScope: a skipped call's declared defaults.
    const Node& node = nodes_[slot.node];
    if (s.phase == NodePhase::kSkipped || s.phase == NodePhase::kOmitted) {
      auto it = node.call != nullptr ? by_name_.find(node.call->template_name) : by_name_.end();
      if (it != by_name_.end()) {
        for (const auto& o : it->second->outputs) {
          if (o.name == rest.substr(19) && o.default_value) return *o.default_value;
        }
      }
    }
  }
  found = false;
  return Json();
}

std::optional<Json> EngineRun::lookup(std::uint32_t frame, const Json* item, std::uint32_t self,
                                      std::string_view dotted) const {
  if (ed::startsWith(dotted, "item")) {
    if (item == nullptr || item->is_null()) return std::nullopt;
    if (dotted == "item") return *item;
    if (dotted[4] != '.' || !item->is_object()) return std::nullopt;
    const Json* v = item;
    std::string_view rest = dotted.substr(5);
    while (!rest.empty()) {
      const std::size_t dot = rest.find('.');
      const std::string key(rest.substr(0, dot));
      if (!v->is_object() || !v->contains(key)) return std::nullopt;
      v = &(*v)[key];
      rest = dot == std::string_view::npos ? std::string_view() : rest.substr(dot + 1);
    }
    return *v;
  }
  if (ed::startsWith(dotted, "workflow.")) {
    auto it = globals_.find(std::string(dotted));
    if (it != globals_.end()) return *it;
    return std::nullopt;
  }
  if (self != kNoNode) {
    if (dotted == "retries") return nodes_[self].retry_index;
    if (dotted == "node.name") return status_[self].name;
    if (dotted == "pod.name") return status_[self].id;
  }
  if (frame == kNoNode) return std::nullopt;
  const Node& f = nodes_[frame];
  if (ed::startsWith(dotted, "inputs.parameters.")) {
    if (const std::string* v = status_[frame].inputs.parameter(dotted.substr(18))) return *v;
    return std::nullopt;
  }
  if (dotted == "inputs.parameters") {  // name -> value, for `inputs.parameters['a-b']`
    Json all = Json::object();
    for (const auto& [name, value] : status_[frame].inputs.parameters) all[name] = value;
    return all;
  }
  const bool steps = ed::startsWith(dotted, "steps.");
  if ((steps && f.kind == NodeKind::kSteps) || (ed::startsWith(dotted, "tasks.") && f.kind == NodeKind::kDag)) {
    auto infos = infos_.find(f.tmpl);
    if (infos == infos_.end()) return std::nullopt;
    const TemplateInfo& ti = *infos->second;
    std::string_view rest = dotted.substr(6);
    // The longest known call name that the rest starts with (names may hold dots).
    for (std::size_t dot = rest.size();; dot = rest.rfind('.', dot - 1)) {
      if (dot == std::string_view::npos || dot == 0) break;
      auto it = ti.index.find(std::string(rest.substr(0, dot)));
      if (it != ti.index.end() && it->second < f.c().slots.size()) {
        bool found = false;
        Json v = stepRef(frame, f.c().slots[it->second],
                         dot < rest.size() ? rest.substr(dot + 1) : std::string_view(), found);
        if (found) return v;
        return std::nullopt;
      }
      if (dot == std::string_view::npos || dot == 0) break;
    }
  }
  return std::nullopt;
}

Expected<Json> EngineRun::fillIn(std::uint32_t frame, const Json* item, std::uint32_t self,
                                 const Json& value, bool keep_unknown) const {
  NodeScope scope(*this, frame, item, self);
  FillOptions options;
  options.keep_unknown = keep_unknown;
  options.limit = options_.args_limit;
  return fill(value, scope, options);
}

// Argo's shouldExecute: the `when` text with its tags filled, then as govaluate reads it.
Expected<bool> EngineRun::whenHolds(std::uint32_t frame, const Json* item,
                                    const std::string& when, std::string* filled) const {
  if (when.empty()) return true;
  NodeScope scope(*this, frame, item, frame);
  auto text = fillText(when, scope);
  if (!text) return Error("when: " + text.error().message());
  if (filled != nullptr) *filled = parameterText(*text);
  static const Json kNothing = Json::object();
  JsonScope none(kNothing);
  auto holds = evaluateCondition(parameterText(*text), Dialect::kCondition, none);
  if (!holds)
    return Error("Invalid 'when' expression '" + excerpt(parameterText(*text)) +
                 "': " + holds.error().message());
  return *holds;
}

// `depends` over the dag's task results (dag.go's TaskResults; a bare name as ancestry.go's
// expandDependency writes it).
namespace {
class DependsScope final : public Scope {
 public:
  DependsScope(const EngineRun& run, const Node& dag, const TemplateInfo& ti)
      : run_(run), dag_(dag), ti_(ti) {}
  std::optional<Json> lookup(std::string_view dotted) const override {
    const std::size_t dot = dotted.find('.');
    const std::string name(dotted.substr(0, dot));
    auto it = ti_.depends_index.find(name);
    if (it == ti_.depends_index.end()) {
      it = ti_.index.find(name);
      if (it == ti_.index.end()) return std::nullopt;
    }
    if (dag_.c().slots[it->second].node == kNoNode) return std::nullopt;
    const std::uint32_t task = it->second;
    const Slot& slot = dag_.c().slots[task];
    const NodePhase p = run_.status_[slot.node].phase;
    if (dot == std::string_view::npos) {
      const TemplateCall& c = *ti_.calls[task];
      return p == NodePhase::kSucceeded || p == NodePhase::kSkipped ||
             (p == NodePhase::kFailed && c.continue_on_failed) ||
             (p == NodePhase::kError && c.continue_on_error);
    }
    const std::string_view what = dotted.substr(dot + 1);
    if (what == "Succeeded") return p == NodePhase::kSucceeded;
    if (what == "Failed") return p == NodePhase::kFailed;
    if (what == "Errored") return p == NodePhase::kError;
    if (what == "Skipped") return p == NodePhase::kSkipped;
    if (what == "Omitted") return p == NodePhase::kOmitted;
    if (what == "Daemoned") return false;
    if (what == "AnySucceeded" || what == "AllFailed") {
      bool any = false, all = slot.loop && !slot.items.empty();
      for (std::uint32_t n : slot.items) {
        const NodePhase q = n != kNoNode ? run_.status_[n].phase : NodePhase::kPending;
        any = any || q == NodePhase::kSucceeded;
        all = all && q == NodePhase::kFailed;
      }
      return what == "AnySucceeded" ? any : all;
    }
    return std::nullopt;
  }

 private:
  const EngineRun& run_;
  const Node& dag_;
  const TemplateInfo& ti_;
};
}  // namespace

Expected<bool> EngineRun::dependsHold(std::uint32_t d, std::uint32_t task) const {
  const TemplateInfo& ti = *infos_.at(nodes_[d].tmpl);
  if (ti.depends[task].empty()) return true;
  DependsScope scope(*this, nodes_[d], ti);
  if (!ti.conjunction[task].empty()) {
    for (std::string_view term : ti.conjunction[task]) {
      auto v = scope.lookup(term);
      if (!v) return Error("unknown variable '" + std::string(term) + "'");
      if (!v->is_boolean()) return Error("'" + std::string(term) + "' is not a task result");
      if (!v->get<bool>()) return false;
    }
    return true;
  }
  return evaluateCondition(ti.depends[task], Dialect::kExpr, scope);
}

// Argo's ProcessArgs for a call: each declared input from its `value`, the call's
// argument, or its default; a missing one is an error, as is a value outside `enum`.
Status EngineRun::bindInputs(std::uint32_t n, const Json& args) {
  Node& node = nodes_[n];
  std::vector<std::pair<std::string, std::string>> list;
  list.reserve(node.tmpl->inputs.size());
  for (const ParameterDecl& p : node.tmpl->inputs) {
    Json value;
    if (p.value) {
      auto v = fillIn(node.caller, &node.item, n, *p.value);
      if (!v) return Error("inputs.parameters." + p.name + ": " + v.error().message());
      value = std::move(*v);
    } else if (args.is_object() && args.contains(p.name)) {
      value = args[p.name];
    } else if (p.default_value) {
      auto v = fillIn(node.caller, nullptr, n, *p.default_value);
      if (!v) return Error("inputs.parameters." + p.name + ": " + v.error().message());
      value = std::move(*v);
    } else {
      return Error("inputs.parameters." + p.name + " was not supplied");
    }
    std::string text = parameterText(value);
    if (!p.enum_values.empty() &&
        std::find(p.enum_values.begin(), p.enum_values.end(), text) == p.enum_values.end()) {
      return Error("inputs.parameters." + p.name + ": value '" + text +
                   "' is not one of the enum values");
    }
    list.emplace_back(p.name, std::move(text));
  }
  status_[n].inputs.parameters = std::move(list);
  return Status::Ok();
}

void EngineRun::publishGlobal(const std::string& name, const Json& value) {
  global_outputs_[name] = value;
  globals_["workflow.outputs.parameters." + name] = value;
}

// A node's outputs: a leaf's from what it answered (supplied, path: by name), a
// composite's from its children (parameter, expression); defaults when nothing came.
Status EngineRun::setOutputs(std::uint32_t n, const Outcome* outcome) {
  const Template& t = *nodes_[n].tmpl;
  NodeIO out;
  const Json* supplied = nullptr;
  if (outcome != nullptr) {
    auto it = outcome->outputs.find("parameters");
    if (it != outcome->outputs.end() && it->is_object()) supplied = &*it;
    if (auto r = outcome->outputs.find("result"); r != outcome->outputs.end())
      out.result = parameterText(*r);
    if (auto e = outcome->outputs.find("exitCode"); e != outcome->outputs.end())
      out.exit_code = parameterText(*e);
    if (auto v = outcome->outputs.find("values"); v != outcome->outputs.end() && v->is_object())
      out.values = *v;
  }
  const bool succeeded = outcome == nullptr || outcome->phase == Phase::kSucceeded;
  auto& params = out.parameters;
  NodeScope scope(*this, n, nullptr, n);
  for (const OutputParameterDecl& o : t.outputs) {
    std::optional<Json> value;
    switch (o.from) {
      case OutputParameterDecl::From::kSupplied:
      case OutputParameterDecl::From::kPath:
        if (supplied != nullptr && supplied->contains(o.name)) value = (*supplied)[o.name];
        break;
      case OutputParameterDecl::From::kValue:
      case OutputParameterDecl::From::kParameter: {
        auto v = fillText(o.source, scope);
        if (v) value = std::move(*v);
        break;
      }
      case OutputParameterDecl::From::kExpression: {
        auto v = evaluate(o.source, Dialect::kExpr, scope);
        if (v) value = std::move(*v);
        break;
      }
    }
    if (!value && o.default_value) value = *o.default_value;
    if (!value) {
      if (!succeeded) continue;
      return Error("outputs.parameters." + o.name + ": no value and no default");
    }
    params.emplace_back(o.name, parameterText(*value));
    if (!o.global_name.empty() && succeeded) publishGlobal(o.global_name, params.back().second);
  }
  // A plugin's node keeps every parameter the plugin answered, declared or not, in the
  // plugin's order: Argo's agent writes the reply's outputs into the node as they are
  // (workflow/executor/agent.go); a declaration only adds a default and lets lint accept a
  // reference to it (argo-workflows #9966).
  if (t.kind == Template::Kind::kPlugin && supplied != nullptr && succeeded) {
    auto declared = [&](const std::string& name) {
      return std::any_of(t.outputs.begin(), t.outputs.end(),
                         [&](const OutputParameterDecl& o) { return o.name == name; });
    };
    std::vector<std::string> order = outcome->parameter_order;
    if (order.empty()) {
      for (const auto& [name, _] : supplied->items()) order.push_back(name);
    }
    for (const auto& name : order) {
      if (declared(name) || !supplied->contains(name)) continue;
      params.emplace_back(name, parameterText((*supplied)[name]));
    }
  }
  status_[n].outputs = std::move(out);
  return Status::Ok();
}

}  // namespace plugboard::core
