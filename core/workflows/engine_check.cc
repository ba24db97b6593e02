// What the model alone can tell before a run (as `argo lint`, workflow/validate/validate.go:
// unknown templates, dag dependencies and cycles, variables no scope gives), and the
// workflow's parameters from their declarations and the values given.
#include <algorithm>
#include <set>

#include <unordered_map>

#include "core/base/text.h"
#include "core/workflows/engine.h"
#include "core/workflows/engine_state.h"
#include "core/workflows/tags.h"

namespace plugboard::core {
namespace {


// What a piece of text in a template may name.
struct CheckScope {
  const WorkflowModel* model = nullptr;
  const Template* tmpl = nullptr;
  const TemplateInfo* info = nullptr;  // steps/dag: the calls' names
  bool item = false;                   // within a looping call
  bool leaf = false;                   // the template's own text (retries, node.name)
  bool exit_handler = false;           // workflow.status / failures
};

std::optional<std::string> unknownVariable(const CheckScope& s, const std::string& v) {
  auto declared = [](const std::vector<ParameterDecl>& ps, std::string_view name) {
    return std::any_of(ps.begin(), ps.end(), [&](const ParameterDecl& p) { return p.name == name; });
  };
  if (v == "item" || ed::startsWith(v, "item.")) {
    if (s.item) return std::nullopt;
    return "'{{" + v + "}}' is used outside a loop (withItems, withParam, withSequence)";
  }
  if (ed::startsWith(v, "workflow.parameters.")) {
    if (declared(s.model->parameters, v.substr(20))) return std::nullopt;
    return "failed to resolve {{" + v + "}}: no such workflow parameter";
  }
  if (ed::startsWith(v, "workflow.")) {
    static const std::set<std::string, std::less<>> kKnown = {
        "workflow.name", "workflow.uid", "workflow.namespace", "workflow.serviceAccountName",
        "workflow.mainEntrypoint", "workflow.parameters", "workflow.status",
        "workflow.failures", "workflow.duration", "workflow.creationTimestamp"};
    if (kKnown.contains(v) || ed::startsWith(v, "workflow.outputs.parameters.") ||
        ed::startsWith(v, "workflow.labels.") || ed::startsWith(v, "workflow.annotations.") ||
        ed::startsWith(v, "workflow.creationTimestamp"))
      return std::nullopt;
    return "failed to resolve {{" + v + "}}";
  }
  if (ed::startsWith(v, "inputs.parameters.")) {
    if (s.tmpl != nullptr && declared(s.tmpl->inputs, v.substr(18))) return std::nullopt;
    return "failed to resolve {{" + v + "}}: template '" + (s.tmpl ? s.tmpl->name : "") +
           "' has no such input parameter";
  }
  if (v == "inputs.parameters") return std::nullopt;
  if (v == "retries" || v == "node.name" || v == "pod.name" || ed::startsWith(v, "lastRetry."))
    return std::nullopt;
  const bool steps = ed::startsWith(v, "steps.");
  if (steps || ed::startsWith(v, "tasks.")) {
    const bool right = s.tmpl != nullptr && (steps ? s.tmpl->kind == Template::Kind::kSteps
                                                   : s.tmpl->kind == Template::Kind::kDag);
    if (right && s.info != nullptr) {
      const std::string rest = v.substr(6);
      for (std::size_t dot = rest.find('.'); dot != std::string::npos;
           dot = rest.find('.', dot + 1)) {
        if (s.info->index.contains(rest.substr(0, dot))) return std::nullopt;
      }
      if (s.info->index.contains(rest)) return std::nullopt;
    }
    return "failed to resolve {{" + v + "}}: no such " + (steps ? "step" : "task");
  }
  return "failed to resolve {{" + v + "}}";
}

void checkTags(const Json& value, const CheckScope& scope, const SourceRef& where,
               const std::string& subject, std::vector<ModelProblem>& out) {
  Status s = forEachTag(value, [&](const Tag& tag) -> Status {
    if (tag.expression) {
      if (auto e = checkExpression(tag.text, Dialect::kExpr); !e)
        out.push_back(
            {where, subject, excerpt("{{=" + tag.text + "}}") + ": " + e.error().message()});
      return Status::Ok();
    }
    if (auto bad = unknownVariable(scope, tag.text)) out.push_back({where, subject, *bad});
    return Status::Ok();
  });
  if (!s) out.push_back({where, subject, s.error().message()});
}

bool hasTags(const std::string& text) { return text.find("{{") != std::string::npos; }

}  // namespace

Expected<Json> resolveParameters(const WorkflowModel& model, const Json& given) {
  Json out = Json::object();
  if (!given.is_null() && !given.is_object())
    return Error("parameters must be given as name -> value");
  static const Json kNone = Json::object();
  for (const auto& item : (given.is_object() ? given : kNone).items()) {
    const std::string& name = item.key();  // clang 14 captures no structured binding
    const bool known = std::any_of(model.parameters.begin(), model.parameters.end(),
                                   [&](const ParameterDecl& p) { return p.name == name; });
    if (!known) return Error("unknown parameter '" + name + "': the workflow declares no such parameter");
  }
  for (const ParameterDecl& p : model.parameters) {
    Json value;
    if (given.is_object() && given.contains(p.name)) {
      value = given[p.name];
    } else if (p.value) {
      value = *p.value;
    } else if (p.default_value) {
      value = *p.default_value;
    } else {
      return Error(p.where.text() + (p.where.text().empty() ? "" : ": ") + "parameter '" +
                   p.name + "' has no value: give it with --param " + p.name + "=VALUE");
    }
    const std::string text = parameterText(value);
    if (!p.enum_values.empty() &&
        std::find(p.enum_values.begin(), p.enum_values.end(), text) == p.enum_values.end()) {
      std::string allowed;
      for (const auto& e : p.enum_values) allowed += (allowed.empty() ? "" : ", ") + e;
      return Error("parameter '" + p.name + "': value '" + text + "' is not one of: " + allowed);
    }
    out[p.name] = value;
  }
  return out;
}

std::vector<ModelProblem> checkModel(const WorkflowModel& model) {
  std::vector<ModelProblem> out;
  // Templates by name (the first of a name, as WorkflowModel::find), so that a model with
  // a template per task (TOML's) is checked in linear time.
  std::unordered_map<std::string_view, const Template*> by_name;
  by_name.reserve(model.templates.size());
  for (const auto& t : model.templates) by_name.emplace(t.name, &t);
  auto lookup = [&](const std::string& name) -> const Template* {
    auto it = by_name.find(name);
    return it == by_name.end() ? nullptr : it->second;
  };
  auto known = [&](const std::string& name) { return lookup(name) != nullptr; };
  if (!known(model.entrypoint))
    out.push_back({{model.file.string()}, "", "entrypoint template '" + model.entrypoint + "' not found"});
  if (!model.on_exit.empty() && !known(model.on_exit))
    out.push_back({{model.file.string()}, "", "onExit template '" + model.on_exit + "' not found"});
  // Inputs without a value or a default must be given (Argo's validate.go, validateInputs:
  // "inputs.parameters.X was not supplied"): the entry point's by the workflow's
  // parameters, a called template's by the call's arguments.
  auto requireInputs = [&](const std::string& name, const auto& given, const SourceRef& where,
                           const std::string& subject) {
    const Template* t = lookup(name);
    if (t == nullptr) return;
    for (const ParameterDecl& p : t->inputs) {
      if (p.value || p.default_value || given(p.name)) continue;
      out.push_back({where, subject,
                     "inputs.parameters." + p.name + " of template '" + name + "' was not supplied"});
    }
  };
  if (const Template* entry = lookup(model.entrypoint)) {
    requireInputs(model.entrypoint,
                  [&](const std::string& p) {
                    return std::any_of(model.parameters.begin(), model.parameters.end(),
                                       [&](const ParameterDecl& d) { return d.name == p; });
                  },
                  entry->where, "template '" + model.entrypoint + "'");
  }
  std::set<std::string> exit_templates;
  if (!model.on_exit.empty()) exit_templates.insert(model.on_exit);
  for (const Template& t : model.templates) {
    for (const auto& group : t.steps)
      for (const auto& c : group)
        if (!c.on_exit.empty()) exit_templates.insert(c.on_exit);
    for (const auto& c : t.tasks)
      if (!c.on_exit.empty()) exit_templates.insert(c.on_exit);
  }

  for (const Template& t : model.templates) {
    const std::string subject = "template '" + t.name + "'";
    const TemplateInfo info = makeTemplateInfo(t);
    if (!info.problem.empty()) out.push_back({t.where, subject, info.problem});
    if (!t.hooks_exit.empty() && !known(t.hooks_exit))
      out.push_back({t.where, subject, "exit template '" + t.hooks_exit + "' not found"});
    CheckScope own{&model, &t, &info, false, true, exit_templates.contains(t.name)};
    // The template's own text.
    if (t.kind == Template::Kind::kPlugin || t.kind == Template::Kind::kContainer ||
        t.kind == Template::Kind::kScript) {
      Json text = t.original;
      if (text.is_null()) {
        text = {{"args", t.plugin.args}, {"command", t.container->command},
                {"cargs", t.container->args}, {"image", t.container->image},
                {"source", t.container->source.value_or("")}};
      }
      checkTags(text, own, t.where, subject, out);
    }
    for (const auto& o : t.outputs) {
      if (o.from == OutputParameterDecl::From::kParameter || o.from == OutputParameterDecl::From::kValue)
        checkTags(Json(o.source), own, o.where, subject, out);
      if (o.from == OutputParameterDecl::From::kExpression) {
        if (auto e = checkExpression(o.source, Dialect::kExpr); !e)
          out.push_back({o.where, subject, "outputs.parameters." + o.name + ": " + e.error().message()});
      }
    }
    if (t.retry && !t.retry->expression.empty() && hasTags(t.retry->expression)) {
      checkTags(Json(t.retry->expression), own, t.retry->where, subject, out);
    } else if (t.retry && !t.retry->expression.empty()) {
      if (auto e = checkExpression(t.retry->expression, Dialect::kExpr); !e)
        out.push_back({t.retry->where, subject, "retryStrategy.expression: " + e.error().message()});
    }
    // Its calls.
    std::set<std::string> names;
    auto checkCall = [&](const TemplateCall& c, bool dag) {
      const std::string cs = (dag ? "task '" : "step '") + c.name + "'";
      if (!names.insert(c.name).second)
        out.push_back({c.where, cs, "the name is used twice in " + subject});
      if (!known(c.template_name))
        out.push_back({c.where, cs, "template '" + c.template_name + "' not found"});
      auto argument = [](const auto& arguments) {
        return [&arguments](const std::string& p) {
          return std::any_of(arguments.begin(), arguments.end(),
                             [&](const auto& a) { return a.first == p; });
        };
      };
      requireInputs(c.template_name, argument(c.arguments), c.where, cs);
      if (!c.on_exit.empty()) requireInputs(c.on_exit, argument(c.on_exit_arguments), c.where, cs);
      if (!c.on_exit.empty() && !known(c.on_exit))
        out.push_back({c.where, cs, "exit template '" + c.on_exit + "' not found"});
      CheckScope scope{&model, &t, &info, c.loop->kind != Loop::Kind::kNone, false,
                       exit_templates.contains(t.name)};
      for (const auto& [k, v] : c.arguments) checkTags(v, scope, c.where, cs, out);
      if (const Template* called = lookup(c.template_name); called && !c.plugin_args.is_null()) {
        // The call's args are the called template's text, seen in its scope.
        CheckScope leaf{&model, called, nullptr, false, true, exit_templates.contains(called->name)};
        checkTags(c.plugin_args, leaf, c.where, cs, out);
      }
      for (const auto& [k, v] : c.on_exit_arguments) checkTags(v, scope, c.where, cs, out);
      if (!c.when.empty()) {
        checkTags(Json(c.when), scope, c.where, cs, out);
        if (!hasTags(c.when)) {
          if (auto e = checkExpression(c.when, Dialect::kCondition); !e)
            out.push_back({c.where, cs, "when '" + excerpt(c.when) + "': " + e.error().message()});
        }
      }
      CheckScope loop_scope = scope;
      loop_scope.item = false;
      switch (c.loop->kind) {
        case Loop::Kind::kItems:
          checkTags(c.loop->items, loop_scope, c.loop->where, cs, out);
          break;
        case Loop::Kind::kParam:
          checkTags(Json(c.loop->param), loop_scope, c.loop->where, cs, out);
          break;
        case Loop::Kind::kSequence:
          if (c.loop->count.empty() == c.loop->end.empty())
            out.push_back({c.loop->where, cs, "withSequence needs one of count or end"});
          checkTags(Json::array({c.loop->count, c.loop->start, c.loop->end, c.loop->format}),
                    loop_scope, c.loop->where, cs, out);
          break;
        case Loop::Kind::kNone:
          break;
      }
      if (dag && !c.depends.empty()) {
        std::string expr = c.depends;
        std::replace(expr.begin(), expr.end(), '-', '_');
        if (!conjunctionTerms(expr).empty()) return;  // names and results joined by &&
        if (auto e = checkExpression(expr, Dialect::kExpr); !e)
          out.push_back(
              {c.where, cs, "depends '" + excerpt(c.depends) + "': " + e.error().message()});
      }
    };
    for (const auto& group : t.steps)
      for (const auto& c : group) checkCall(c, false);
    for (const auto& c : t.tasks) checkCall(c, true);
  }
  return out;
}

}  // namespace plugboard::core
