// Argo's Template (pkg/apis/workflow/v1alpha1/workflow_types.go) into the model's Template;
// the rules argo lint applies are workflow/validate/validate.go's (docs/decisions.md,
// "Argo Workflow YAML front end").
#include "core/frontends/argo_templates.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <utility>

#include "core/base/duration.h"

namespace plugboard::core::argo {

namespace {

// Template fields: what is read, and what only places or labels a pod on a cluster.
const FieldRules kTemplateFields{
    {"name", "inputs", "outputs", "container", "script", "plugin", "suspend", "steps", "dag",
     "retryStrategy", "timeout", "activeDeadlineSeconds", "parallelism", "failFast", "daemon"},
    {"metadata", "annotations", "nodeSelector", "affinity", "tolerations", "schedulerName",
     "priorityClassName", "serviceAccountName", "automountServiceAccountToken", "securityContext",
     "executor", "pendingTimeout", "podResources"}};

// Container fields (k8s.io/api/core/v1 Container) read, and those with no local effect.
const FieldRules kContainerFields{{"image", "command", "args", "env", "workingDir", "source"},
                                  {"name", "imagePullPolicy", "resources", "securityContext",
                                   "ports", "terminationMessagePath", "terminationMessagePolicy"}};

const FieldRules kParameterFields{{"name", "value", "default", "enum", "description"}, {}};

// A parameter's value: Argo's AnyString takes strings, numbers and booleans as text.
std::optional<Json> anyString(ArgoYaml& yaml, const yaml::Node& n, const std::string& what,
                              const std::string& subject) {
  if (!n.isDefined() || n.isNull()) return std::nullopt;
  if (!n.isScalar()) {
    yaml.problem(n, subject, what + " must be a string, a number or a boolean");
    return std::nullopt;
  }
  return Json(n.text());
}

}  // namespace

void TemplateReader::want(const std::string& name, const std::string& by_ref, const yaml::Node& at,
                          const std::string& subject) {
  wanted_->push_back(WantedTemplate{name, by_ref, yaml_.at(at), subject});
}

std::vector<ParameterDecl> TemplateReader::parameters(const yaml::Node& list,
                                                      const std::string& path,
                                                      const std::string& subject,
                                                      bool fixed_value) {
  std::vector<ParameterDecl> out;
  if (!list.isDefined() || list.isNull()) return out;
  if (!list.isSequence()) {
    yaml_.problem(list, subject, path + " must be a list");
    return out;
  }
  for (size_t i = 0; i < list.size(); ++i) {
    const yaml::Node& p = list[i];
    std::string at = path + "[" + std::to_string(i) + "]";
    if (!yaml_.checkFields(p, at, subject, kParameterFields)) continue;
    ParameterDecl decl;
    decl.where = yaml_.at(p);
    decl.name = yaml_.text(p, "name", at, subject);
    if (decl.name.empty()) {  // validate.go validateWorkflowFieldNames: "[%d].name is required"
      yaml_.problem(p, subject, at + ".name is required");
      continue;
    }
    if (std::any_of(out.begin(), out.end(), [&](const auto& d) { return d.name == decl.name; })) {
      yaml_.problem(p, subject, at + ".name " + quote(decl.name) + " is not unique");
      continue;
    }
    std::string field = path + "." + decl.name;
    std::optional<Json> value = anyString(yaml_, member(p, "value"), field + ".value", subject);
    if (fixed_value) {
      decl.value = value;
    } else {
      decl.default_value = value;
    }
    if (auto d = anyString(yaml_, member(p, "default"), field + ".default", subject)) {
      if (decl.default_value) {
        yaml_.problem(member(p, "default"), subject,
                      field + " has both value and default; choose one");
      }
      decl.default_value = d;
    }
    decl.enum_values = yaml_.strings(p, "enum", field, subject);
    decl.description = yaml_.text(p, "description", field, subject);
    if (member(p, "enum").isDefined() && decl.enum_values.empty()) {
      yaml_.problem(member(p, "enum"), subject, field + ".enum should contain at least one value");
    }
    // validateArgumentsValues: a value given must be one of the enum.
    const std::optional<Json>& given = decl.value ? decl.value : decl.default_value;
    if (!decl.enum_values.empty() && given &&
        std::find(decl.enum_values.begin(), decl.enum_values.end(), given->get<std::string>()) ==
            decl.enum_values.end()) {
      yaml_.problem(p, subject, field + ".value should be present in " + field + ".enum list");
    }
    out.push_back(std::move(decl));
  }
  return out;
}

std::string fieldNameRule(const std::string& name, bool tags_allowed) {
  const auto alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  std::string skeleton = name;
  if (tags_allowed) {  // validate.go: ProcessArgs' placeholders become "x" before the check
    for (std::size_t at = skeleton.find("{{"); at != std::string::npos;
         at = skeleton.find("{{", at + 1)) {
      const std::size_t end = skeleton.find("}}", at + 2);
      if (end == std::string::npos) break;
      // A variable's name (`{{inputs.parameters.x}}`), nothing else: no line breaks.
      if (std::all_of(skeleton.begin() + static_cast<long>(at) + 2,
                      skeleton.begin() + static_cast<long>(end),
                      [&](char c) { return alnum(c) || c == '.' || c == '_' || c == '-'; })) {
        skeleton.replace(at, end + 2 - at, "x");
      }
    }
  }
  if (skeleton.size() > 128) return "must be no more than 128 characters";
  if (skeleton.empty() || !alnum(skeleton[0]) ||
      !std::all_of(skeleton.begin(), skeleton.end(),
                   [&](char c) { return alnum(c) || c == '-'; })) {
    return "name must consist of alpha-numeric characters or '-', and must start with an "
           "alpha-numeric character";
  }
  return "";
}

std::string objectNameRule(const std::string& name, bool prefix) {
  if (!prefix && name.size() > 63) {
    return "must not be more than 63 characters long (currently " + std::to_string(name.size()) +
           ")";
  }
  std::string checked = name;
  if (prefix && checked.size() > 1 && checked.back() == '-') checked.back() = 'a';
  const auto lowerOrDigit = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  bool ok = !checked.empty() && checked.size() <= 253;
  std::size_t start = 0;
  while (ok && start <= checked.size()) {  // labels between dots
    std::size_t dot = checked.find('.', start);
    if (dot == std::string::npos) dot = checked.size();
    const std::string_view label(checked.data() + start, dot - start);
    ok = !label.empty() && lowerOrDigit(label.front()) && lowerOrDigit(label.back()) &&
         std::all_of(label.begin(), label.end(),
                     [&](char c) { return lowerOrDigit(c) || c == '-'; });
    start = dot + 1;
  }
  if (!ok) {
    return "a DNS-1123 subdomain must consist of lower case alphanumeric characters, '-' or "
           "'.', and must start and end with an alphanumeric character";
  }
  return "";
}

std::optional<Template> TemplateReader::read(const yaml::Node& node, const std::string& path,
                                             const std::string& inline_name) {
  std::string name = node.isMap() ? yaml_.text(node, "name", path, "") : "";
  if (!inline_name.empty()) {
    name = inline_name;
  } else if (name.empty()) {
    yaml_.problem(node, "", path + ".name is required");
    return std::nullopt;
  } else if (const std::string rule = fieldNameRule(name); !rule.empty()) {
    yaml_.problem(node, "", path + ".name " + quote(name) + " is invalid: " + rule);
    return std::nullopt;
  } else {
    name = prefix_ + name;
  }
  if (!inline_name.empty() && std::count(inline_name.begin(), inline_name.end(), '.') > 32) {
    throw yaml::TreeLimit{node.mark(), "inline templates nested deeper than 32"};
  }
  std::string subject = "template " + quote(name);
  Template t;
  t.name = name;
  std::string outer = std::exchange(owner_, name);
  struct Restore {
    std::string& owner;
    std::string outer;
    ~Restore() { owner = std::move(outer); }
  } restore{owner_, std::move(outer)};
  t.where = yaml_.at(node);
  yaml_.checkFields(node, "", subject, kTemplateFields);
  if (yaml_.boolean(node, "daemon", "", subject).value_or(false)) {
    yaml_.problem(member(node, "daemon"), subject,
                  "daemon: not supported: " + std::string(refusalReason("daemon")));
  }
  const yaml::Node inputs = member(node, "inputs");
  if (inputs.isDefined() && !inputs.isNull() &&
      yaml_.checkFields(inputs, "inputs", subject, {{"parameters"}, {}})) {
    t.inputs = parameters(member(inputs, "parameters"), "inputs.parameters", subject, true);
  }
  if (!readKind(node, t, "", subject)) return std::nullopt;
  // The text a leaf's call carries (model.h): a steps or dag template's own would be the
  // whole list of its calls, which no call sends.
  if (t.kind == Template::Kind::kPlugin || t.kind == Template::Kind::kContainer ||
      t.kind == Template::Kind::kScript) {
    t.original = toJson(node);
  }
  readOutputs(member(node, "outputs"), t, "outputs", subject);
  readRetry(member(node, "retryStrategy"), t, "retryStrategy", subject);
  readLimits(node, t, "", subject);
  return t;
}

bool TemplateReader::readKind(const yaml::Node& node, Template& t, const std::string& path,
                              const std::string& subject) {
  // validate.go validateTemplateType: exactly one kind. The refused kinds were named by
  // checkFields already; they count here so that the message is about them alone.
  static const char* const kKinds[] = {"container", "script",   "plugin",       "suspend", "steps",
                                       "dag",       "resource", "containerSet", "data",    "http"};
  std::vector<std::string> kinds;
  for (const char* k : kKinds) {
    if (member(node, k).isDefined()) kinds.push_back(k);
  }
  if (kinds.empty()) {
    yaml_.problem(node, subject,
                  "template type unspecified: choose one of container, script, plugin, suspend, "
                  "steps, dag");
    return false;
  }
  if (kinds.size() > 1) {
    yaml_.problem(node, subject,
                  "multiple template types specified: " + kinds[0] + ", " + kinds[1]);
    return false;
  }
  const std::string& kind = kinds[0];
  const yaml::Node body = member(node, kind);
  if (kind == "container" || kind == "script") {
    t.kind = kind == "container" ? Template::Kind::kContainer : Template::Kind::kScript;
    readContainer(body, node, t, kind == "script", path + kind, subject);
  } else if (kind == "plugin") {
    t.kind = Template::Kind::kPlugin;
    readPlugin(body, t, path + kind, subject);
  } else if (kind == "suspend") {
    t.kind = Template::Kind::kSuspend;
    if (!body.isNull() && yaml_.checkFields(body, "suspend", subject, {{"duration"}, {}})) {
      t.suspend_for = yaml_.text(body, "duration", "suspend", subject);
    }
  } else if (kind == "steps") {
    t.kind = Template::Kind::kSteps;
    t.fail_fast = false;  // a steps template fails fast only when its failFast says so
    readSteps(body, t, "steps", subject);
  } else if (kind == "dag") {
    t.kind = Template::Kind::kDag;
    readDag(body, t, "dag", subject);
  } else {
    return false;  // refused by checkFields
  }
  return true;
}

void TemplateReader::readPlugin(const yaml::Node& node, Template& t, const std::string& path,
                                const std::string& subject) {
  // The plugin's name is the one key under `plugin` (Argo's Plugin: an Object whose key
  // the agent's sidecars recognise).
  if (!node.isMap() || node.size() != 1) {
    yaml_.problem(node, subject, path + " must be a mapping with exactly one key, the plugin's");
    return;
  }
  auto kv = *node.pairs().begin();
  t.plugin.key = kv.key.text();
  t.plugin.args = kv.value.isNull() ? Json::object() : toJson(kv.value);
  // Argo's agent offers a plugin template to every plugin in turn until one takes it.
  t.plugin.poll = true;
}

void TemplateReader::readContainer(const yaml::Node& node, const yaml::Node& tmpl, Template& t,
                                   bool script, const std::string& path,
                                   const std::string& subject) {
  if (!yaml_.checkFields(node, path, subject, kContainerFields)) return;
  ContainerRun& c = *t.container;
  c.image = yaml_.text(node, "image", path, subject);
  if (c.image.empty()) yaml_.problem(node, subject, path + ".image may not be empty");
  // A value with a tag is checked once substituted, by the deployer that runs it.
  if (!c.image.empty() && c.image.find("{{") == std::string::npos) {
    if (Status st = host::checkImageReference(c.image); !st)
      yaml_.problem(member(node, "image"), subject, path + ".image: " + st.error().message());
  }
  const yaml::Node security = member(node, "securityContext");
  const yaml::Node pod_security = member(tmpl, "securityContext");
  if (security.isDefined() || pod_security.isDefined()) {
    const Json container_json = security.isDefined() ? toJson(security) : Json();
    const Json pod_json = pod_security.isDefined() ? toJson(pod_security) : Json();
    if (auto read = host::readSecurityContext(&container_json, &pod_json, ceiling_, path,
                                              "the configuration's [containment] templates "
                                              "allows more");
        !read) {
      yaml_.problem(security.isDefined() ? security : pod_security, subject,
                    read.error().message());
    }
  }
  c.command = yaml_.strings(node, "command", path, subject);
  c.args = yaml_.strings(node, "args", path, subject);
  c.working_dir = yaml_.text(node, "workingDir", path, subject);
  if (script) {
    if (!member(node, "source").isDefined())
      yaml_.problem(node, subject, path + ".source is required");
    c.source = yaml_.text(node, "source", path, subject);
  } else if (member(node, "source").isDefined()) {
    yaml_.problem(member(node, "source"), subject,
                  path + ".source: only script templates have one");
  }
  const yaml::Node env = yaml_.list(node, "env", path, subject);
  for (size_t i = 0; i < env.size(); ++i) {
    std::string at = path + ".env[" + std::to_string(i) + "]";
    if (!yaml_.checkFields(env[i], at, subject, {{"name", "value"}, {}})) continue;
    std::string name = yaml_.text(env[i], "name", at, subject);
    if (name.empty()) {
      yaml_.problem(env[i], subject, at + ".name is required");
    } else if (Status st = host::checkEnvName(name); !st) {
      yaml_.problem(env[i], subject, at + ".name: " + st.error().message());
    }
    c.env.emplace_back(name, yaml_.text(env[i], "value", at, subject));
  }
}

void TemplateReader::readOutputs(const yaml::Node& node, Template& t, const std::string& path,
                                 const std::string& subject) {
  if (!node.isDefined() || node.isNull()) return;
  if (!yaml_.checkFields(node, path, subject, {{"parameters"}, {}})) return;
  const yaml::Node list = yaml_.list(node, "parameters", path, subject);
  for (size_t i = 0; i < list.size(); ++i) {
    const yaml::Node& p = list[i];
    std::string at = path + ".parameters[" + std::to_string(i) + "]";
    if (!yaml_.checkFields(p, at, subject,
                           {{"name", "value", "valueFrom", "globalName"}, {"description"}})) {
      continue;
    }
    OutputParameterDecl out;
    out.where = yaml_.at(p);
    out.name = yaml_.text(p, "name", at, subject);
    if (out.name.empty()) {
      yaml_.problem(p, subject, at + ".name is required");
      continue;
    }
    std::string field = path + ".parameters." + out.name;
    out.global_name = yaml_.text(p, "globalName", field, subject);
    const yaml::Node from = member(p, "valueFrom");
    bool has_value = member(p, "value").isDefined() && !member(p, "value").isNull();
    bool has_from = from.isDefined() && !from.isNull();
    // validate.go validateOutputParameter: exactly one of value and valueFrom.
    if (has_value == has_from) {
      yaml_.problem(p, subject,
                    has_value ? field + " has both valueFrom and value specified, choose one"
                              : field + " does not have valueFrom or value specified");
      continue;
    }
    if (has_value) {
      out.from = OutputParameterDecl::From::kValue;
      out.source = yaml_.text(p, "value", field, subject);
      t.outputs.push_back(std::move(out));
      continue;
    }
    if (!yaml_.checkFields(from, field + ".valueFrom", subject,
                           {{"path", "parameter", "expression", "supplied", "default"}, {}})) {
      continue;
    }
    if (auto d = anyString(yaml_, member(from, "default"), field + ".valueFrom.default", subject)) {
      out.default_value = d;
    }
    std::vector<std::pair<OutputParameterDecl::From, const char*>> sources;
    for (auto [kind, key] : {std::pair{OutputParameterDecl::From::kPath, "path"},
                             std::pair{OutputParameterDecl::From::kParameter, "parameter"},
                             std::pair{OutputParameterDecl::From::kExpression, "expression"},
                             std::pair{OutputParameterDecl::From::kSupplied, "supplied"}}) {
      if (member(from, key).isDefined()) sources.emplace_back(kind, key);
    }
    if (sources.size() != 1) {
      yaml_.problem(
          from, subject,
          field + ".valueFrom needs exactly one of path, parameter, expression, supplied");
      continue;
    }
    out.from = sources[0].first;
    if (out.from != OutputParameterDecl::From::kSupplied) {
      out.source = yaml_.text(from, sources[0].second, field + ".valueFrom", subject);
    }
    // validate.go validateOutputs: which source each kind of template takes.
    using K = Template::Kind;
    bool leaf_pod = t.kind == K::kContainer || t.kind == K::kScript;
    bool composite = t.kind == K::kSteps || t.kind == K::kDag;
    if (leaf_pod && out.from != OutputParameterDecl::From::kPath) {
      yaml_.problem(from, subject,
                    field + ".path must be specified for container and script templates");
    } else if (composite && out.from != OutputParameterDecl::From::kParameter &&
               out.from != OutputParameterDecl::From::kExpression) {
      yaml_.problem(
          from, subject,
          field + ".parameter or expression must be specified for steps and dag templates");
    } else if (out.from == OutputParameterDecl::From::kPath && !leaf_pod) {
      yaml_.problem(from, subject,
                    field + ".valueFrom.path: only container and script templates write files");
    } else if (out.from == OutputParameterDecl::From::kSupplied && t.kind != K::kPlugin &&
               t.kind != K::kSuspend) {
      yaml_.problem(
          from, subject,
          field + ".valueFrom.supplied: only plugin and suspend templates are supplied values");
    }
    t.outputs.push_back(std::move(out));
  }
}

void TemplateReader::readRetry(const yaml::Node& node, Template& t, const std::string& path,
                               const std::string& subject) {
  if (!node.isDefined() || node.isNull()) return;
  // affinity asks for another node on a retry; there is one node here.
  if (!yaml_.checkFields(node, path, subject,
                         {{"limit", "retryPolicy", "backoff", "expression"}, {"affinity"}})) {
    return;
  }
  RetryStrategy r;
  r.where = yaml_.at(node);
  if (member(node, "limit").isDefined() && !member(node, "limit").isNull()) {
    r.limit = yaml_.text(node, "limit", path, subject);
  }
  std::string policy = yaml_.text(node, "retryPolicy", path, subject);
  // validate.go: "%s is not a valid RetryPolicy"; workflow_types.go RetryPolicy*.
  if (policy == "Always") {
    r.policy = RetryStrategy::Policy::kAlways;
  } else if (policy == "OnError") {
    r.policy = RetryStrategy::Policy::kOnError;
  } else if (policy == "OnTransientError") {
    r.policy = RetryStrategy::Policy::kOnTransientError;
  } else if (policy.empty() || policy == "OnFailure") {
    r.policy = RetryStrategy::Policy::kOnFailure;
  } else {
    yaml_.problem(member(node, "retryPolicy"), subject, policy + " is not a valid RetryPolicy");
  }
  r.expression = yaml_.text(node, "expression", path, subject);
  const yaml::Node backoff = member(node, "backoff");
  if (backoff.isDefined() && !backoff.isNull() &&
      yaml_.checkFields(backoff, path + ".backoff", subject,
                        {{"duration", "factor", "maxDuration", "cap"}, {}})) {
    auto duration = [&](const char* key) -> std::optional<Millis> {
      std::string text = yaml_.text(backoff, key, path + ".backoff", subject);
      if (text.empty()) return std::nullopt;
      auto d = parseDuration(text);  // Backoff.Duration: "default unit is seconds"
      if (!d) {
        yaml_.problem(member(backoff, key), subject,
                      path + ".backoff." + key + ": " + quote(text) + " is not a duration");
        return std::nullopt;
      }
      return *d;
    };
    r.backoff = duration("duration");
    r.max_total = duration("maxDuration");
    r.max_backoff = duration("cap");
    std::string factor = yaml_.text(backoff, "factor", path + ".backoff", subject);
    if (!factor.empty()) {
      // IntOrString: 2 or "2".
      char* end = nullptr;
      double f = std::strtod(factor.c_str(), &end);
      if (end != factor.c_str() + factor.size() || !(f >= 1)) {
        yaml_.problem(member(backoff, "factor"), subject,
                      path + ".backoff.factor must be a number >= 1");
      } else {
        r.factor = f;
      }
    }
  }
  t.retry = std::move(r);
}

void TemplateReader::readLimits(const yaml::Node& node, Template& t, const std::string& path,
                                const std::string& subject) {
  bool leaf = t.kind != Template::Kind::kSteps && t.kind != Template::Kind::kDag;
  t.timeout = yaml_.text(node, "timeout", path, subject);
  if (!t.timeout.empty()) {
    // validate.go: "%s template doesn't support timeout field"; a bare number is not a
    // duration there ("invalid duration format in timeout").
    if (!leaf) {
      yaml_.problem(member(node, "timeout"), subject, "timeout: only leaf templates take one");
    } else if (t.timeout.find_first_not_of("0123456789") == std::string::npos) {
      yaml_.problem(member(node, "timeout"), subject,
                    "timeout: " + quote(t.timeout) + " is not a duration (write e.g. \"30s\")");
    } else if (t.timeout.find("{{") == std::string::npos && !parseDuration(t.timeout)) {
      yaml_.problem(member(node, "timeout"), subject,
                    "timeout: " + quote(t.timeout) + " is not a duration");
    }
  }
  const yaml::Node deadline = member(node, "activeDeadlineSeconds");
  if (deadline.isDefined() && !deadline.isNull()) {
    Json v = deadline.isScalar() ? toJson(deadline) : Json();
    if (!leaf) {  // validate.go: "activeDeadlineSeconds is only valid for leaf templates"
      yaml_.problem(deadline, subject, "activeDeadlineSeconds is only valid for leaf templates");
    } else if (v.is_string() && deadline.text().find("{{") != std::string::npos) {
      yaml_.problem(deadline, subject,
                    "activeDeadlineSeconds: a variable is not supported here; write a number");
    } else if (!v.is_number_integer() || v.get<long long>() <= 0) {
      yaml_.problem(deadline, subject, "activeDeadlineSeconds must be a positive integer > 0");
    } else if (auto d = durationFromSeconds(v.get<long long>())) {
      t.active_deadline = *d;
    } else {
      yaml_.problem(deadline, subject, "activeDeadlineSeconds: " + d.error().message());
    }
  }
  if (auto p = yaml_.integer(node, "parallelism", path, subject)) {
    if (leaf) {  // validate.go: "parallelism is only valid for steps and dag templates"
      yaml_.problem(member(node, "parallelism"), subject,
                    "parallelism is only valid for steps and dag templates");
    } else if (*p < 0) {
      yaml_.problem(member(node, "parallelism"), subject, "parallelism must not be negative");
    } else {
      t.parallelism = static_cast<int>(*p);
    }
  }
  // The template's failFast (Template.IsFailFast: only when true) stops a steps or dag
  // template starting children once one failed (operator.go checkParallelism); a dag's own
  // dag.failFast (default true) was read with the dag.
  if (auto f = yaml_.boolean(node, "failFast", path, subject); f && *f) t.fail_fast = true;
}

}  // namespace plugboard::core::argo
