// steps and dag templates, loops and template parallelism: Argo's steps.go
// (executeSteps, executeStepGroup, expandStepGroup), dag.go (executeDAG, executeDAGTask,
// assessDAGPhase, evaluateDependsLogic), operator.go (expandSequence, generateNodeName);
// docs/decisions.md, "Argo's node rules".
#include <algorithm>
#include <cstdio>

#include "core/base/text.h"
#include "core/workflows/engine_state.h"
#include "core/workflows/tags.h"

namespace plugboard::core {
namespace {

// Whether input parameter `name` of `t` has a default (Argo applies it when an argument
// names an output its producer, skipped, never made: examples/skipped-output-defaults).
bool hasDefault(const Template& t, const std::string& name) {
  return std::any_of(t.inputs.begin(), t.inputs.end(), [&](const ParameterDecl& p) {
    return p.name == name && p.default_value.has_value();
  });
}

}  // namespace
namespace {


bool continuesOn(const TemplateCall* call, NodePhase phase) {
  return call != nullptr && ((phase == NodePhase::kFailed && call->continue_on_failed) ||
                             (phase == NodePhase::kError && call->continue_on_error));
}

// Argo's generateNodeName: "name(index:item)", parentheses of the item dropped.
std::string loopNodeName(const std::string& base, std::size_t i, const Json& item) {
  std::string desc = parameterText(item);
  std::erase_if(desc, [](char c) { return c == '(' || c == ')'; });
  return base + "(" + std::to_string(i) + ":" + desc + ")";
}

Expected<long long> sequenceInteger(const Json& v, std::string_view what) {
  const std::string text = parameterText(v);
  try {
    std::size_t used = 0;
    long long n = std::stoll(text, &used);
    if (used == text.size()) return n;
  } catch (...) {
  }
  return Error("withSequence." + std::string(what) + ": '" + text + "' is not an integer");
}

// A printf format with one integer conversion and nothing else to fill.
bool integerFormat(const std::string& f) {
  int conversions = 0;
  for (std::size_t i = 0; i < f.size(); ++i) {
    if (f[i] != '%') continue;
    if (i + 1 < f.size() && f[i + 1] == '%') {
      ++i;
      continue;
    }
    std::size_t j = i + 1;
    while (j < f.size() && std::string_view("-+ #0123456789").find(f[j]) != std::string_view::npos)
      ++j;
    if (j >= f.size() || std::string_view("dxXo").find(f[j]) == std::string_view::npos) return false;
    ++conversions;
    i = j;
  }
  return conversions == 1;
}

}  // namespace

// ---- parallelism of a template's children (Argo's checkParallelism for a boundary)

void EngineRun::gatedStart(std::uint32_t boundary, const Template& child,
                           std::function<std::uint32_t()> start) {
  Node& b = nodes_[boundary];
  // Argo counts a boundary's active Pod, Steps and DAG children (node_counters.go
  // getActiveChildrenCounter): a plugin or suspend node never waits for a place.
  const bool counted = child.kind != Template::Kind::kPlugin && child.kind != Template::Kind::kSuspend;
  const std::optional<int> limit = parallelismOf(boundary);
  if (!limit || !counted) {
    start();
    return;
  }
  if (b.c().running_children >= *limit) {
    b.c().gated.push_back(std::move(start));
    return;
  }
  ++b.c().running_children;
  const std::uint32_t n = start();
  nodes_[n].gate = boundary;
}

void EngineRun::releaseGate(std::uint32_t n) {
  const std::uint32_t g = nodes_[n].gate;
  if (g == kNoNode) return;
  nodes_[n].gate = kNoNode;
  --nodes_[g].c().running_children;
  // A steps template with failFast starts no waiting child once one failed (this one, or an
  // earlier one of the group): groupChildFulfilled drops them.
  if (nodes_[g].kind == NodeKind::kSteps && nodes_[g].tmpl->fail_fast) {
    const std::uint32_t grp = nodes_[g].c().current;
    const bool failed = ed::failedOrError(status_[n].phase) && !continuesOn(nodes_[n].call, status_[n].phase);
    if (failed || (grp != kNoNode && nodes_[grp].c().failing)) return;
  }
  while (nodes_[g].c().gated_head < nodes_[g].c().gated.size() &&
         nodes_[g].c().running_children < parallelismOf(g).value_or(0) &&
         !isEnded(status_[g].phase)) {
    auto start = std::move(nodes_[g].c().gated[nodes_[g].c().gated_head++]);
    ++nodes_[g].c().running_children;
    const std::uint32_t c = start();
    nodes_[c].gate = g;
  }
}

// ---- loops

Expected<std::vector<Json>> EngineRun::loopItems(std::uint32_t c, const Loop& loop) {
  std::vector<Json> items;
  switch (loop.kind) {
    case Loop::Kind::kNone:
      break;
    case Loop::Kind::kItems: {
      auto filled = fillIn(c, nullptr, c, loop.items);
      if (!filled) return Error("withItems: " + filled.error().message());
      if (!filled->is_array()) return Error("withItems: not a list");
      for (auto& v : *filled) items.push_back(std::move(v));
      break;
    }
    case Loop::Kind::kParam: {
      auto filled = fillIn(c, nullptr, c, Json(loop.param));
      if (!filled) return Error("withParam: " + filled.error().message());
      Json list = *filled;
      if (list.is_string()) list = Json::parse(list.get<std::string>(), nullptr, false);
      if (!list.is_array())
        return Error("withParam value could not be parsed as a JSON list: " +
                     parameterText(*filled));
      for (auto& v : list) items.push_back(std::move(v));
      break;
    }
    case Loop::Kind::kSequence: {
      auto text = [&](const std::string& s) { return fillIn(c, nullptr, c, Json(s)); };
      long long start = 0, end = 0;
      if (!loop.start.empty()) {
        auto v = text(loop.start);
        if (!v) return v.error();
        auto n = sequenceInteger(*v, "start");
        if (!n) return n.error();
        start = *n;
      }
      if (!loop.count.empty() && !loop.end.empty())
        return Error("withSequence: only one of count or end can be defined");
      if (!loop.count.empty()) {
        auto v = text(loop.count);
        if (!v) return v.error();
        auto n = sequenceInteger(*v, "count");
        if (!n) return n.error();
        if (*n <= 0) return items;
        end = start + *n - 1;
      } else if (!loop.end.empty()) {
        auto v = text(loop.end);
        if (!v) return v.error();
        auto n = sequenceInteger(*v, "end");
        if (!n) return n.error();
        end = *n;
      } else {
        return Error("withSequence: one of count or end must be defined");
      }
      std::string format = "%d";
      if (!loop.format.empty()) {
        auto f = text(loop.format);
        if (!f) return f.error();
        format = parameterText(*f);
        if (!integerFormat(format))
          return Error("withSequence.format: '" + format + "' must hold one integer conversion");
      }
      // printf's length modifier for long long, after the conversion's flags and width.
      const std::size_t conv = format.find_first_of("dxXo", format.find('%'));
      format.insert(conv, "ll");
      const long long step = end >= start ? 1 : -1;
      if (std::llabs(end - start) > 1000000) return Error("withSequence: more than 1000000 items");
      for (long long i = start;; i += step) {
        char buf[128];
        std::snprintf(buf, sizeof buf, format.c_str(), i);
        items.emplace_back(std::string(buf));
        if (i == end) break;
      }
      break;
    }
  }
  return items;
}

std::uint32_t EngineRun::skippedNode(std::string name, const TemplateCall* call,
                                     std::uint32_t boundary, std::uint32_t parent,
                                     std::uint32_t slot, NodePhase phase, std::string message,
                                     TimePoint now) {
  const std::uint32_t n =
      newNode(std::move(name), NodeType::kSkipped, nullptr, boundary, parent, slot);
  if (call != nullptr) status_[n].template_name = call->template_name;
  nodes_[n].call = call;
  end(n, phase, std::move(message), now);
  return n;
}

void EngineRun::expandCall(std::uint32_t c, const TemplateCall& call, const std::string& base,
                           std::uint32_t parent, std::uint32_t slot,
                           const std::function<void(std::uint32_t)>& link, TimePoint now) {
  const bool in_dag = nodes_[c].kind == NodeKind::kDag;
  auto it = by_name_.find(call.template_name);
  auto fail = [&](const std::string& message) {
    const std::uint32_t n =
        skippedNode(base, &call, c, parent, slot, NodePhase::kError, message, now);
    nodes_[c].c().slots[slot].node = n;
    link(n);
    if (!in_dag) ++nodes_[parent].open;
  };
  if (it == by_name_.end()) {
    fail("template '" + call.template_name + "' not found");
    return;
  }
  const Template* tmpl = it->second;
  // One call: its `when`, its arguments, its node.
  // Argo's message for a `when` that is false names it after substitution.
  std::string when_filled, skip_message;
  auto one = [this, c, tmpl, &call, &when_filled, &skip_message](
                 std::string name, std::uint32_t parent_node,
                 Json item) -> Expected<std::function<std::uint32_t()>> {
    const Json* item_ptr = item.is_null() ? nullptr : &item;
    auto go = whenHolds(c, item_ptr, call.when, &when_filled);
    if (!go) return go.error();
    if (!*go) return std::function<std::uint32_t()>();
    // A front end's own value language decides the call and fills its args now.
    Part<Json> plugin_args;
    Json dag_args;
    std::optional<int> parallelism;
    if (model_.values &&
        (tmpl->kind == Template::Kind::kPlugin || tmpl->kind == Template::Kind::kDag)) {
      NodeScope scope(*this, c, item_ptr, c);
      auto decided = model_.values->decide(call, *tmpl, scope);
      if (!decided) return decided.error();
      if (!decided->run) {
        skip_message = std::move(decided->message);
        return std::function<std::uint32_t()>();
      }
      if (tmpl->kind == Template::Kind::kPlugin)
        plugin_args = std::move(decided->args);
      else
        dag_args = std::move(decided->args);
      parallelism = decided->parallelism;
    }
    Json args = Json::object();
    for (const auto& [k, v] : call.arguments) {
      auto filled = fillIn(c, item_ptr, c, v);
      if (!filled && filled.error().code() == Error::Code::kNotFound && hasDefault(*tmpl, k)) {
        continue;  // an output a skipped call never made: the input's default applies
      }
      if (!filled) return Error("arguments.parameters." + k + ": " + filled.error().message());
      args[k] = parameterText(*filled);
    }
    if (dag_args.is_object()) {
      for (const auto& [k, v] : dag_args.items()) args[k] = parameterText(v);
    }
    const std::uint32_t boundary = c;
    return std::function<std::uint32_t()>(
        [this, name = std::move(name), tmpl, &call, parent_node, boundary, c,
         item = std::move(item), args = std::move(args),
         plugin_args = std::move(plugin_args), parallelism]() mutable {
          if (plugin_args) pending_args_ = std::move(plugin_args);
          pending_parallelism_ = parallelism;
          const std::uint32_t n = startCall(std::move(name), tmpl, &call, parent_node, 0,
                                            boundary, c, std::move(item), args, now_);
          pending_parallelism_.reset();
          return n;
        });
  };
  auto whenText = [&] {
    if (!skip_message.empty()) return skip_message;  // the value language's reason
    return "when '" + when_filled + "' evaluated false";
  };

  if (call.loop->kind == Loop::Kind::kNone) {
    auto start = one(base, parent, Json());
    if (!start) {
      fail(start.error().message());
      return;
    }
    if (!*start) {
      const std::uint32_t n =
          skippedNode(base, &call, c, parent, slot, NodePhase::kSkipped, whenText(), now);
      nodes_[c].c().slots[slot].node = n;
      link(n);
      if (!in_dag) ++nodes_[parent].open;
      return;
    }
    if (!in_dag) ++nodes_[parent].open;
    gatedStart(c, *tmpl, [this, c, slot, link, start = std::move(*start)]() {
      const std::uint32_t n = start();
      nodes_[n].slot = slot;
      nodes_[c].c().slots[slot].node = n;
      link(n);
      return n;
    });
    return;
  }

  auto items = loopItems(c, *call.loop);
  if (!items) {
    fail(items.error().message());
    return;
  }
  if (items->empty()) {
    const std::uint32_t n = skippedNode(base, &call, c, parent, slot, NodePhase::kSkipped,
                                        "Skipped, empty params", now);
    nodes_[c].c().slots[slot].node = n;
    link(n);
    if (!in_dag) ++nodes_[parent].open;
    return;
  }
  Slot& s = nodes_[c].c().slots[slot];
  s.loop = true;
  s.items.assign(items->size(), kNoNode);
  std::uint32_t item_parent = parent;
  if (in_dag) {  // a TaskGroup holds the items of a dag task
    item_parent = newNode(base, NodeType::kTaskGroup, nullptr, c, parent, slot);
    status_[item_parent].template_name = call.template_name;
    nodes_[item_parent].kind = NodeKind::kTaskGroup;
    nodes_[item_parent].call = &call;
    nodes_[c].c().slots[slot].node = item_parent;
    link(item_parent);
    notify(item_parent);
  }
  for (std::size_t i = 0; i < items->size(); ++i) {
    if (!fatal_.empty()) break;  // the run ends in Error (fail()): no more nodes
    std::string name = loopNodeName(base, i, (*items)[i]);
    auto start = one(name, item_parent, (*items)[i]);
    ++nodes_[item_parent].open;
    if (!start || !*start) {
      const std::uint32_t n =
          skippedNode(std::move(name), &call, c, item_parent, slot,
                      start ? NodePhase::kSkipped : NodePhase::kError,
                      start ? whenText() : start.error().message(), now);
      nodes_[c].c().slots[slot].items[i] = n;
      if (in_dag) {
        addChild(item_parent, n);
      } else {
        link(n);  // a steps group's child, which the next group hangs below
      }
      continue;
    }
    gatedStart(c, *tmpl, [this, c, slot, i, item_parent, in_dag, link, start = std::move(*start)]() {
      const std::uint32_t n = start();
      nodes_[n].slot = slot;
      nodes_[c].c().slots[slot].items[i] = n;
      if (in_dag) {
        addChild(item_parent, n);
      } else {
        link(n);
      }
      return n;
    });
  }
}

// ---- steps

void EngineRun::startSteps(std::uint32_t s, TimePoint now) {
  Node& node = nodes_[s];
  node.kind = NodeKind::kSteps;
  node.c().slots.resize(info(node.tmpl).calls.size());
  if (node.tmpl->steps.empty()) {
    stepsGroupFulfilled(s, kNoNode, now);
    return;
  }
  startGroup(s, 0, now);
}

void EngineRun::startGroup(std::uint32_t s, std::uint32_t g, TimePoint now) {
  const std::uint32_t prev = nodes_[s].c().current;
  const std::uint32_t grp = newNode(status_[s].name + "[" + std::to_string(g) + "]",
                                    NodeType::kStepGroup, nullptr, s, s, g);
  nodes_[grp].kind = NodeKind::kGroup;
  nodes_[s].c().current = grp;
  nodes_[s].c().group = g;
  if (prev == kNoNode) {
    addChild(s, grp);
  } else if (nodes_[prev].c().kids.empty()) {
    addChild(prev, grp);
  } else {
    for (std::uint32_t k : nodes_[prev].c().kids) addChild(k, grp);
  }
  notify(grp);
  const TemplateInfo& ti = info(nodes_[s].tmpl);
  for (const TemplateCall& call : nodes_[s].tmpl->steps[g]) {
    const std::uint32_t slot = ti.index.at(call.name);
    expandCall(s, call, status_[grp].name + "." + call.name, grp, slot,
               [this, grp](std::uint32_t n) {
                 addChild(grp, n);
                 nodes_[grp].c().kids.push_back(n);
               },
               now);
  }
  if (nodes_[grp].open == 0) end(grp, NodePhase::kSucceeded, "", now);
}

void EngineRun::groupChildFulfilled(std::uint32_t g, std::uint32_t child, TimePoint now) {
  Node& grp = nodes_[g];
  --grp.open;
  const NodePhase phase = status_[child].phase;
  if (ed::failedOrError(phase) && !continuesOn(nodes_[child].call, phase) && !grp.c().failing) {
    grp.c().failing = true;
    grp.c().fail_message = "child '" + status_[child].id + "' failed";
  }
  // A steps template with failFast starts none of the children still waiting for a place
  // (operator.go checkParallelism): they get no node, and the group and template fail
  // with Argo's message once the ones running have ended.
  const std::uint32_t s = grp.boundary;
  if (grp.c().failing && s != kNoNode && nodes_[s].tmpl->fail_fast && nodes_[s].composite) {
    Composite& sc = *nodes_[s].composite;
    const std::size_t dropped = sc.gated.size() - sc.gated_head;
    if (dropped > 0) {
      sc.gated.clear();
      sc.gated_head = 0;
      grp.open -= static_cast<std::uint32_t>(dropped);
      grp.c().fail_message = "template has failed or errored children and failFast enabled";
    }
  }
  if (grp.open == 0) {
    end(g, grp.c().failing ? NodePhase::kFailed : NodePhase::kSucceeded, grp.c().fail_message, now);
  }
}

void EngineRun::stepsGroupFulfilled(std::uint32_t s, std::uint32_t g, TimePoint now) {
  if (g != kNoNode) {
    const NodeStatus& grp = status_[nodes_[s].c().current];
    if (ed::failedOrError(grp.phase)) {
      end(s, NodePhase::kFailed, grp.message, now);
      return;
    }
    if (g + 1 < nodes_[s].tmpl->steps.size()) {
      startGroup(s, g + 1, now);
      return;
    }
  }
  if (auto set = setOutputs(s, nullptr); !set) {
    end(s, NodePhase::kError, set.error().message(), now);
    return;
  }
  end(s, NodePhase::kSucceeded, "", now);
}

// ---- dag

void EngineRun::startDag(std::uint32_t d, TimePoint now) {
  Node& node = nodes_[d];
  node.kind = NodeKind::kDag;
  const TemplateInfo& ti = info(node.tmpl);
  if (!ti.problem.empty()) {
    end(d, NodePhase::kError, ti.problem, now);
    return;
  }
  node.c().slots.resize(ti.calls.size());
  node.c().waiting.resize(ti.calls.size());
  node.c().branch.assign(ti.calls.size(), NodePhase::kPending);
  node.c().parallelism = pending_parallelism_;
  pending_parallelism_.reset();
  for (std::size_t t = 0; t < ti.calls.size(); ++t)
    node.c().waiting[t] = static_cast<std::uint32_t>(ti.deps[t].size());
  if (model_.values) {  // decided before any task ran (its value needs none of them)
    const NodeScope scope(*this, d, nullptr, d);
    if (auto value = model_.values->ends(*node.tmpl, scope)) stopDag(d, std::move(*value), now);
  }
  if (ti.needed_count == 0) {
    finishDag(d, now);
    return;
  }
  for (std::uint32_t t = 0; t < ti.calls.size(); ++t) {
    if (ti.needed[t] && ti.deps[t].empty()) startTask(d, t, now);
  }
}

void EngineRun::startTask(std::uint32_t d, std::uint32_t t, TimePoint now) {
  if (nodes_[d].c().failing || isEnded(status_[d].phase)) return;
  const TemplateInfo& ti = info(nodes_[d].tmpl);
  const TemplateCall& call = *ti.calls[t];
  const std::string base = status_[d].name + "." + call.name;
  ++nodes_[d].open;
  auto link = [this, d, t, &ti](std::uint32_t n) {
    if (ti.deps[t].empty()) {
      addChild(d, n);
      return;
    }
    for (std::uint32_t dep : ti.deps[t]) {
      const std::uint32_t dn = nodes_[d].c().slots[dep].node;
      if (dn != kNoNode) addChild(dn, n);
    }
  };
  if (any_stopped_ && (nodes_[d].c().stopped || stoppedAbove(d))) {  // decided (stopDag)
    const std::uint32_t n =
        skippedNode(base, &call, d, d, t, NodePhase::kOmitted, ed::kDecidedFirst, now);
    nodes_[d].c().slots[t].node = n;
    link(n);
    return;
  }
  if (!ti.deps[t].empty()) {
    auto hold = dependsHold(d, t);
    if (!hold || !*hold) {
      const std::uint32_t n =
          skippedNode(base, &call, d, d, t, hold ? NodePhase::kOmitted : NodePhase::kError,
                      hold ? "omitted: depends condition not met"
                           : "unable to evaluate expression '" + excerpt(ti.depends[t]) +
                                 "': " + hold.error().message(),
                      now);
      nodes_[d].c().slots[t].node = n;
      link(n);
      return;
    }
  }
  expandCall(d, call, base, d, t, link, now);
}

void EngineRun::dagTaskFulfilled(std::uint32_t d, std::uint32_t t, TimePoint now) {
  Node& dag = nodes_[d];
  const TemplateInfo& ti = info(dag.tmpl);
  // A front end's value language may stop the calls still running now that this one ended.
  if (model_.values) {
    const NodeScope scope(*this, d, nullptr, d);
    for (std::uint32_t i = 0; i < dag.c().slots.size() && i < ti.calls.size(); ++i) {
      const std::uint32_t leaf = dag.c().slots[i].node;
      if (leaf == kNoNode || leaf == dag.c().slots[t].node) continue;
      Node& l = nodes_[leaf];
      if (!l.in_flight || !l.control || l.control->cancelled()) continue;
      std::string why;
      if (model_.values->stops(*ti.calls[i], scope, &why)) {
        status_[leaf].message = why;
        l.control->cancel();
      }
    }
  }
  --dag.open;
  ++dag.c().ended_tasks;
  const std::uint32_t n = dag.c().slots[t].node;
  const NodePhase phase = n != kNoNode ? status_[n].phase : NodePhase::kError;
  // Its branch: its own phase when it completed, else the first failure of the branches
  // it depends on (assessDAGPhase). failFast acts when a target's branch failed.
  NodePhase branch = phase;
  if (phase != NodePhase::kSucceeded && !ed::failedOrError(phase)) {
    branch = NodePhase::kSucceeded;
    for (std::uint32_t dep : ti.deps[t]) {
      if (ed::failedOrError(dag.c().branch[dep])) {
        branch = dag.c().branch[dep];
        break;
      }
    }
  }
  dag.c().branch[t] = branch;
  if (ed::failedOrError(branch) && !continuesOn(ti.calls[t], branch) && dag.tmpl->fail_fast &&
      ti.is_target[t]) {
    dag.c().failing = true;
  }
  // The front end's value language may decide the dag now (its tasks not started yet
  // then end Omitted).
  if (model_.values && !dag.c().stopped) {
    const NodeScope scope(*this, d, nullptr, d);
    if (auto value = model_.values->ends(*dag.tmpl, scope)) stopDag(d, std::move(*value), now);
  }
  for (std::uint32_t dep : ti.dependents[t]) {
    if (ti.needed[dep] && --nodes_[d].c().waiting[dep] == 0) startTask(d, dep, now);
  }
  Node& again = nodes_[d];
  if (isEnded(status_[d].phase)) return;
  if (again.c().ended_tasks == ti.needed_count || (again.c().failing && again.open == 0))
    finishDag(d, now);
}

void EngineRun::taskGroupChildFulfilled(std::uint32_t tg, TimePoint now) {
  Node& group = nodes_[tg];
  --group.open;
  if (group.open != 0) return;
  // Argo's executeDAGTask: the group takes the phase of its last failed item.
  NodePhase phase = NodePhase::kSucceeded;
  const Slot& s = nodes_[group.boundary].c().slots[group.slot];
  for (std::uint32_t n : s.items) {
    if (n != kNoNode && ed::failedOrError(status_[n].phase)) phase = status_[n].phase;
  }
  end(tg, phase, "", now);
}

// Argo's assessDAGPhase: each target's phase, or for a target that did not complete
// (skipped, omitted, never started) the phase of its branch, failures first.
void EngineRun::finishDag(std::uint32_t d, TimePoint now) {
  const TemplateInfo& ti = info(nodes_[d].tmpl);
  const Node& dag = nodes_[d];
  if (dag.c().stopped) {  // its value language decided it: its value is already set
    // A value that could not be made is no success (the run's tree would say Succeeded,
    // then the run fail for want of its output).
    std::string why;
    if (model_.values && status_[d].outputs.values)
      why = model_.values->failure(*status_[d].outputs.values);
    const NodePhase phase = why.empty() ? NodePhase::kSucceeded : NodePhase::kError;
    end(d, phase, std::move(why), now);
    return;
  }
  std::vector<NodePhase> branch(ti.calls.size(), NodePhase::kSucceeded);
  for (std::uint32_t t : ti.order) {
    if (!ti.needed[t]) continue;
    const std::uint32_t n = dag.c().slots[t].node;
    const NodePhase own = n != kNoNode ? status_[n].phase : NodePhase::kPending;
    if (own == NodePhase::kSucceeded || ed::failedOrError(own)) {
      branch[t] = own;
      continue;
    }
    NodePhase inherited = NodePhase::kSucceeded;
    for (std::uint32_t dep : ti.deps[t]) {
      if (ed::failedOrError(branch[dep]) && !ed::failedOrError(inherited)) inherited = branch[dep];
    }
    if (own == NodePhase::kPending && dag.c().failing && inherited == NodePhase::kSucceeded)
      inherited = NodePhase::kFailed;
    branch[t] = inherited;
  }
  NodePhase result = NodePhase::kSucceeded;
  for (std::uint32_t t : ti.targets) {
    if (ed::failedOrError(branch[t]) && !continuesOn(ti.calls[t], branch[t])) {
      result = branch[t];
      if (dag.tmpl->fail_fast) break;
    }
  }
  if (result == NodePhase::kSucceeded) {
    if (auto set = setOutputs(d, nullptr); !set) {
      end(d, NodePhase::kError, set.error().message(), now);
      return;
    }
  }
  if (model_.values) {  // the front end's own value of the dag (its outputs.values)
    NodeScope scope(*this, d, nullptr, d);
    if (auto v = model_.values->outputs(*dag.tmpl, scope)) status_[d].outputs.values = std::move(*v);
  }
  end(d, result, "", now);
}

// A dag its value language decided: its value now, each call running under it cancelled
// (its answer stays its outcome), each leaf waiting for a worker Omitted; startBody()
// omits whatever would start under it later. Nodes are made after their parents, so
// those under `d` are after it.
void EngineRun::stopDag(std::uint32_t d, Json value, TimePoint now) {
  nodes_[d].c().stopped = true;
  any_stopped_ = true;
  status_[d].outputs.values = std::move(value);
  notify(d);
  const std::string why = "stopped: the outcome of " + status_[d].display_name + " was decided";
  for (std::uint32_t n = d + 1; n < nodes_.size(); ++n) {
    Node& node = nodes_[n];
    if (isEnded(status_[n].phase) || !(node.in_flight || node.queued)) continue;
    std::uint32_t p = node.parent;
    while (p != kNoNode && p > d) p = nodes_[p].parent;
    if (p != d) continue;
    if (node.in_flight) {
      if (node.control && !node.control->cancelled()) {
        status_[n].message = why;
        notify(n);
        node.control->cancel();
      }
    } else {
      end(n, NodePhase::kOmitted, ed::kDecidedFirst, now);
    }
  }
}

bool EngineRun::stoppedAbove(std::uint32_t n) const {
  for (std::uint32_t p = nodes_[n].parent; p != kNoNode; p = nodes_[p].parent) {
    if (nodes_[p].composite && nodes_[p].composite->stopped) return true;
  }
  return false;
}

std::optional<int> EngineRun::parallelismOf(std::uint32_t n) const {
  const Node& node = nodes_[n];
  if (node.composite && node.composite->parallelism) return node.composite->parallelism;
  if (node.tmpl == nullptr) return std::nullopt;
  return node.tmpl->parallelism;
}

}  // namespace plugboard::core
