#include "tools/plugboard/graph.h"

#include <algorithm>
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

}  // namespace plugboard::cli
