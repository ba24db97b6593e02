#include "tools/plugboard/graph.h"

#include <algorithm>
#include <set>
#include <unordered_map>

namespace plugboard::cli {
namespace {

// The deployer and its options: "python mode=embedded".
std::string deployerText(const core::StepPlace& place) {
  if (place.deployer.empty()) return "deployer: ?";
  std::string out = place.deployer;
  for (const auto& [key, value] : place.options.items()) {
    out += " " + key + "=" + (value.is_string() ? value.get<std::string>() : value.dump());
  }
  return out;
}

// A node's text lines: id, plugin, RPC, deployer, and the phase when it ran.
std::vector<std::string> lines(const GraphStep& g) {
  const std::string plugin = g.place.polled ? g.place.plugin + " (polled)" : g.place.plugin;
  std::vector<std::string> out = {g.step->id, plugin, g.step->rpc, deployerText(g.place)};
  if (!g.phase.empty()) out.push_back(g.phase);
  return out;
}

std::string colourOf(const std::string& phase) {
  for (const auto& [name, colour] : phaseColours()) {
    if (name == phase) return colour;
  }
  return "#ffffff";
}

// DOT's quoted string: backslash and quote escaped, line breaks as \n.
std::string dotQuoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    if (c == '\r') continue;
    out += c;
  }
  return out + "\"";
}

// Mermaid's quoted label text: what would end or mark up the label as entity codes.
std::string mermaidText(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '"':
        out += "#quot;";
        break;
      case '#':
        out += "#35;";
        break;
      case '<':
        out += "#lt;";
        break;
      case '>':
        out += "#gt;";
        break;
      case '&':
        out += "#amp;";
        break;
      case '`':
        out += "#96;";
        break;
      case '\n':
      case '\r':
        out += ' ';
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string joined(const std::vector<std::string>& parts, const std::string& sep,
                   std::string (*escape)(const std::string&)) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + escape(parts[i]);
  return out;
}

std::string plain(const std::string& text) { return text; }

// A model's calls drawn from its entry point.
struct ModelGraph {
  struct Node {
    std::vector<std::string> lines;
  };
  struct Edge {
    std::size_t from, to;
    bool dashed = false;
    std::string label;
  };
  std::vector<Node> nodes;
  std::vector<Edge> edges;
};

std::string runsText(const core::Template& t) {
  switch (t.kind) {
    case core::Template::Kind::kPlugin:
      return "plugin " + t.plugin.key;
    case core::Template::Kind::kContainer:
      return "container " + t.container->image;
    case core::Template::Kind::kScript:
      return "script " + t.container->image;
    case core::Template::Kind::kSuspend:
      return t.suspend_for.empty() ? "suspend" : "suspend " + t.suspend_for;
    case core::Template::Kind::kSteps:
      return "steps";
    case core::Template::Kind::kDag:
      return "dag";
  }
  return "";
}

class ModelGraphBuilder {
 public:
  explicit ModelGraphBuilder(const core::WorkflowModel& model) : model_(model) {}

  ModelGraph build() {
    const std::size_t root = add({model_.name, model_.entrypoint}, model_.find(model_.entrypoint));
    if (!model_.on_exit.empty()) {
      const std::size_t exit = add({"onExit", model_.on_exit}, model_.find(model_.on_exit));
      graph_.edges.push_back({root, exit, true, "onExit"});
    }
    return std::move(graph_);
  }

 private:
  // A node for a call of `t` (null: unknown template); its calls drawn when it has any.
  std::size_t add(std::vector<std::string> lines, const core::Template* t) {
    if (t != nullptr) lines[1] = t->name + ": " + runsText(*t);
    const std::size_t me = graph_.nodes.size();
    graph_.nodes.push_back({std::move(lines)});
    if (t == nullptr || on_path_.count(t) != 0) return me;
    on_path_.insert(t);
    if (t->kind == core::Template::Kind::kSteps) {
      std::vector<std::size_t> previous;
      for (const auto& group : t->steps) {
        std::vector<std::size_t> now;
        for (const auto& c : group) now.push_back(call(c, me));
        for (std::size_t p : previous)
          for (std::size_t n : now) graph_.edges.push_back({p, n});
        previous = std::move(now);
      }
    } else if (t->kind == core::Template::Kind::kDag) {
      std::unordered_map<std::string, std::size_t> task;
      for (const auto& c : t->tasks) task[c.name] = call(c, me);
      for (const auto& c : t->tasks) {
        for (const auto& d : c.depends_on) {
          if (auto it = task.find(d); it != task.end())
            graph_.edges.push_back({it->second, task[c.name]});
        }
      }
    }
    on_path_.erase(t);
    return me;
  }
  std::size_t call(const core::TemplateCall& c, std::size_t parent) {
    std::vector<std::string> lines = {c.name, c.template_name};
    if (!c.when.empty()) lines.push_back("when " + c.when);
    switch (c.loop->kind) {
      case core::Loop::Kind::kItems:
        lines.push_back("withItems: " + std::to_string(c.loop->items.size()) + " items");
        break;
      case core::Loop::Kind::kSequence:
        lines.push_back("withSequence");
        break;
      case core::Loop::Kind::kParam:
        lines.push_back("withParam " + c.loop->param);
        break;
      case core::Loop::Kind::kNone:
        break;
    }
    const std::size_t me = add(std::move(lines), model_.find(c.template_name));
    graph_.edges.push_back({parent, me, true});
    if (!c.on_exit.empty()) {
      const std::size_t exit = add({c.name + ".onExit", c.on_exit}, model_.find(c.on_exit));
      graph_.edges.push_back({me, exit, true, "onExit"});
    }
    return me;
  }

  const core::WorkflowModel& model_;
  ModelGraph graph_;
  std::set<const core::Template*> on_path_;
};

}  // namespace

const std::vector<std::pair<std::string, std::string>>& phaseColours() {
  static const std::vector<std::pair<std::string, std::string>> colours = {
      {"Succeeded", "#b7e4c7"}, {"Failed", "#f4a6a6"},  {"Error", "#f6bd60"},
      {"Cancelled", "#ffe699"}, {"Skipped", "#e0e0e0"}, {"Running", "#a9d6f5"},
      {"Pending", "#ffffff"}};
  return colours;
}

std::string toDot(const core::Workflow& workflow, const std::vector<GraphStep>& steps) {
  std::string title = workflow.name;
  if (!workflow.description.empty()) title += "\n" + workflow.description;
  std::string out = "digraph " + dotQuoted(workflow.name) + " {\n";
  out += "  graph [rankdir=LR, labelloc=t, fontname=\"sans-serif\", label=" + dotQuoted(title) +
         "];\n";
  out +=
      "  node [shape=box, style=\"rounded,filled\", fillcolor=\"#ffffff\", "
      "fontname=\"sans-serif\", fontsize=11];\n";
  out += "  edge [color=\"#555555\"];\n";
  for (const auto& g : steps) {
    std::string label;
    for (const auto& line : lines(g)) label += (label.empty() ? "" : "\n") + line;
    out += "  " + dotQuoted(g.step->id) + " [label=" + dotQuoted(label);
    if (!g.phase.empty()) out += ", fillcolor=" + dotQuoted(colourOf(g.phase));
    out += "];\n";
  }
  for (const auto& g : steps) {
    for (const auto& dep : g.step->depends) {
      out += "  " + dotQuoted(dep) + " -> " + dotQuoted(g.step->id) + ";\n";
    }
  }
  return out + "}\n";
}

std::string toMermaid(const core::Workflow& workflow, const std::vector<GraphStep>& steps) {
  // Nodes are named s0, s1, ... in file order: step ids may hold anything.
  std::unordered_map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < steps.size(); ++i) index.emplace(steps[i].step->id, i);
  // The title as a JSON string, which YAML's front matter reads as it is.
  std::string out = "---\ntitle: " + core::Json(workflow.name).dump() + "\n---\nflowchart LR\n";
  for (std::size_t i = 0; i < steps.size(); ++i) {
    out +=
        "  s" + std::to_string(i) + "[\"" + joined(lines(steps[i]), "<br/>", mermaidText) + "\"]\n";
  }
  for (std::size_t i = 0; i < steps.size(); ++i) {
    for (const auto& dep : steps[i].step->depends) {
      if (auto it = index.find(dep); it != index.end()) {
        out += "  s" + std::to_string(it->second) + " --> s" + std::to_string(i) + "\n";
      }
    }
  }
  for (const auto& [phase, colour] : phaseColours()) {
    std::vector<std::string> members;
    for (std::size_t i = 0; i < steps.size(); ++i) {
      if (steps[i].phase == phase) members.push_back("s" + std::to_string(i));
    }
    if (members.empty()) continue;
    out += "  classDef " + phase + " fill:" + colour + ",stroke:#555555\n";
    out += "  class " + joined(members, ",", plain) + " " + phase + "\n";
  }
  return out;
}

std::string toDot(const core::WorkflowModel& model) {
  const ModelGraph g = ModelGraphBuilder(model).build();
  std::string out = "digraph " + dotQuoted(model.name) + " {\n";
  out += "  graph [rankdir=LR, labelloc=t, fontname=\"sans-serif\", label=" +
         dotQuoted(model.name) + "];\n";
  out += "  node [shape=box, style=\"rounded\", fontname=\"sans-serif\", fontsize=11];\n";
  out += "  edge [color=\"#555555\"];\n";
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    std::string label;
    for (const auto& line : g.nodes[i].lines) label += (label.empty() ? "" : "\n") + line;
    out += "  n" + std::to_string(i) + " [label=" + dotQuoted(label) + "];\n";
  }
  for (const auto& e : g.edges) {
    out += "  n" + std::to_string(e.from) + " -> n" + std::to_string(e.to);
    std::string attrs;
    if (e.dashed) attrs += "style=dashed";
    if (!e.label.empty()) attrs += std::string(attrs.empty() ? "" : ", ") + "label=" + dotQuoted(e.label);
    out += (attrs.empty() ? "" : " [" + attrs + "]") + ";\n";
  }
  return out + "}\n";
}

std::string toMermaid(const core::WorkflowModel& model) {
  const ModelGraph g = ModelGraphBuilder(model).build();
  std::string out = "---\ntitle: " + core::Json(model.name).dump() + "\n---\nflowchart LR\n";
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    out += "  n" + std::to_string(i) + "[\"" + joined(g.nodes[i].lines, "<br/>", mermaidText) + "\"]\n";
  }
  for (const auto& e : g.edges) {
    const std::string arrow = e.dashed ? " -.-> " : " --> ";
    out += "  n" + std::to_string(e.from) +
           (e.label.empty() ? arrow : (e.dashed ? " -. " : " -- ") + mermaidText(e.label) +
                                          (e.dashed ? " .-> " : " --> ")) +
           "n" + std::to_string(e.to) + "\n";
  }
  return out;
}

}  // namespace plugboard::cli
