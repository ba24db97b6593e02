// Argo's WorkflowStep and DAGTask (pkg/apis/workflow/v1alpha1/workflow_types.go) into the
// model's TemplateCalls; the rules are argo lint's (workflow/validate/validate.go:
// validateSteps, validateDAG, validateNonLeaf, the withItems/withParam/withSequence checks).
#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <set>

#include "core/frontends/argo_templates.h"

namespace plugboard::core::argo {

namespace {

// The task names a `depends` expression mentions: "A && (B.Failed || !C.Skipped)" gives
// A, B, C (workflow/common/ancestry.go reads it the same way: a name, then .Result).
std::vector<std::string> dependsNames(const std::string& depends) {
  std::vector<std::string> out;
  std::string token;
  auto flush = [&] {
    std::string name = token.substr(0, token.find('.'));
    if (!name.empty() && std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
    token.clear();
  };
  for (char c : depends) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.') {
      token += c;
    } else {
      flush();
    }
  }
  flush();
  return out;
}

}  // namespace

std::string TemplateReader::calledTemplate(const yaml::Node& node, const std::string& path,
                                           const std::string& subject) {
  bool by_name = member(node, "template").isDefined();
  const yaml::Node ref = member(node, "templateRef");
  if (by_name && ref.isDefined()) {
    yaml_.problem(node, subject, path + ": template and templateRef are exclusive; choose one");
    return "";
  }
  if (by_name) {
    std::string name = yaml_.text(node, "template", path, subject);
    if (name.empty()) return "";
    want(prefix_ + name, "", member(node, "template"), subject);
    return prefix_ + name;
  }
  if (!ref.isDefined()) {
    yaml_.problem(node, subject, path + ": template or templateRef is required");
    return "";
  }
  // clusterScope names a ClusterWorkflowTemplate: both kinds come from the same directory.
  if (!yaml_.checkFields(ref, path + ".templateRef", subject,
                         {{"name", "template"}, {"clusterScope"}})) {
    return "";
  }
  std::string wft = yaml_.text(ref, "name", path + ".templateRef", subject);
  std::string tmpl = yaml_.text(ref, "template", path + ".templateRef", subject);
  if (wft.empty() || tmpl.empty()) {
    yaml_.problem(ref, subject, path + ".templateRef needs name and template");
    return "";
  }
  want(wft + "/" + tmpl, wft + "." + tmpl, ref, subject);
  return wft + "/" + tmpl;
}

void TemplateReader::readSteps(const yaml::Node& node, Template& t, const std::string& path,
                               const std::string& subject) {
  if (!node.isSequence()) {
    yaml_.problem(node, subject, path + " must be a list of parallel groups (lists of steps)");
    return;
  }
  std::set<std::string> names;
  for (size_t g = 0; g < node.size(); ++g) {
    const yaml::Node& group = node[g];
    std::string at = path + "[" + std::to_string(g) + "]";
    if (!group.isSequence()) {
      yaml_.problem(group, subject, at + " must be a list of steps (write `- - name: ...`)");
      continue;
    }
    std::vector<TemplateCall> calls;
    for (size_t i = 0; i < group.size(); ++i) {
      auto call = readCall(group[i], false, at + "[" + std::to_string(i) + "]", subject);
      if (!call) continue;
      // validate.go validateSteps: "steps[%d].name '%s' is not unique"
      if (!names.insert(call->name).second) {
        yaml_.problem(group[i], subject, at + ".name " + quote(call->name) + " is not unique");
        continue;
      }
      calls.push_back(std::move(*call));
    }
    t.steps.push_back(std::move(calls));
  }
}

void TemplateReader::readDag(const yaml::Node& node, Template& t, const std::string& path,
                             const std::string& subject) {
  if (!yaml_.checkFields(node, path, subject, {{"tasks", "target", "failFast"}, {}})) return;
  const yaml::Node tasks = yaml_.list(node, "tasks", path, subject);
  if (tasks.size() == 0) {  // validate.go validateDAG: "must have at least one task"
    yaml_.problem(node, subject, "a dag must have at least one task");
    return;
  }
  if (auto f = yaml_.boolean(node, "failFast", path, subject)) t.fail_fast = *f;
  t.tasks.reserve(tasks.size());
  bool uses_depends = false, uses_dependencies = false;
  std::set<std::string> seen;
  for (size_t i = 0; i < tasks.size(); ++i) {
    auto call = readCall(tasks[i], true, path + ".tasks[" + std::to_string(i) + "]", subject);
    if (!call) continue;
    if (!seen.insert(call->name).second) {
      yaml_.problem(tasks[i], subject, "dag task name " + quote(call->name) + " is not unique");
      continue;
    }
    uses_depends |= member(tasks[i], "depends").isDefined();
    uses_dependencies |= member(tasks[i], "dependencies").isDefined();
    t.tasks.push_back(std::move(*call));
  }
  if (uses_depends && uses_dependencies) {
    yaml_.problem(node, subject,
                  "cannot use both 'depends' and 'dependencies' in the same DAG template");
  }
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < t.tasks.size(); ++i) index[t.tasks[i].name] = i;
  for (auto& task : t.tasks) {
    if ((uses_depends || uses_dependencies) &&
        std::isdigit(static_cast<unsigned char>(task.name[0]))) {
      yaml_.problem(
          task.where, subject,
          "dag task " + quote(task.name) +
              " name cannot begin with a digit when using either 'depends' or 'dependencies'");
    }
    for (const auto& dep : task.depends_on) {
      if (index.count(dep) == 0) {
        yaml_.problem(
            task.where, subject,
            "dag task " + quote(task.name) + ": dependency " + quote(dep) + " not defined");
      }
    }
  }
  // A cycle (validate.go: "sorting failed"): depth-first over depends_on.
  std::vector<int> state(t.tasks.size(), 0);  // 0 new, 1 on the path, 2 done
  std::function<bool(size_t)> cyclic = [&](size_t i) {
    if (state[i] == 1) return true;
    if (state[i] == 2) return false;
    state[i] = 1;
    for (const auto& dep : t.tasks[i].depends_on) {
      auto it = index.find(dep);
      if (it != index.end() && cyclic(it->second)) return true;
    }
    state[i] = 2;
    return false;
  };
  for (size_t i = 0; i < t.tasks.size(); ++i) {
    if (state[i] == 0 && cyclic(i)) {
      yaml_.problem(t.tasks[i].where, subject,
                    "dependency cycle through dag task " + quote(t.tasks[i].name));
      break;
    }
  }
  t.dag_target = yaml_.text(node, "target", path, subject);
  std::string target;
  for (char c : t.dag_target + " ") {
    if (c != ' ') {
      target += c;
    } else if (!target.empty()) {
      if (index.count(target) == 0 && target.find("{{") == std::string::npos) {
        yaml_.problem(member(node, "target"), subject,
                      "target " + quote(target) + " is not defined");
      }
      target.clear();
    }
  }
}

std::optional<TemplateCall> TemplateReader::readCall(const yaml::Node& node, bool dag,
                                                     const std::string& path,
                                                     const std::string& owner) {
  static const FieldRules kStepFields{
      {"name", "template", "templateRef", "arguments", "withItems", "withParam", "withSequence",
       "when", "continueOn", "onExit", "hooks", "inline"},
      {}};
  static const FieldRules kTaskFields{
      {"name", "template", "templateRef", "arguments", "withItems", "withParam", "withSequence",
       "when", "continueOn", "onExit", "hooks", "dependencies", "depends", "inline"},
      {}};
  std::string name = node.isMap() ? yaml_.text(node, "name", path, owner) : "";
  if (name.empty()) {
    yaml_.problem(node, owner, path + ".name is required");
    return std::nullopt;
  }
  if (const std::string rule = fieldNameRule(name, !dag); !rule.empty()) {
    yaml_.problem(node, owner, path + ".name " + quote(name) + " is invalid: " + rule);
    return std::nullopt;
  }
  std::string subject = (dag ? "task " : "step ") + quote(name);
  yaml_.checkFields(node, "", subject, dag ? kTaskFields : kStepFields);
  TemplateCall call;
  call.name = name;
  call.where = yaml_.at(node);
  const yaml::Node inline_template = member(node, "inline");
  if (!inline_template.isDefined()) {
    call.template_name = calledTemplate(node, "", subject);
  } else if (member(node, "template").isDefined() || member(node, "templateRef").isDefined()) {
    yaml_.problem(node, subject, "inline, template and templateRef are exclusive; choose one");
  } else if (auto t = read(inline_template, "inline", owner_ + "." + name)) {
    call.template_name = t->name;
    inlined_.push_back(std::move(*t));
  }
  const yaml::Node args = member(node, "arguments");
  if (args.isDefined() && !args.isNull() &&
      yaml_.checkFields(args, "arguments", subject, {{"parameters"}, {}})) {
    for (auto& p : parameters(member(args, "parameters"), "arguments.parameters", subject, true)) {
      if (!p.value) {
        yaml_.problem(p.where, subject, "arguments.parameters." + p.name + ".value is required");
        continue;
      }
      call.arguments.emplace_back(p.name, *p.value);
    }
  }
  call.when = yaml_.text(node, "when", "", subject);
  readLoop(node, call, "", subject);
  const yaml::Node cont = member(node, "continueOn");
  if (cont.isDefined() && !cont.isNull() &&
      yaml_.checkFields(cont, "continueOn", subject, {{"failed", "error"}, {}})) {
    call.continue_on_failed = yaml_.boolean(cont, "failed", "continueOn", subject).value_or(false);
    call.continue_on_error = yaml_.boolean(cont, "error", "continueOn", subject).value_or(false);
    if (dag && member(node, "depends").isDefined()) {  // validate.go validateDAG
      yaml_.problem(
          cont, subject,
          "cannot use 'continueOn' when using 'depends'; use 'TASK.Failed' / 'TASK.Errored'");
    }
  }
  std::string on_exit = yaml_.text(node, "onExit", "", subject);
  if (!on_exit.empty()) {
    want(prefix_ + on_exit, "", member(node, "onExit"), subject);
    call.on_exit = prefix_ + on_exit;
  }
  readHooks(member(node, "hooks"), call, "hooks", subject);
  if (dag) {
    std::vector<std::string> deps = yaml_.strings(node, "dependencies", "", subject);
    std::string depends = yaml_.text(node, "depends", "", subject);
    if (!deps.empty()) {
      for (size_t i = 0; i < deps.size(); ++i) call.depends += (i ? " && " : "") + deps[i];
      call.depends_on = deps;
    } else {
      call.depends = depends;
      call.depends_on = dependsNames(depends);
    }
  }
  return call;
}

void TemplateReader::readHooks(const yaml::Node& node, TemplateCall& call, const std::string& path,
                               const std::string& subject) {
  if (!exitHook(yaml_, node, path, subject)) return;
  const yaml::Node exit = member(node, "exit");
  if (!yaml_.checkFields(exit, path + ".exit", subject,
                         {{"template", "templateRef", "arguments"}, {}})) {
    return;
  }
  if (!call.on_exit.empty()) {
    yaml_.problem(exit, subject, "onExit and hooks.exit are exclusive; choose one");
    return;
  }
  call.on_exit = calledTemplate(exit, path + ".exit", subject);
  const yaml::Node args = member(exit, "arguments");
  if (args.isDefined() && !args.isNull() &&
      yaml_.checkFields(args, path + ".exit.arguments", subject, {{"parameters"}, {}})) {
    for (auto& p : parameters(member(args, "parameters"), path + ".exit.arguments.parameters",
                              subject, true)) {
      if (p.value) call.on_exit_arguments.emplace_back(p.name, *p.value);
    }
  }
}

void TemplateReader::readLoop(const yaml::Node& node, TemplateCall& call, const std::string& path,
                              const std::string& subject) {
  int loops = 0;
  Loop loop;  // set on the call only when it has one
  if (member(node, "withItems").isDefined()) {
    ++loops;
    loop.kind = Loop::Kind::kItems;
    loop.where = yaml_.at(member(node, "withItems"));
    const yaml::Node items = yaml_.list(node, "withItems", path, subject);
    loop.items = toJson(items);
    if (!loop.items.is_array()) loop.items = Json::array();
    for (const auto& item : loop.items) {
      if (item.is_null()) {  // validate.go: "unsupported withItems type"
        yaml_.problem(loop.where, subject, "withItems: an item is empty");
      }
    }
  }
  if (member(node, "withParam").isDefined()) {
    ++loops;
    loop.kind = Loop::Kind::kParam;
    loop.where = yaml_.at(member(node, "withParam"));
    loop.param = yaml_.text(node, "withParam", path, subject);
  }
  if (member(node, "withSequence").isDefined()) {
    ++loops;
    loop.kind = Loop::Kind::kSequence;
    const yaml::Node seq = member(node, "withSequence");
    loop.where = yaml_.at(seq);
    if (yaml_.checkFields(seq, "withSequence", subject,
                          {{"count", "start", "end", "format"}, {}})) {
      loop.count = yaml_.text(seq, "count", "withSequence", subject);
      loop.start = yaml_.text(seq, "start", "withSequence", subject);
      loop.end = yaml_.text(seq, "end", "withSequence", subject);
      loop.format = yaml_.text(seq, "format", "withSequence", subject);
      // util/expand (Sequence): count and end are exclusive, and one is needed.
      if (loop.count.empty() == loop.end.empty()) {
        yaml_.problem(seq, subject, "withSequence needs exactly one of count and end");
      }
    }
  }
  if (loops > 1) {  // validate.go validateNonLeaf / validateItems
    yaml_.problem(node, subject, "only one of withItems, withParam, withSequence can be specified");
  }
  if (loops > 0) call.loop = std::move(loop);
}

}  // namespace plugboard::core::argo
