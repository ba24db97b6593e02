#include "core/frontends/toml_workflow.h"

#include <initializer_list>
#include <set>
#include <string_view>
#include <unordered_map>

#include "core/workflows/substitution.h"

namespace plugboard::core {
namespace {


std::string literal(std::string_view text) {
  std::string out;
  std::size_t i = 0;
  for (;;) {
    const auto at = text.find("{{", i);
    out.append(text.substr(i, at == std::string_view::npos ? at : at - i));
    if (at == std::string_view::npos) return out;
    out += R"({{="{{"}})";
    i = at + 2;
  }
}

// `parts` as one string of their length: a tag per step lives for the run, and `+`
// would leave each with the spare room of its growth.
std::string joined(std::initializer_list<std::string_view> parts) {
  std::size_t size = 0;
  for (auto p : parts) size += p.size();
  std::string out;
  out.reserve(size);
  for (auto p : parts) out += p;
  return out;
}

std::string tagOf(const Reference& r) {
  switch (r.kind) {
    case Reference::Kind::kInput:
      return joined({"{{workflow.parameters.", r.input, "}}"});
    case Reference::Kind::kWorkflowName:
      return "{{workflow.name}}";
    case Reference::Kind::kWorkflowStatus:
      return "{{workflow.status}}";
    case Reference::Kind::kStepOutput:
      return joined({"{{tasks.", r.step, ".outputs.parameters.", r.output, "}}"});
    case Reference::Kind::kItem:
      return r.output.empty() ? "{{item}}" : joined({"{{item.", r.output, "}}"});
  }
  return {};
}

// Every string of `value` with its references made tags by `tag`.
Json rewrite(const Json& value, const std::function<std::string(const Reference&)>& tag) {
  if (value.is_string()) {
    auto text = rewriteReferences(value.get_ref<const std::string&>(), tag, literal);
    return text ? Json(std::move(*text)) : value;  // loadWorkflow() reported bad ones
  }
  if (value.is_object()) {
    Json out = Json::object();
    for (const auto& [k, v] : value.items()) out[k] = rewrite(v, tag);
    return out;
  }
  if (value.is_array()) {
    Json out = Json::array();
    for (const auto& v : value) out.push_back(rewrite(v, tag));
    return out;
  }
  return value;
}

SourceRef where(const Workflow& wf, SourcePos pos) {
  return {wf.file.string(), pos.line, pos.column};
}

// The plugin template `step` calls; its args go on `task` (templates are shared).
Template stepTemplate(const WorkflowStep& step, TemplateCall& task) {
  Template t;
  t.name = step.id;
  t.kind = Template::Kind::kPlugin;
  t.where = task.where;  // stepTask() made it: one interned file name per step
  t.plugin.key = step.plugin;
  t.plugin.version = step.version;
  t.plugin.rpc = step.rpc;
  t.plugin.deployer = step.deployer;
  if (!step.deploy_options.empty()) t.plugin.deploy_options = step.deploy_options;
  t.plugin.poll = step.poll;
  // Args: references the template's own scope knows become tags; the others (step
  // outputs, items) come in through carried arguments, one per distinct reference.
  std::map<std::string, std::string> carried;  // reference text -> argument name
  task.plugin_args = rewrite(step.args.is_null() ? Json::object() : step.args,
                             [&](const Reference& r) {
    if (r.kind != Reference::Kind::kStepOutput && r.kind != Reference::Kind::kItem)
      return tagOf(r);
    // A name no step parameter has.
    std::string name = "ref" + std::to_string(carried.size());
    while (step.parameters.contains(name)) name += '_';
    auto [it, added] = carried.emplace(r.text, name);
    if (added) task.arguments.emplace_back(it->second, Json(tagOf(r)));
    return "{{inputs.parameters." + it->second + "}}";
  });
  task.names_leaf = true;
  Json listed;  // null until a parameter is listed: most steps have none
  for (const auto& [name, value] : step.parameters.items()) {
    task.arguments.emplace_back(name, rewrite(value, tagOf));
    listed.push_back({{"name", name}, {"value", "{{inputs.parameters." + name + "}}"}});
  }
  for (const auto& [name, value] : task.arguments) {
    ParameterDecl decl;
    decl.name = name;
    decl.where = t.where;
    t.inputs.push_back(std::move(decl));
  }
  // The template a plugin receives, as a TOML step always sent it (named as the step by
  // its task).
  t.original = {{"name", step.id}};
  if (!listed.empty()) t.original["inputs"] = {{"parameters", std::move(listed)}};
  if (step.retry.limit > 0) {
    RetryStrategy retry;
    retry.limit = std::to_string(step.retry.limit);
    retry.policy = RetryStrategy::Policy::kAlways;
    retry.backoff = step.retry.backoff;
    retry.factor = step.retry.factor;
    retry.where = t.where;
    t.retry = std::move(retry);
  }
  if (step.timeout) t.timeout = std::to_string(step.timeout->count()) + "ms";
  return t;
}

// What steps sharing a template have in common: all of it but its name and args.
std::string sharingKey(const Template& t) {
  Json key = Json::array({t.plugin.key, t.plugin.version, t.plugin.rpc, t.plugin.deployer,
                          t.plugin.deploy_options, t.plugin.poll, t.timeout,
                          t.original.contains("inputs") ? t.original["inputs"] : Json()});
  Json inputs = Json::array();
  for (const auto& p : t.inputs) inputs.push_back(p.name);
  key.push_back(std::move(inputs));
  if (t.retry) {
    key.push_back(Json::array({*t.retry->limit, t.retry->backoff ? t.retry->backoff->count() : -1,
                               t.retry->factor}));
  }
  return key.dump();
}

TemplateCall stepTask(const Workflow& wf, const WorkflowStep& step) {
  TemplateCall task;
  task.name = step.id;
  task.template_name = step.id;
  task.where = where(wf, step.pos);
  for (const auto& d : step.depends) {
    task.depends += (task.depends.empty() ? "" : " && ") + d;
    task.depends_on.push_back(d);
  }
  if (!step.when.empty()) task.when = rewrite(Json(step.when), tagOf).get<std::string>();
  if (step.items.is_array()) {
    task.loop->kind = Loop::Kind::kItems;
    task.loop->items = rewrite(step.items, tagOf);
  } else if (step.items.is_string()) {
    task.loop->kind = Loop::Kind::kParam;
    task.loop->param = rewrite(step.items, tagOf).get<std::string>();
  }
  if (task.loop) task.loop->where = task.where;
  return task;
}

// A template name no step has.
std::string freeName(const Workflow& wf, std::string name) {
  while (wf.step(name) != nullptr) name += '-';
  return name;
}

}  // namespace

WorkflowModel tomlModel(const Workflow& wf) {
  WorkflowModel model;
  model.name = wf.name;
  model.description = wf.description;
  model.file = wf.file;
  model.front_end = "toml";
  model.typed_parameters = true;
  for (const auto& in : wf.inputs) {
    ParameterDecl decl;
    decl.name = in.name;
    decl.default_value = in.default_value;
    decl.description = in.description;
    decl.where = where(wf, in.pos);
    model.parameters.push_back(std::move(decl));
  }
  Template main;
  main.name = freeName(wf, "main");
  main.kind = Template::Kind::kDag;
  main.where = where(wf, {1, 1});
  main.fail_fast = false;  // the TOML rule: independent branches go on after a failure
  Template exit = main;
  exit.name = freeName(wf, "exit");
  model.templates.push_back(Template{});  // main, filled below
  std::size_t exits = 0;
  for (const auto& step : wf.steps) exits += step.exit;
  main.tasks.reserve(wf.steps.size() - exits);  // as many as they are: no spare capacity
  exit.tasks.reserve(exits);
  // One template for the steps that call the same plugin with the same settings (the
  // first one's name: no other step's), each step's args and name on its task. The
  // first step's args are also the template's: a later step with the same args (the
  // steps of a chain, each passing its input on alike) leaves its task's null, as a task
  // without args of its own gets the template's.
  std::unordered_map<std::string, std::size_t> shared;  // sharing key -> template index
  for (const auto& step : wf.steps) {
    TemplateCall task = stepTask(wf, step);
    Template t = stepTemplate(step, task);
    auto [it, added] = shared.emplace(sharingKey(t), model.templates.size());
    if (added) {
      t.plugin.args = task.plugin_args;
      model.templates.push_back(std::move(t));
    } else if (task.plugin_args == model.templates[it->second].plugin.args) {
      task.plugin_args = Json();
    }
    task.template_name = model.templates[it->second].name;
    (step.exit ? exit : main).tasks.push_back(std::move(task));
  }
  for (const auto& o : wf.outputs) {
    OutputParameterDecl out;
    out.name = o.name;
    out.from = OutputParameterDecl::From::kParameter;
    out.source = rewrite(Json(o.value), tagOf).get<std::string>();
    out.global_name = o.name;
    out.where = where(wf, o.pos);
    main.outputs.push_back(std::move(out));
  }
  model.entrypoint = main.name;
  model.templates.front() = std::move(main);
  if (!exit.tasks.empty()) {
    model.on_exit = exit.name;
    model.templates.push_back(std::move(exit));
  }
  model.templates.shrink_to_fit();
  return model;
}

}  // namespace plugboard::core
