// core/frontends/arcaflow_workflow.cc: see arcaflow_workflow.h. The schema of the file is
// the engine's workflow/model.go (GetSchema) with the step kinds of
// internal/step/plugin/provider.go and internal/step/foreach/provider.go; the tags those of
// workflow/yaml.go; the only version engine.go's supportedVersions.
#include "core/frontends/arcaflow_workflow.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <map>
#include <regex>
#include <set>

#include <plugboard/host/arcaflow_schema.h>

#include "core/base/read_file.h"
#include "core/base/text.h"
#include "core/frontends/yaml_tree.h"
#include "core/manifests/version.h"
#include "core/workflows/arcaflow_expression.h"
#include "core/workflows/schema.h"

namespace plugboard::core {
namespace {

constexpr std::string_view kVersion = "v0.2.0";
const std::set<std::string> kTags = {"!expr", "!oneof", "!ordisabled", "!wait-optional",
                                     "!soft-optional"};

class Reader {
 public:
  Reader(std::string file, std::vector<ModelProblem>& problems)
      : file_(std::move(file)), problems_(problems) {}

  SourceRef at(const yaml::Mark& mark) const {
    if (mark.isNull()) return {file_, 0, 0};
    return {file_, mark.line + 1, mark.column + 1};
  }
  void problem(const yaml::Node& node, std::string subject, std::string message) {
    problems_.push_back({at(node.mark()), std::move(subject), std::move(message)});
  }

  // A YAML value as JSON with its tags marked; `subject` names it in problems. Throws
  // yaml::TreeLimit past 128 levels or a million values (aliases of aliases).
  Json value(const yaml::Node& node, const std::string& subject) {
    if (depth_ > kMaxDepth || ++values_ > kMaxValues) {
      throw yaml::TreeLimit{node.mark(), depth_ > kMaxDepth
                                             ? "nested deeper than 128 levels"
                                             : "more than a million values (aliases of aliases?)"};
    }
    struct Deeper {
      int& depth;
      explicit Deeper(int& d) : depth(++d) {}
      ~Deeper() { --depth; }
    } deeper(depth_);
    const std::string tag(node.tag());
    if (isLocalTag(tag)) {
      if (!kTags.contains(tag)) {
        problem(node, subject,
                "unknown tag '" + tag +
                    "' (an Arcaflow workflow knows !expr, !oneof, !ordisabled, !wait-optional, "
                    "!soft-optional)");
        return Json();
      }
      return tagged(node, tag, subject);
    }
    switch (node.type()) {
      case yaml::Node::Type::kMap: {
        Json out = Json::object();
        for (const auto& kv : node.pairs()) out[kv.key.text()] = value(kv.value, subject);
        return out;
      }
      case yaml::Node::Type::kSequence: {
        Json out = Json::array();
        for (yaml::Node item : node.items()) out.push_back(value(item, subject));
        return out;
      }
      case yaml::Node::Type::kScalar:
        return scalar(node);
      default:
        return Json();
    }
  }

  // A tag of the workflow language (`!expr`, ...; not YAML's own `!!str` nor the bare `!`).
  static bool isLocalTag(std::string_view tag) {
    return tag.size() > 1 && tag[0] == '!';
  }

  // A plain scalar as YAML's core schema types it (as the engine's YAML parser does);
  // a quoted one, or one tagged !!str, is text.
  static Json scalar(const yaml::Node& node) {
    const std::string text = node.text();
    // Quoted, block or `!!str` text stays text; YAML's own `!!int`, `!!bool`... type it.
    const std::string_view tag = node.tag();
    if (!node.plain() && (!tag.starts_with("tag:yaml.org,2002:") || tag == "tag:yaml.org,2002:str"))
      return text;
    static const std::regex kInt("^[-+]?(0|[1-9][0-9]*)$");
    static const std::regex kFloat(
        R"(^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$)");
    if (text == "~" || text == "null" || text == "Null" || text == "NULL" || text.empty())
      return Json();
    if (text == "true" || text == "True" || text == "TRUE") return true;
    if (text == "false" || text == "False" || text == "FALSE") return false;
    if (std::regex_match(text, kInt)) {
      try {
        return static_cast<std::int64_t>(std::stoll(text));
      } catch (const std::exception&) {
        return text;  // beyond 64 bits: text
      }
    }
    if (std::regex_match(text, kFloat)) return std::stod(text);
    return text;
  }

  // The expression in a tagged scalar, parsed now so that a bad one names its place.
  std::optional<arcaflow::Expression> expression(const yaml::Node& node, const std::string& tag,
                                                 const std::string& subject) {
    if (!node.isScalar()) {
      problem(node, subject, tag + " on a value that is not a string");
      return std::nullopt;
    }
    arcaflow::Position pos;
    auto expr = arcaflow::parseExpression(node.scalar(), &pos);
    if (!expr) {
      problem(node, subject,
              "bad expression '" + excerpt(node.text()) + "': " + expr.error().message());
      return std::nullopt;
    }
    if (Status checked = expr->check(); !checked) {
      problem(node, subject,
              "bad expression '" + excerpt(node.text()) + "': " + checked.error().message());
      return std::nullopt;
    }
    return std::move(*expr);
  }

  Json tagged(const yaml::Node& node, const std::string& tag, const std::string& subject) {
    Json out = {{kArcaflowTagKey, tag},
                {"line", node.mark().line + 1},
                {"column", node.mark().column + 1}};
    if (tag == "!oneof") {
      // workflow/yaml.go buildOneOfExpressions: a map of `discriminator` and `one_of`.
      if (!node.isMap()) {
        problem(node, subject, "!oneof on a value that is not a mapping of discriminator and one_of");
        return Json();
      }
      const yaml::Node d = node.member("discriminator");
      const yaml::Node options = node.member("one_of");
      if (!d.isScalar() || d.scalar().empty()) {
        problem(node, subject, "!oneof needs a non-empty string 'discriminator'");
        return Json();
      }
      if (!options.isMap()) {
        problem(node, subject, "!oneof needs a mapping 'one_of'");
        return Json();
      }
      for (const auto& kv : node.pairs()) {
        const std::string key = kv.key.text();
        if (key != "discriminator" && key != "one_of")
          problem(kv.key, subject, "!oneof has no field '" + key + "' (it has discriminator, one_of)");
      }
      out["discriminator"] = d.text();
      out["one_of"] = value(options, subject);
      return out;
    }
    auto expr = expression(node, tag, subject);
    if (!expr) return Json();
    const std::string text = node.text();
    out["expr"] = text;
    if (tag == "!ordisabled") {
      // workflow/yaml.go buildResultOrDisabledExpression: the text must name a step's
      // outputs, `$.steps.NAME.<more>`; its disabled case reads `$.steps.NAME.disabled.output`.
      static const std::regex kStepPath(R"(((?:\$.)?steps\.([^.]+))(\..+))");
      std::smatch m;
      if (!std::regex_search(text, m, kStepPath)) {
        problem(node, subject,
                "!ordisabled needs a step's output, as $.steps.NAME.outputs.OUTPUT; got '" +
                    text + "'");
        return Json();
      }
      out["step"] = m[2].str();
    }
    return out;
  }

  // Refuses each key of `node` not in `known`, by name.
  void onlyKnown(const yaml::Node& node, const std::set<std::string>& known,
                 const std::string& subject, const std::string& what) {
    for (const auto& kv : node.pairs()) {
      const std::string key = kv.key.text();
      if (known.contains(key)) continue;
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      problem(kv.key, subject, "unknown field '" + key + "' (" + what + " has " + list + ")");
    }
  }

  std::string text(const yaml::Node& node, const std::string& subject, const std::string& field) {
    if (!node.isScalar() || isLocalTag(node.tag())) {
      problem(node, subject, "'" + field + "' must be a string");
      return {};
    }
    return node.text();
  }

 private:
  static constexpr int kMaxDepth = 128;
  static constexpr long kMaxValues = 1'000'000;
  SourceFile file_;
  std::vector<ModelProblem>& problems_;
  int depth_ = 0;
  long values_ = 0;
};

// Every expression of `value` (tagged objects, recursively), with its tag and place.
void forEachExpression(
    const Json& value,
    const std::function<void(const std::string& tag, const std::string& text, int line,
                             int column)>& f) {
  const std::string tag = arcaflowTag(value);
  if (tag == "!oneof") {
    for (const auto& [_, option] : value["one_of"].items()) forEachExpression(option, f);
    return;
  }
  if (!tag.empty()) {
    f(tag, value["expr"].get<std::string>(), value["line"].get<int>(), value["column"].get<int>());
    return;
  }
  if (value.is_object() || value.is_array()) {
    for (const auto& item : value) forEachExpression(item, f);
  }
}

// The steps the expressions of `value` wait for ($.steps.NAME...), added to `out`; a step
// the workflow does not have is a problem. A `!soft-optional` value waits for none
// (workflow/executor.go: an OptionalDependency does not hold its node back).
void stepsRead(const Json& value, const std::set<std::string>& steps, const std::string& file,
               const std::string& subject, std::set<std::string>& out,
               std::vector<ModelProblem>& problems) {
  forEachExpression(value, [&](const std::string& tag, const std::string& text, int line,
                               int column) {
    auto expr = arcaflow::parseExpression(text);
    if (!expr) return;  // reported when read
    for (const auto& path : expr->dependencies()) {
      if (path.size() < 3 || path[1] != "steps" || !path[2].is_string()) continue;
      const std::string name = path[2].get<std::string>();
      if (!steps.contains(name)) {
        problems.push_back({{file, line, column},
                            subject,
                            "'" + excerpt(text) + "' reads step '" + excerpt(name) +
                                "', which the workflow does not have"});
        continue;
      }
      if (tag != "!soft-optional") out.insert(name);
    }
  });
}

void readStep(Reader& r, const std::string& id, const yaml::Node& node, ArcaflowStep& step) {
  const std::string subject = "step '" + id + "'";
  step.id = id;
  step.where = r.at(node.mark());
  if (!node.isMap()) {
    r.problem(node, subject, "a step is a mapping");
    return;
  }
  std::string kind = "plugin";
  if (const yaml::Node k = node.member("kind"); k.isDefined()) kind = r.text(k, subject, "kind");
  auto field = [&](const char* name) { return node.member(name); };
  auto read = [&](const char* name, Json& to) {
    if (const yaml::Node n = field(name); n.isDefined()) to = r.value(n, subject);
  };
  read("wait_for", step.wait_for);
  read("enabled", step.enabled);
  if (kind == "plugin") {
    r.onlyKnown(node,
                {"kind", "plugin", "step", "input", "deploy", "wait_for", "enabled", "stop_if",
                 "closure_wait_timeout"},
                subject, "a plugin step");
    const yaml::Node plugin = field("plugin");
    if (!plugin.isMap()) {
      r.problem(plugin.isDefined() ? plugin : node, subject,
                "needs 'plugin' with 'src' and 'deployment_type' (image or python)");
    } else {
      r.onlyKnown(plugin, {"src", "deployment_type"}, subject, "'plugin'");
      if (const yaml::Node src = plugin.member("src"); src.isDefined())
        step.src = r.text(src, subject, "plugin.src");
      if (step.src.empty()) r.problem(plugin, subject, "'plugin.src' is missing or empty");
      if (const yaml::Node type = plugin.member("deployment_type"); type.isDefined()) {
        step.deployment_type = r.text(type, subject, "plugin.deployment_type");
        if (!step.deployment_type.empty() && step.deployment_type != "image" &&
            step.deployment_type != "python")
          r.problem(type, subject,
                    "plugin.deployment_type '" + step.deployment_type +
                        "' is not one of image, python");
      } else {
        r.problem(plugin, subject, "'plugin.deployment_type' is missing (image or python)");
      }
    }
    if (const yaml::Node s = field("step"); s.isDefined()) step.step = r.text(s, subject, "step");
    read("input", step.input);
    read("deploy", step.deploy);
    read("stop_if", step.stop_if);
    read("closure_wait_timeout", step.closure_wait_timeout);
    if (const yaml::Node n = field("closure_wait_timeout"); n.isDefined())
      step.at["closure_wait_timeout"] = r.at(n.mark());
    // Each key inside `deploy` where its key is written.
    std::function<void(const yaml::Node&, const std::string&)> keys =
        [&](const yaml::Node& n, const std::string& path) {
          if (!n.isMap()) return;
          for (const auto& kv : n.pairs()) {
            if (!kv.key.isScalar()) continue;
            step.at[path + "." + kv.key.text()] = r.at(kv.key.mark());
            keys(kv.value, path + "." + kv.key.text());
          }
        };
    if (const yaml::Node n = field("deploy"); n.isDefined()) {
      step.at["deploy"] = r.at(n.mark());
      keys(n, "deploy");
    }
    if (!field("input").isDefined()) r.problem(node, subject, "'input' is missing");
  } else if (kind == "foreach") {
    step.kind = ArcaflowStep::Kind::kForeach;
    r.onlyKnown(node, {"kind", "items", "workflow", "parallelism", "wait_for", "enabled"},
                subject, "a foreach step");
    if (const yaml::Node w = field("workflow"); w.isDefined())
      step.workflow = r.text(w, subject, "workflow");
    if (step.workflow.empty()) r.problem(node, subject, "'workflow' (a sub-workflow file) is missing");
    read("items", step.items);
    if (!field("items").isDefined()) r.problem(node, subject, "'items' is missing");
    read("parallelism", step.parallelism);
  } else {
    r.problem(field("kind"), subject, "kind '" + kind + "' is not one of plugin, foreach");
  }
}

// The cycle through `from`, if the steps' dependencies have one: "a -> b -> a".
std::string findCycle(const ArcaflowWorkflow& wf) {
  std::map<std::string, int> state;  // 1: on the path, 2: done
  std::vector<std::string> path;
  std::function<std::string(const std::string&)> visit = [&](const std::string& id) {
    state[id] = 1;
    path.push_back(id);
    if (const ArcaflowStep* s = wf.step(id)) {
      for (const auto& d : s->depends_on) {
        if (state[d] == 1) {
          std::string text;
          auto it = std::find(path.begin(), path.end(), d);
          for (; it != path.end(); ++it) text += *it + " -> ";
          return text + d;
        }
        if (state[d] == 0) {
          if (auto c = visit(d); !c.empty()) return c;
        }
      }
    }
    path.pop_back();
    state[id] = 2;
    return std::string();
  };
  for (const auto& s : wf.steps) {
    if (state[s.id] == 0) {
      if (auto c = visit(s.id); !c.empty()) return c;
    }
  }
  return {};
}

}  // namespace

std::string arcaflowTag(const Json& value) {
  if (!value.is_object()) return {};
  auto it = value.find(kArcaflowTagKey);
  return it != value.end() && it->is_string() ? it->get<std::string>() : std::string();
}

const ArcaflowStep* ArcaflowWorkflow::step(std::string_view id) const {
  for (const auto& s : steps) {
    if (s.id == id) return &s;
  }
  return nullptr;
}

bool looksLikeArcaflow(std::string_view text) {
  // Argo's files name their apiVersion (or kind) first: no need to read them whole here.
  if (yaml::firstMappingHasKey(text, {"apiVersion", "kind"})) return false;
  yaml::Tree tree;
  const yaml::Tree::Parsed parsed = tree.parse(text);
  // Unreadable YAML (a syntax error, nesting past the limit) that starts as an Arcaflow
  // workflow does is one: its reader names the problem, with the engine's exit status.
  if (parsed.error) return yaml::firstMappingHasKey(text, {"version"});
  if (parsed.documents.empty()) return false;
  const yaml::Node doc = parsed.documents.front().root;
  return doc.isMap() && doc.member("version").isDefined() &&
         !doc.member("apiVersion").isDefined() && !doc.member("kind").isDefined();
}

namespace {

// The one document of `text`, or a problem (syntax, a refused document, more than one).
std::optional<yaml::Node> oneDocument(yaml::Tree& tree, std::string_view text,
                                      const std::string& file, const char* what,
                                      std::vector<ModelProblem>& problems) {
  auto at = [&](const yaml::Mark& m) {
    return m.isNull() ? SourceRef{file, 0, 0} : SourceRef{file, m.line + 1, m.column + 1};
  };
  yaml::Tree::Parsed parsed = tree.parse(text);
  if (parsed.error) {
    problems.push_back({at(parsed.error->mark), "",
                        (parsed.error->syntax ? "not YAML: " : "") + parsed.error->message});
    return std::nullopt;
  }
  if (parsed.documents.empty()) return yaml::Node();
  if (parsed.documents.size() > 1) {
    problems.push_back({at(parsed.documents[1].root.mark()), "",
                        std::string(what) + " is one YAML document; this is the second"});
    return std::nullopt;
  }
  if (const auto& refused = parsed.documents.front().refused) {
    problems.push_back({at(refused->mark), "", refused->message});
    return std::nullopt;
  }
  return parsed.documents.front().root;
}

void readArcaflowDocument(const yaml::Node& doc, const std::string& file_label,
                          ArcaflowLoad& load) {
  Reader r(file_label, load.problems);
  ArcaflowWorkflow wf;
  wf.file = file_label;
  r.onlyKnown(doc, {"version", "input", "steps", "outputs", "output"}, "", "a workflow");
  if (const yaml::Node v = doc.member("version"); v.isDefined()) {
    wf.version = r.text(v, "", "version");
    if (!wf.version.empty() && wf.version != kVersion)
      r.problem(v, "", "version '" + wf.version + "' is not supported (only " +
                           std::string(kVersion) + ")");
  } else {
    r.problem(doc, "", "'version' is missing (v0.2.0)");
  }
  if (const yaml::Node in = doc.member("input"); in.isDefined()) {
    wf.input = r.value(in, "input");
    const yaml::Node root = in.member("root");
    if (!in.isMap() || !root.isDefined() || !in.member("objects").isDefined())
      r.problem(in, "input", "the input is a scope: 'root' (an object's id) and 'objects'");
    else if (!in.member("objects").member(root.scalar()).isDefined())
      r.problem(root, "input", "root '" + root.text() + "' is not one of its objects");
  } else {
    r.problem(doc, "", "'input' is missing (a scope: root and objects)");
  }
  const yaml::Node steps = doc.member("steps");
  if (!steps.isMap() || steps.size() == 0) {
    r.problem(steps.isDefined() ? steps : doc, "", "'steps' is missing or empty (a mapping of step id to step)");
  } else {
    static const std::regex kId("^[$@a-zA-Z0-9-_]+$");  // workflow/model.go
    for (const auto& kv : steps.pairs()) {
      ArcaflowStep step;
      const std::string id = kv.key.text();
      if (!std::regex_match(id, kId))
        r.problem(kv.key, "step '" + excerpt(id) + "'", "a step id is letters, digits, $ @ - _");
      readStep(r, id, kv.value, step);
      wf.steps.push_back(std::move(step));
    }
  }
  const yaml::Node outputs = doc.member("outputs");
  const yaml::Node output = doc.member("output");
  if (outputs.isDefined() && output.isDefined())
    r.problem(output, "", "'output' (deprecated) and 'outputs' exclude each other");
  if (outputs.isDefined()) {
    if (!outputs.isMap() || outputs.size() == 0) {
      r.problem(outputs, "", "'outputs' is a mapping of output id to value");
    } else {
      for (const auto& kv : outputs.pairs())
        wf.outputs.emplace_back(kv.key.text(), r.value(kv.value, "output '" + kv.key.text() + "'"));
    }
  } else if (output.isDefined()) {
    // workflow/executor.go: the deprecated single output is the output "success".
    wf.deprecated_output = true;
    wf.outputs.emplace_back("success", r.value(output, "output"));
  } else {
    r.problem(doc, "", "'outputs' is missing");
  }

  // Dependencies: the steps every expression reads, and wait_for.
  std::set<std::string> ids;
  for (const auto& s : wf.steps) ids.insert(s.id);
  for (auto& s : wf.steps) {
    std::set<std::string> deps;
    const std::string subject = "step '" + s.id + "'";
    for (const Json* v : {&s.input, &s.deploy, &s.wait_for, &s.enabled, &s.closure_wait_timeout,
                          &s.items, &s.parallelism})
      stepsRead(*v, ids, file_label, subject, deps, load.problems);
    // stop_if is no dependency: the step runs while it waits to resolve, and is cancelled
    // when it resolves true (provider.go provideCancelledInput). Its paths are checked.
    std::set<std::string> stop_deps;
    stepsRead(s.stop_if, ids, file_label, subject, stop_deps, load.problems);
    if (deps.contains(s.id))
      load.problems.push_back({s.where, subject, "reads its own outputs"});
    deps.erase(s.id);
    s.depends_on.assign(deps.begin(), deps.end());
  }
  for (const auto& [id, value] : wf.outputs) {
    std::set<std::string> deps;
    stepsRead(value, ids, file_label, "output '" + id + "'", deps, load.problems);
    wf.outputs_depend_on.emplace_back(deps.begin(), deps.end());
  }
  if (const std::string cycle = findCycle(wf); !cycle.empty()) {
    const ArcaflowStep* first = wf.step(cycle.substr(0, cycle.find(' ')));
    load.problems.push_back({first->where, "", "the steps depend on each other in a cycle: " + cycle});
  }
  load.workflow = std::move(wf);
}

}  // namespace

ArcaflowLoad readArcaflowWorkflow(std::string_view text, const std::string& file_label) {
  ArcaflowLoad load;
  yaml::Tree tree;
  const std::optional<yaml::Node> read =
      oneDocument(tree, text, file_label, "an Arcaflow workflow", load.problems);
  if (!read) return load;
  const yaml::Node doc = *read;
  if (!doc.isMap()) {
    load.problems.push_back({{file_label, 1, 1}, "", "an Arcaflow workflow is a YAML mapping"});
    return load;
  }
  try {
    readArcaflowDocument(doc, file_label, load);
  } catch (const yaml::TreeLimit& limit) {
    load.workflow.reset();
    load.problems.push_back({{file_label, limit.mark.line + 1, limit.mark.column + 1}, "",
                             limit.message});
  }
  return load;
}

namespace {

ArcaflowLoad loadWorkflowFile(const std::filesystem::path& path, int depth) {
  auto text = readTextFile(path, "workflow");
  if (!text) {
    ArcaflowLoad load;
    load.problems.push_back({SourceRef{}, "", text.error().message()});  // names the file
    return load;
  }
  ArcaflowLoad load = readArcaflowWorkflow(*text, path.string());
  if (!load.workflow) return load;
  // internal/step/foreach/provider.go LoadSchema: the sub-workflow is read (from the
  // context's files) and prepared when the parent is, so its problems stop the parent.
  for (auto& step : load.workflow->steps) {
    if (step.kind != ArcaflowStep::Kind::kForeach || step.workflow.empty()) continue;
    if (depth >= 16) {
      load.problems.push_back({step.where, "step '" + step.id + "'",
                               "sub-workflows nest deeper than 16 levels (one names itself?)"});
      continue;
    }
    ArcaflowLoad sub = loadWorkflowFile(path.parent_path() / step.workflow, depth + 1);
    for (auto& p : sub.problems) {
      if (p.subject.empty()) p.subject = "sub-workflow of step '" + step.id + "'";
      load.problems.push_back(std::move(p));
    }
    if (sub.workflow) {
      if (std::none_of(sub.workflow->outputs.begin(), sub.workflow->outputs.end(),
                       [](const auto& o) { return o.first == "success"; }))
        load.problems.push_back({step.where, "step '" + step.id + "'",
                                 "the sub-workflow " + step.workflow +
                                     " has no output 'success' (a foreach needs one)"});
      step.sub = std::make_shared<const ArcaflowWorkflow>(std::move(*sub.workflow));
    }
  }
  return load;
}

}  // namespace

ArcaflowLoad loadArcaflowWorkflow(const std::filesystem::path& path) {
  // The run is named after the file (its progress lines, its report): a name that would
  // forge a line is refused before the file is read.
  if (const std::string rule = lineNameRule(path.stem().string()); !rule.empty()) {
    ArcaflowLoad load;
    load.problems.push_back(
        {SourceRef{}, "", excerpt(path.string()) + ": the workflow's name (its file's) " + rule});
    return load;
  }
  return loadWorkflowFile(path, 0);
}

Expected<Json> readArcaflowInput(const std::filesystem::path& file) {
  auto text = readTextFile(file, "input file");
  if (!text) return text.error();
  std::vector<ModelProblem> problems;
  yaml::Tree tree;
  const std::optional<yaml::Node> doc =
      oneDocument(tree, *text, file.string(), "an input file", problems);
  if (!doc) return Error(problems.front().oneLine());
  Reader r(file.string(), problems);
  Json input;
  try {
    input = doc->isDefined() && !doc->isNull() ? r.value(*doc, "input") : Json::object();
  } catch (const yaml::TreeLimit& limit) {
    return Error(file.string() + ":" + std::to_string(limit.mark.line + 1) + ":" +
                 std::to_string(limit.mark.column + 1) + ": " + limit.message);
  }
  if (!problems.empty()) return Error(problems.front().oneLine());
  return input;
}

namespace {

// A ref's namespace that names a foreach step's sub-workflow input
// ("$.steps.<step>.execute.inputs.items": the engine's BuildNamespaces and
// addInputNamespaces, workflow/executor.go, give each stage input that is a scope, or a
// list of one, the namespace of its objects) resolved: the ref and the sub-workflow's
// objects renamed "<namespace>/<id>" and those objects added to the scope, so that the one
// converter checks them. Other namespaces (a plugin's schema) stay as written: unchecked.
void resolveForeachNamespaces(Json& node, const ArcaflowWorkflow& wf, Json& added,
                              std::map<std::string, Json>& loaded, int depth = 0) {
  if (depth > 64) return;
  if (node.is_array()) {
    for (auto& item : node) resolveForeachNamespaces(item, wf, added, loaded, depth + 1);
    return;
  }
  if (!node.is_object()) return;
  for (auto& [key, value] : node.items()) resolveForeachNamespaces(value, wf, added, loaded, depth + 1);
  static const std::regex kForeach(R"(^\$\.steps\.([^.]+)\.execute\.inputs\.items$)");
  const auto ns = node.find("namespace");
  const auto id = node.find("id");
  std::smatch m;
  if (node.value("type_id", "") != "ref" || ns == node.end() || !ns->is_string() ||
      id == node.end() || !id->is_string())
    return;
  const std::string name = ns->get<std::string>();
  if (!std::regex_match(name, m, kForeach)) return;
  const ArcaflowStep* step = wf.step(m[1].str());
  if (step == nullptr || step->kind != ArcaflowStep::Kind::kForeach) return;
  if (!loaded.contains(name)) {
    Json sub_objects = Json::object();
    const ArcaflowLoad sub = loadArcaflowWorkflow(wf.file.parent_path() / step->workflow);
    if (sub.workflow && sub.workflow->input.contains("objects") &&
        sub.workflow->input["objects"].is_object()) {
      sub_objects = sub.workflow->input["objects"];
      // Refs inside the sub-workflow's objects name its own objects.
      std::function<void(Json&, int)> rename = [&](Json& n, int d) {
        if (d > 64 || !(n.is_object() || n.is_array())) return;
        for (auto& v : n) rename(v, d + 1);
        if (n.is_object() && n.value("type_id", "") == "ref" && !n.contains("namespace") &&
            n.contains("id") && n["id"].is_string())
          n["id"] = name + "/" + n["id"].get<std::string>();
      };
      for (auto& [oid, object] : sub_objects.items()) {
        rename(object, 0);
        added[name + "/" + oid] = object;
      }
    }
    loaded[name] = sub_objects;
  }
  if (!loaded[name].contains(id->get<std::string>())) return;
  node["id"] = name + "/" + id->get<std::string>();
  node.erase("namespace");
}

}  // namespace

std::vector<std::string> checkArcaflowInput(const ArcaflowWorkflow& wf, const Json& input) {
  Json scope = wf.input;
  if (scope.is_object() && scope.contains("objects") && scope["objects"].is_object()) {
    Json added = Json::object();
    std::map<std::string, Json> loaded;
    resolveForeachNamespaces(scope["objects"], wf, added, loaded);
    scope["objects"].update(added);
  }
  const Json schema = host::arcaflowSchema(host::arcaflowScopeType(scope), scope);
  return checkSchema(input, schema, "input");
}

ArcaflowPluginName arcaflowImagePlugin(std::string_view src) {
  std::string_view image = src.substr(0, src.find('@'));  // no digest
  const std::size_t slash = image.rfind('/');
  std::string_view base = slash == std::string_view::npos ? image : image.substr(slash + 1);
  std::string_view tag;
  if (const std::size_t colon = base.find(':'); colon != std::string_view::npos) {
    tag = base.substr(colon + 1);
    base = base.substr(0, colon);
  }
  ArcaflowPluginName out;
  for (char c : base) {
    const bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
    out.name += ok ? static_cast<char>(std::tolower(static_cast<unsigned char>(c))) : '-';
  }
  while (!out.name.empty() && !std::isalnum(static_cast<unsigned char>(out.name.front())))
    out.name.erase(out.name.begin());
  if (out.name.empty()) out.name = "image";
  if (tag.starts_with('v')) tag.remove_prefix(1);
  if (!tag.empty() && Version::parse(tag)) out.version = std::string(tag);
  return out;
}

Json typedArcaflowInput(const ArcaflowWorkflow& wf, Json input) {
  const Json& objects = wf.input.contains("objects") ? wf.input["objects"] : Json::object();
  // `type` (an Arcaflow type) applied to `value`: the SDK's Unserialize then Serialize.
  std::function<void(const Json&, Json&, int)> apply = [&](const Json& type, Json& value,
                                                          int depth) {
    if (depth > 64 || !type.is_object()) return;
    const std::string id = type.value("type_id", "");
    if (id == "ref" || id == "object") {
      // An object's properties: inline (type_id object with properties) or its scope's.
      const Json* object = &type;
      if (!type.contains("properties")) {
        const Json name = type.value("id", Json());
        if (!name.is_string() || !objects.contains(name.get<std::string>())) return;
        object = &objects[name.get<std::string>()];
      }
      if (!value.is_object() || !object->contains("properties") ||
          !(*object)["properties"].is_object())
        return;
      for (const auto& [name, property] : (*object)["properties"].items()) {
        if (!property.is_object()) continue;
        if (!value.contains(name)) {
          if (auto d = property.find("default"); d != property.end()) {
            Json parsed = d->is_string() ? Json::parse(d->get<std::string>(), nullptr, false) : *d;
            value[name] = parsed.is_discarded() ? *d : parsed;
          } else {
            continue;
          }
        }
        apply(property.value("type", Json::object()), value[name], depth + 1);
      }
    } else if (id == "list" && value.is_array()) {
      for (auto& item : value) apply(type.value("items", Json::object()), item, depth + 1);
    } else if (id == "map" && value.is_object()) {
      for (auto& [key, item] : value.items()) {
        (void)key;
        apply(type.value("values", Json::object()), item, depth + 1);
      }
    } else if ((id == "one_of_string" || id == "one_of_int") && value.is_object() &&
               type.contains("types") && type["types"].is_object()) {
      // The branch the discriminator chooses (its key as text: the types' keys are).
      const std::string field = type.value("discriminator_field_name", "_type");
      if (auto k = value.find(field); k != value.end()) {
        const std::string key = k->is_string() ? k->get<std::string>() : k->dump();
        if (auto branch = type["types"].find(key); branch != type["types"].end())
          apply(*branch, value, depth + 1);
      }
    } else if (id == "float") {
      // schema/float.go floatInputMapper: integers and numeric text are floats.
      if (value.is_number_integer()) {
        value = value.get<double>();
      } else if (value.is_string()) {
        const std::string text = value.get<std::string>();
        char* end = nullptr;
        const double d = std::strtod(text.c_str(), &end);
        if (!text.empty() && end == text.c_str() + text.size()) value = d;
      }
    } else if (id == "integer" && value.is_string()) {
      // schema/int.go intInputMapper: integer text is an integer.
      const std::string text = value.get<std::string>();
      std::int64_t n = 0;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
      if (!text.empty() && ec == std::errc() && end == text.data() + text.size()) value = n;
    } else if (id == "bool" && value.is_number_integer()) {
      // schema/bool.go: 1 and 0 (the check allows no other integer).
      value = value.get<std::int64_t>() != 0;
    } else if (id == "bool" && value.is_string()) {
      // schema/bool.go boolInputMapper: its words for true and false.
      static const std::set<std::string> yes = {"true",   "yes",     "y", "on",
                                                "enable", "enabled", "1"};
      static const std::set<std::string> no = {"false",   "no",       "n", "off",
                                               "disable", "disabled", "0"};
      std::string text = value.get<std::string>();
      for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (yes.contains(text)) value = true;
      if (no.contains(text)) value = false;
    }
  };
  Json root = {{"type_id", "ref"}, {"id", wf.input.value("root", Json())}};
  apply(root, input, 0);
  return input;
}

namespace {

// The steps of `wf` as the tasks of `dag` and their templates in `model`, each step's
// template named `prefix` + its id (foreach steps add their own templates).
void addSteps(const ArcaflowWorkflow& wf, const std::string& prefix, Template& dag,
              WorkflowModel& model) {
  for (const auto& s : wf.steps) {
    TemplateCall task;
    task.name = s.id;
    task.template_name = prefix + s.id;
    task.where = s.where;
    // A step waits until each step it reads has ended, whatever its outcome: which output
    // a step gave (or whether it gave one) is for the values to tell (arcaflow_values.h),
    // as the engine's DAG resolves an output node or marks it unresolvable.
    for (const auto& d : s.depends_on) {
      task.depends += (task.depends.empty() ? "" : " && ") +
                      ("(" + d + ".Succeeded || " + d + ".Failed || " + d + ".Errored || " + d +
                       ".Skipped || " + d + ".Omitted)");
      task.depends_on.push_back(d);
    }
    Template t;
    t.name = prefix + s.id;
    t.where = s.where;
    t.original = {{"name", s.id}};
    if (s.kind == ArcaflowStep::Kind::kPlugin) {
      t.kind = Template::Kind::kPlugin;
      t.plugin.key = s.src;
      if (s.deployment_type == "image") {
        const ArcaflowPluginName plugin = arcaflowImagePlugin(s.src);
        t.plugin.key = plugin.name;
        t.plugin.version = plugin.version;
      }
      t.plugin.rpc = s.step.empty() ? "template.execute" : "arcaflow." + s.step;
      t.plugin.args = s.input.is_null() ? Json::object() : s.input;
      t.plugin.deployer = "atp";  // the artifact (image or module) comes from the registry
    } else {
      // internal/step/foreach/provider.go: the items run the sub-workflow, at most
      // `parallelism` at once (default 1), each item its input.
      t.kind = Template::Kind::kDag;
      t.fail_fast = false;  // every item runs (executeSubWorkflows waits for them all)
      t.parallelism = s.parallelism.is_number_integer() && s.parallelism.get<long long>() > 0
                          ? static_cast<int>(std::min<long long>(s.parallelism.get<long long>(), 1 << 20))
                          : 1;
      ParameterDecl items;
      items.name = "items";
      items.default_value = Json("[]");  // the value language's decision gives the list
      items.where = s.where;
      t.inputs.push_back(std::move(items));
      Template sub;
      sub.name = t.name + ":workflow";
      sub.kind = Template::Kind::kDag;
      sub.fail_fast = false;
      sub.where = s.sub ? SourceRef{s.sub->file.string(), 1, 1} : s.where;
      ParameterDecl input;
      input.name = "input";
      input.where = sub.where;
      sub.inputs.push_back(std::move(input));
      TemplateCall loop;
      loop.name = "items";
      loop.template_name = sub.name;
      loop.where = s.where;
      loop.arguments.emplace_back("input", Json("{{item}}"));
      Loop over;
      over.kind = Loop::Kind::kParam;
      over.param = "{{inputs.parameters.items}}";
      over.where = s.where;
      loop.loop = std::move(over);
      t.tasks.push_back(std::move(loop));
      if (s.sub) addSteps(*s.sub, t.name + "/", sub, model);
      model.templates.push_back(std::move(sub));
    }
    dag.tasks.push_back(std::move(task));
    model.templates.push_back(std::move(t));
  }
}

}  // namespace

std::string arcaflowMainTemplate(const ArcaflowWorkflow& wf) {
  std::string name = "main";
  while (wf.step(name) != nullptr) name += '-';
  return name;
}

WorkflowModel arcaflowModel(const ArcaflowWorkflow& wf) {
  WorkflowModel model;
  model.file = wf.file;
  model.name = wf.file.stem().string();
  model.front_end = "arcaflow";
  model.typed_parameters = true;
  Template main;
  main.name = arcaflowMainTemplate(wf);
  main.kind = Template::Kind::kDag;
  main.where = {wf.file.string(), 1, 1};
  main.fail_fast = false;  // the engine runs every step it can after a failure
  model.templates.push_back(Template{});
  addSteps(wf, "", main, model);
  for (const auto& [id, value] : wf.outputs) {
    OutputParameterDecl out;
    out.name = id;
    out.from = OutputParameterDecl::From::kValue;
    out.source = value.dump();
    out.global_name = id;
    out.where = main.where;
    main.outputs.push_back(std::move(out));
  }
  model.entrypoint = main.name;
  model.templates.front() = std::move(main);
  return model;
}

}  // namespace plugboard::core
