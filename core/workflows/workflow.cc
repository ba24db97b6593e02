// Reading a TOML workflow file: toml++ parses it a [[steps]] table at a time where the
// pieces read as the whole file would, else whole; the Parser makes the steps and tells
// every problem with its file, line and step (docs/decisions.md, "Workflow files").
#include "core/workflows/workflow.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <set>
#include <unordered_map>

#include <toml++/toml.h>

#include "core/base/read_file.h"
#include "core/base/text.h"
#include "core/base/toml_json.h"
#include "core/manifests/manifest.h"
#include "core/workflows/substitution.h"

namespace plugboard::core {
namespace {

// Where each line reading `[[steps]]` (spaces and a comment allowed) begins.
std::vector<std::size_t> stepHeaders(std::string_view text) {
  std::vector<std::size_t> out;
  auto blanks = [&](std::size_t i) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    return i;
  };
  auto word = [&](std::size_t i, std::string_view w) {
    return text.substr(i, w.size()) == w ? i + w.size() : std::string_view::npos;
  };
  for (std::size_t line = 0; line < text.size();) {
    std::size_t i = word(blanks(line), "[[");
    if (i != std::string_view::npos) i = word(blanks(i), "steps");
    if (i != std::string_view::npos) i = word(blanks(i), "]]");
    if (i != std::string_view::npos) {
      i = blanks(i);
      if (i == text.size() || text[i] == '\n' || text[i] == '\r' || text[i] == '#') out.push_back(line);
    }
    const std::size_t end = text.find('\n', line);
    if (end == std::string_view::npos) break;
    line = end + 1;
  }
  return out;
}

bool isValidStepId(std::string_view id) {
  if (id.empty() || id.size() > 64) return false;
  for (char c : id) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
          c == '-')) {
      return false;
    }
  }
  return true;
}

class Parser {
 public:
  explicit Parser(std::string file) : file_(std::move(file)) {}

  // The whole file as one TOML document. `owned`, when set, holds `text` and is freed
  // once the TOML is parsed.
  LoadedWorkflow parse(std::string_view text, std::string* owned = nullptr) {
    toml::table root;
    try {
      root = toml::parse(text, file_);
      if (owned != nullptr) std::string().swap(*owned);
    } catch (const toml::parse_error& e) {
      problem(posOf(e.source()), "", "TOML syntax error: " + std::string(e.description()));
      LoadedWorkflow result;
      result.problems = std::move(problems_);
      return result;
    }
    Workflow wf;
    wf.file = file_;
    std::set<std::string> keys;
    for (auto&& [key, node] : root) {
      keys.insert(std::string(key.str()));
      topLevel(key, node, wf);
    }
    return finish(std::move(wf), keys);
  }

  // The file read a `[[steps]]` table at a time (`heads`: where each such line begins),
  // each piece's TOML freed before the next is parsed: a large workflow's TOML tree (~1.5
  // KB a step) is never whole in memory. The same workflow and problems as parse(), or
  // nullopt where the pieces cannot tell that they read as the whole file would: a piece
  // that is not TOML alone (the file's syntax error, or a `[[steps]]` line inside a
  // multi-line string or array), a piece with more or less than its one step, or a
  // top-level key in two pieces (a table continued after the steps).
  std::optional<LoadedWorkflow> parseInPieces(std::string_view text,
                                              const std::vector<std::size_t>& heads) {
    Workflow wf;
    wf.file = file_;
    // Exactly one step a piece: the steps never move (index_ views their ids).
    wf.steps.reserve(heads.size());
    index_.reserve(heads.size());
    std::set<std::string> keys;
    std::size_t lines = 0;  // before the piece
    for (std::size_t i = 0; i <= heads.size(); ++i) {
      const std::size_t begin = i == 0 ? 0 : heads[i - 1];
      const std::string_view piece =
          text.substr(begin, (i < heads.size() ? heads[i] : text.size()) - begin);
      toml::table root;
      try {
        root = toml::parse(piece, file_);
      } catch (const toml::parse_error&) {
        return std::nullopt;
      }
      if (i > 0) {
        const auto* steps = root.get_as<toml::array>("steps");
        if (steps == nullptr || steps->size() != 1 || !steps->is_array_of_tables()) return std::nullopt;
      } else if (root.contains("steps")) {
        return std::nullopt;
      }
      line_offset_ = static_cast<int>(lines);
      for (auto&& [key, node] : root) {
        const bool added = keys.insert(std::string(key.str())).second;
        if (!added && key.str() != "steps") return std::nullopt;
        topLevel(key, node, wf);
      }
      lines += static_cast<std::size_t>(std::count(piece.begin(), piece.end(), '\n'));
    }
    line_offset_ = 0;
    return finish(std::move(wf), keys);
  }

 private:
  // A top-level key; its problems are told in the order of the keys, as toml++ keeps
  // them (sorted), however the file was read.
  void topLevel(const toml::key& key, toml::node& node, Workflow& wf) {
    const std::string k(key.str());
    key_ = &keyed_[k];
    if (k == "name") {
      wf.name = string(node, "", "name");
      if (const std::string rule = lineNameRule(wf.name); !rule.empty()) {
        problem(posOf(node.source()), "", "name '" + excerpt(wf.name) + "' " + rule);
      }
    } else if (k == "description") {
      wf.description = string(node, "", "description");
    } else if (k == "inputs") {
      parseInputs(node, wf);
    } else if (k == "steps") {
      parseSteps(node, wf);
    } else if (k == "outputs") {
      parseOutputs(node, wf);
    } else {
      problem(posOf(key.source()), "",
              "unknown key '" + k + "' (expected name, description, inputs, steps, outputs)");
    }
    key_ = nullptr;
  }

  // What the whole workflow tells, after its keys (`keys`: those the file has).
  LoadedWorkflow finish(Workflow wf, const std::set<std::string>& keys) {
    for (auto& [key, problems] : keyed_) {
      problems_.insert(problems_.end(), std::make_move_iterator(problems.begin()),
                       std::make_move_iterator(problems.end()));
    }
    keyed_.clear();
    if (wf.name.empty() && !keys.contains("name")) problem({1, 1}, "", "the workflow has no 'name'");
    if (wf.steps.empty() && !keys.contains("steps")) {
      problem({1, 1}, "", "the workflow has no steps; add at least one [[steps]] table");
    }
    checkGraph(wf);
    checkOutputs(wf);
    LoadedWorkflow result;
    result.workflow = std::move(wf);
    result.problems = std::move(problems_);
    return result;
  }

  // A position in the file: the piece being read starts `line_offset_` lines in.
  SourcePos posOf(const toml::source_region& src) const {
    return {static_cast<int>(src.begin.line) + line_offset_, static_cast<int>(src.begin.column)};
  }

  void problem(SourcePos pos, const std::string& step, std::string message) {
    (key_ != nullptr ? *key_ : problems_).push_back({file_, pos, step, std::move(message)});
  }

  std::string string(const toml::node& node, const std::string& step, const std::string& key) {
    if (const auto* s = node.as_string()) return s->get();
    problem(posOf(node.source()), step, "'" + key + "' must be a string");
    return {};
  }

  std::optional<Millis> duration(const toml::node& node, const std::string& step,
                                 const std::string& key) {
    if (const auto* i = node.as_integer()) {
      if (i->get() >= 0) {
        auto d = durationFromSeconds(i->get());
        if (d) return *d;
        problem(posOf(node.source()), step, "'" + key + "': " + d.error().message());
        return std::nullopt;
      }
    } else if (const auto* s = node.as_string()) {
      auto d = parseDuration(s->get());
      if (d) return *d;
      problem(posOf(node.source()), step, "'" + key + "': " + d.error().message());
      return std::nullopt;
    }
    problem(posOf(node.source()), step,
            "'" + key + "' must be a duration such as \"30s\" or a number of seconds");
    return std::nullopt;
  }

  void parseInputs(const toml::node& node, Workflow& wf) {
    const auto* table = node.as_table();
    if (table == nullptr) {
      problem(posOf(node.source()), "", "'inputs' must be a table of input names");
      return;
    }
    for (auto&& [key, value] : *table) {
      WorkflowInput input;
      input.name = std::string(key.str());
      input.pos = posOf(key.source());
      if (!isValidStepId(input.name)) {
        problem(input.pos, "", "input name '" + input.name + "' must use letters, digits, '_' and '-'");
      }
      if (const auto* t = value.as_table()) {
        for (auto&& [k, v] : *t) {
          const std::string member(k.str());
          if (member == "default") {
            input.default_value = tomlToJson(v);
          } else if (member == "description") {
            input.description = string(v, "", "inputs." + input.name + ".description");
          } else {
            problem(posOf(k.source()), "", "input '" + input.name + "': unknown key '" + member +
                                               "' (expected default, description)");
          }
        }
      } else {
        input.default_value = tomlToJson(value);
      }
      wf.inputs.push_back(std::move(input));
    }
    // toml++ keeps a table's keys sorted; list the inputs in file order.
    std::sort(wf.inputs.begin(), wf.inputs.end(), [](const WorkflowInput& a, const WorkflowInput& b) {
      return std::pair(a.pos.line, a.pos.column) < std::pair(b.pos.line, b.pos.column);
    });
  }

  // [outputs] NAME = "${steps.ID.outputs.parameters.NAME}"
  void parseOutputs(const toml::node& node, Workflow& wf) {
    const auto* table = node.as_table();
    if (table == nullptr) {
      problem(posOf(node.source()), "",
              "'outputs' must be a table: NAME = \"${steps.ID.outputs.parameters.NAME}\"");
      return;
    }
    for (auto&& [key, value] : *table) {
      WorkflowOutput out{std::string(key.str()), {}, posOf(key.source())};
      if (!isValidStepId(out.name)) {
        problem(out.pos, "", "output name '" + out.name + "' must use letters, digits, '_' and '-'");
      }
      out.value = string(value, "", "outputs." + out.name);
      wf.outputs.push_back(std::move(out));
    }
    std::sort(wf.outputs.begin(), wf.outputs.end(),
              [](const WorkflowOutput& a, const WorkflowOutput& b) {
                return std::pair(a.pos.line, a.pos.column) < std::pair(b.pos.line, b.pos.column);
              });
  }

  // Each step's TOML is freed once parsed, so that a large file is not held twice.
  void parseSteps(toml::node& node, Workflow& wf) {
    auto* array = node.as_array();
    if (array == nullptr || !array->is_array_of_tables()) {
      problem(posOf(node.source()), "", "'steps' must be an array of tables: write each step as [[steps]]");
      return;
    }
    // Room for them all (parseInPieces() made it for every piece's step): index_ views the
    // steps' ids, so the steps must never move.
    if (wf.steps.capacity() < wf.steps.size() + array->size()) {
      wf.steps.reserve(wf.steps.size() + array->size());
      index_.reserve(wf.steps.size() + array->size());
    }
    for (auto&& element : *array) {
      const auto& table = *element.as_table();
      WorkflowStep step;
      step.pos = posOf(table.source());
      if (auto id = table["id"]; id) {
        step.id = string(*id.node(), "", "id");
        if (!step.id.empty() && !isValidStepId(step.id)) {
          problem(posOf(id.node()->source()), excerpt(step.id),
                  step.id.size() > 64 ? "step id must be at most 64 characters long"
                                      : "step id must use letters, digits, '_' and '-'");
        }
      } else {
        problem(step.pos, "", "a step has no 'id'");
      }
      const bool repeated = !step.id.empty() && index_.count(step.id) > 0;
      if (repeated) problem(step.pos, step.id, "another step already has the id '" + step.id + "'");
      parseStep(table, step);
      wf.steps.push_back(std::move(step));
      index_.emplace(wf.steps.back().id, wf.steps.size() - 1);  // the reserve keeps it in place
      element.as_table()->clear();
    }
  }

  void parseStep(const toml::table& table, WorkflowStep& step) {
    const std::string& id = step.id;
    bool has_plugin = false;
    for (auto&& [key, node] : table) {
      const std::string k(key.str());
      const SourcePos pos = posOf(node.source());
      if (k == "id") {
        continue;
      } else if (k == "plugin") {
        has_plugin = true;
        const std::string spec = string(node, id, k);
        const auto at = spec.find('@');
        step.plugin = spec.substr(0, at);
        if (at != std::string::npos) step.version = spec.substr(at + 1);
        if (!spec.empty() && (!isValidPluginName(step.plugin) ||
                              (at != std::string::npos && step.version.empty()))) {
          problem(pos, id, "'plugin' must be NAME or NAME@VERSION, got '" + spec + "'");
        }
      } else if (k == "rpc") {
        step.rpc = string(node, id, k);
      } else if (k == "args") {
        step.args = tomlToJson(node);
      } else if (k == "parameters") {
        parseParameters(node, step);
      } else if (k == "depends") {
        const auto* deps = node.as_array();
        if (deps == nullptr) {
          problem(pos, id, "'depends' must be an array of step ids");
          continue;
        }
        for (auto&& d : *deps) step.depends.push_back(string(d, id, "depends"));
      } else if (k == "timeout") {
        step.timeout = duration(node, id, k);
      } else if (k == "retry") {
        parseRetry(node, step);
      } else if (k == "poll") {
        if (const auto* b = node.as_boolean()) {
          step.poll = b->get();
        } else {
          problem(pos, id, "'poll' must be true or false");
        }
      } else if (k == "deploy") {
        step.deploy_pos = pos;
        if (const auto* s = node.as_string()) {
          step.deployer = s->get();
          if (step.deployer.empty()) problem(pos, id, "'deploy' names no deployer");
        } else if (const auto* t = node.as_table()) {
          Json options = tomlToJson(*t);
          if (auto d = options.find("deployer"); d != options.end() && d->is_string()) {
            step.deployer = d->get<std::string>();
            options.erase("deployer");
            step.deploy_options = std::move(options);
          } else {
            problem(pos, id, "'deploy' as a table needs 'deployer = \"NAME\"'");
          }
        } else {
          problem(pos, id, "'deploy' must be a deployer name or a table { deployer = \"NAME\", options... }");
        }
      } else if (k == "when") {
        step.when = string(node, id, k);
        if (step.when.empty() && node.is_string()) problem(pos, id, "'when' is empty");
      } else if (k == "items") {
        if (!node.is_array() && !node.is_string()) {
          problem(pos, id,
                  "'items' must be a list or a reference to a step's output that holds a JSON "
                  "list: items = [\"a\", \"b\"] or items = \"${steps.ID.outputs.parameters.NAME}\"");
        } else {
          step.items = tomlToJson(node);
        }
      } else if (k == "exit") {
        if (const auto* b = node.as_boolean()) {
          step.exit = b->get();
        } else {
          problem(pos, id, "'exit' must be true or false");
        }
      } else if (k == "description") {
        string(node, id, k);
      } else {
        problem(posOf(key.source()), id,
                "unknown key '" + k +
                    "' (expected id, plugin, rpc, args, parameters, depends, timeout, retry, poll, deploy, "
                    "when, items, exit, description)");
      }
    }
    if (!has_plugin) problem(step.pos, id, "the step has no 'plugin'");
    auto refs = stepReferences(step);
    if (!refs) problem(step.pos, id, refs.error().message());
  }

  // parameters = { value = "1", who = "${inputs.who}" }: Argo's input parameters, whose
  // values are strings (a number or boolean is sent as its text).
  void parseParameters(const toml::node& node, WorkflowStep& step) {
    const auto* t = node.as_table();
    if (t == nullptr) {
      problem(posOf(node.source()), step.id,
              "'parameters' must be a table of strings: parameters = { value = \"1\" }");
      return;
    }
    for (auto&& [key, v] : *t) {
      if (!(v.is_string() || v.is_integer() || v.is_floating_point() || v.is_boolean())) {
        problem(posOf(v.source()), step.id,
                "parameter '" + std::string(key.str()) +
                    "' must be a string, a number or a boolean (Argo's parameters are strings)");
        continue;
      }
      step.parameters[std::string(key.str())] = tomlToJson(v);
    }
  }

  void parseRetry(const toml::node& node, WorkflowStep& step) {
    const auto* t = node.as_table();
    if (t == nullptr) {
      problem(posOf(node.source()), step.id, "'retry' must be a table: retry = { limit = 2, backoff = \"1s\" }");
      return;
    }
    for (auto&& [key, v] : *t) {
      const std::string k(key.str());
      if (k == "limit") {
        const auto* i = v.as_integer();
        if (i == nullptr || i->get() < 0 || i->get() > 1000) {
          problem(posOf(v.source()), step.id, "'retry.limit' must be an integer from 0 to 1000");
        } else {
          step.retry.limit = static_cast<int>(i->get());
        }
      } else if (k == "backoff") {
        if (auto d = duration(v, step.id, "retry.backoff")) step.retry.backoff = *d;
      } else if (k == "factor") {
        auto f = v.value<double>();
        if (!f || !std::isfinite(*f) || *f < 1) {
          problem(posOf(v.source()), step.id, "'retry.factor' must be a number of at least 1");
        } else {
          step.retry.factor = *f;
        }
      } else {
        problem(posOf(key.source()), step.id, "unknown key 'retry." + k + "' (expected limit, backoff, factor)");
      }
    }
  }

  // Costs O(steps + dependencies + references) for any shape of graph.
  void checkGraph(const Workflow& wf) {
    const auto& index = index_;
    std::set<std::string> input_names;
    for (const auto& i : wf.inputs) input_names.insert(i.name);

    // Dependencies by index; unknown ones and self-dependencies are reported and left out.
    std::vector<std::vector<std::size_t>> deps(wf.steps.size());
    for (std::size_t i = 0; i < wf.steps.size(); ++i) {
      const WorkflowStep& s = wf.steps[i];
      for (const auto& d : s.depends) {
        auto it = index.find(d);
        if (it == index.end()) problem(s.pos, s.id, "depends on unknown step '" + d + "'");
        if (d == s.id) problem(s.pos, s.id, "depends on itself");
        if (it != index.end() && d != s.id && wf.steps[it->second].exit != s.exit) {
          problem(s.pos, s.id,
                  s.exit ? "an exit step runs after every other step; it may depend only on exit "
                           "steps, not on '" + d + "'"
                         : "depends on exit step '" + d +
                               "': nothing but another exit step may depend on an exit step");
        }
        if (it != index.end() && d != s.id) deps[i].push_back(it->second);
      }
    }
    checkCycles(wf, deps);

    // References: inputs must exist; a step's output may be used only by its dependents.
    std::vector<std::size_t> seen(wf.steps.size(), 0);  // upstream(): last search that saw it
    std::size_t search = 0;
    for (std::size_t i = 0; i < wf.steps.size(); ++i) {
      const WorkflowStep& s = wf.steps[i];
      auto refs = stepReferences(s);
      if (!refs) continue;  // reported by parseStep
      for (const auto& r : *refs) {
        if (r.kind == Reference::Kind::kItem && s.items.is_null()) {
          problem(s.pos, s.id, r.text + ": the step has no 'items'");
        } else if (r.kind == Reference::Kind::kWorkflowStatus && !s.exit) {
          problem(s.pos, s.id, r.text + ": only an exit step (exit = true) sees the workflow's status");
        }
        if (r.kind == Reference::Kind::kInput && !input_names.count(r.input)) {
          problem(s.pos, s.id, r.text + ": the workflow has no input '" + r.input + "'");
        } else if (r.kind == Reference::Kind::kStepOutput) {
          auto it = index.find(r.step);
          if (it == index.end()) {
            problem(s.pos, s.id, r.text + ": there is no step '" + r.step + "'");
          } else if (!upstream(deps, i, it->second, seen, ++search)) {
            problem(s.pos, s.id, r.text + ": step '" + s.id + "' does not depend on '" + r.step +
                                     "'; add it to depends");
          }
        }
      }
    }
  }

  // Workflow outputs: references to outputs of steps that are not exit steps.
  void checkOutputs(const Workflow& wf) {
    for (const auto& o : wf.outputs) {
      auto refs = findReferences(Json(o.value));
      const std::string subject = "output '" + o.name + "'";
      if (!refs) {
        problem(o.pos, "", subject + ": " + refs.error().message());
        continue;
      }
      if (refs->empty()) {
        problem(o.pos, "", subject + ": must refer to a step's output: ${steps.ID.outputs.parameters.NAME}");
      }
      for (const auto& r : *refs) {
        if (r.kind == Reference::Kind::kItem || r.kind == Reference::Kind::kWorkflowStatus) {
          problem(o.pos, "", subject + ": " + r.text + " is known only within a step");
        } else if (r.kind == Reference::Kind::kInput &&
                   std::none_of(wf.inputs.begin(), wf.inputs.end(),
                                [&](const WorkflowInput& i) { return i.name == r.input; })) {
          problem(o.pos, "", subject + ": " + r.text + ": the workflow has no input '" + r.input + "'");
        } else if (r.kind == Reference::Kind::kStepOutput) {
          auto it = index_.find(r.step);
          if (it == index_.end()) {
            problem(o.pos, "", subject + ": " + r.text + ": there is no step '" + r.step + "'");
          } else if (wf.steps[it->second].exit) {
            problem(o.pos, "", subject + ": " + r.text + ": '" + r.step +
                                   "' is an exit step, which runs after the outputs are set");
          }
        }
      }
    }
  }

  // Depth-first search on an explicit stack (a chain of any length is fine), reporting
  // each cycle once with its path.
  void checkCycles(const Workflow& wf, const std::vector<std::vector<std::size_t>>& deps) {
    enum : char { kNew, kOnPath, kDone };
    std::vector<char> state(wf.steps.size(), kNew);
    std::vector<std::pair<std::size_t, std::size_t>> path;  // step, next dependency
    for (std::size_t root = 0; root < wf.steps.size(); ++root) {
      if (state[root] != kNew) continue;
      state[root] = kOnPath;
      path.emplace_back(root, 0);
      while (!path.empty()) {
        auto& [i, next] = path.back();
        if (next == deps[i].size()) {
          state[i] = kDone;
          path.pop_back();
          continue;
        }
        const std::size_t d = deps[i][next++];
        if (state[d] == kOnPath) {
          std::string cycle;
          auto from =
              std::find_if(path.begin(), path.end(), [&](const auto& p) { return p.first == d; });
          for (auto p = from; p != path.end(); ++p) cycle += wf.steps[p->first].id + " -> ";
          const WorkflowStep& s = wf.steps[i];
          problem(s.pos, s.id, "dependency cycle: " + cycle + wf.steps[d].id);
        } else if (state[d] == kNew) {
          state[d] = kOnPath;
          path.emplace_back(d, 0);  // invalidates i and next
        }
      }
    }
  }

  // Whether `target` is among the dependencies of `from`, directly or through others.
  // `seen` marks the steps this `search` visited.
  static bool upstream(const std::vector<std::vector<std::size_t>>& deps, std::size_t from,
                       std::size_t target, std::vector<std::size_t>& seen, std::size_t search) {
    const auto& direct = deps[from];
    if (std::find(direct.begin(), direct.end(), target) != direct.end()) return true;
    std::vector<std::size_t> todo(direct.begin(), direct.end());
    while (!todo.empty()) {
      const std::size_t i = todo.back();
      todo.pop_back();
      if (i == target) return true;
      if (seen[i] == search) continue;
      seen[i] = search;
      todo.insert(todo.end(), deps[i].begin(), deps[i].end());
    }
    return false;
  }

  std::string file_;
  std::vector<WorkflowProblem> problems_;
  std::map<std::string, std::vector<WorkflowProblem>> keyed_;  // a top-level key's, until finish()
  std::vector<WorkflowProblem>* key_ = nullptr;                // the key being read's
  int line_offset_ = 0;
  std::unordered_map<std::string_view, std::size_t> index_;  // step ids: the first with each
};

}  // namespace

const WorkflowStep* Workflow::step(const std::string& id) const {
  for (const auto& s : steps) {
    if (s.id == id) return &s;
  }
  return nullptr;
}

std::string WorkflowProblem::oneLine() const {
  std::string out = file;
  if (pos.line > 0) out += ":" + std::to_string(pos.line) + ":" + std::to_string(pos.column);
  out += ": ";
  if (!step.empty()) out += "step '" + step + "': ";
  return out + message;
}

Expected<std::vector<Reference>> stepReferences(const WorkflowStep& step) {
  auto refs = findReferences(step.args);
  if (!refs) return Error("args: " + refs.error().message());
  const std::pair<const char*, Json> others[] = {
      {"parameters", step.parameters}, {"when", Json(step.when)}, {"items", step.items}};
  for (const auto& [what, value] : others) {
    auto more = findReferences(value);
    if (!more) return Error(std::string(what) + ": " + more.error().message());
    refs->insert(refs->end(), std::make_move_iterator(more->begin()),
                 std::make_move_iterator(more->end()));
  }
  return refs;
}

namespace {

// `owned`, when set, holds `text` and is freed once read.
LoadedWorkflow read(std::string_view text, const std::string& file_label, WorkflowReading reading,
                    std::string* owned) {
  if (reading == WorkflowReading::kByStep) {
    if (auto pieces = parseWorkflowByStep(text, file_label)) return std::move(*pieces);
  }
  return Parser(file_label).parse(text, owned);
}

}  // namespace

std::optional<LoadedWorkflow> parseWorkflowByStep(std::string_view text,
                                                  const std::string& file_label) {
  const auto heads = stepHeaders(text);
  if (heads.empty()) return std::nullopt;
  return Parser(file_label).parseInPieces(text, heads);
}

LoadedWorkflow parseWorkflow(std::string_view text, const std::string& file_label,
                             WorkflowReading reading) {
  return read(text, file_label, reading, nullptr);
}

LoadedWorkflow loadWorkflow(const std::filesystem::path& file) {
  auto text = readTextFile(file, "workflow file");
  if (!text) {
    // The problem names the file itself.
    std::string why = text.error().message();
    if (const std::string prefix = file.string() + ": "; why.starts_with(prefix)) {
      why.erase(0, prefix.size());
    }
    LoadedWorkflow result;
    result.problems.push_back({file.string(), {}, "", std::move(why)});
    return result;
  }
  return read(*text, file.string(), WorkflowReading::kByStep, &*text);
}

}  // namespace plugboard::core
