#include "tools/plugboard/node_tree.h"

#include <unistd.h>

#include <algorithm>
#include <unordered_set>
#include "tools/plugboard/progress.h"
#include "tools/plugboard/terminal.h"

namespace plugboard::cli {
namespace {

constexpr auto kTreeRedrawEvery = std::chrono::milliseconds(200);

// Argo's icons (cmd/argo/commands/get.go's nodeStatusIcon, as the CLI prints them).
const char* iconOf(core::NodePhase phase) {
  switch (phase) {
    case core::NodePhase::kSucceeded:
      return "✔";
    case core::NodePhase::kRunning:
      return "●";
    case core::NodePhase::kFailed:
      return "✖";
    case core::NodePhase::kError:
      return "⚠";
    case core::NodePhase::kSkipped:
    case core::NodePhase::kOmitted:
      return "○";
    case core::NodePhase::kPending:
      break;
  }
  return "◷";
}

// A steps group draws no line of its own: its calls hang from the group's parent.
bool isGroup(const core::NodeStatus& n) { return n.type == core::NodeType::kStepGroup; }

std::string durationOf(const core::NodeStatus& n, std::chrono::steady_clock::time_point now) {
  if (!n.started) return "";
  const auto end = n.finished.value_or(now);
  return core::formatElapsed(std::chrono::duration_cast<core::Millis>(end - *n.started));
}

struct Row {
  std::string tree;  // branch drawing, icon and display name
  std::string tmpl, deployer, duration, message;
};

class TreeWriter {
 public:
  TreeWriter(const std::vector<core::NodeStatus>& nodes, std::chrono::steady_clock::time_point now)
      : nodes_(nodes), now_(now) {
    for (std::size_t i = 0; i < nodes.size(); ++i) index_.emplace(nodes[i].id, i);
  }

  std::vector<std::string> lines() {
    if (nodes_.empty()) return {};
    // Each tree: the entry node's, then an exit handler's, which no node has as a child.
    std::unordered_set<std::string> reached;
    for (const auto& n : nodes_) reached.insert(n.children.begin(), n.children.end());
    for (const auto& n : nodes_) {
      if (!reached.contains(n.id) && !drawn_.contains(n.id)) add(n, " ", "");
    }
    std::size_t w_tree = 4, w_tmpl = 8, w_dep = 0, w_dur = 8;
    for (const auto& r : rows_) {
      w_tree = std::max(w_tree, width(r.tree));
      w_tmpl = std::max(w_tmpl, r.tmpl.size());
      w_dep = std::max(w_dep, r.deployer.size());
      w_dur = std::max(w_dur, r.duration.size());
    }
    // The deployer that ran a leaf's plugin, where Argo's `argo get` has the pod's name;
    // no column until one ran.
    if (w_dep > 0) w_dep = std::max<std::size_t>(w_dep, 8);
    const auto deployer = [&](const std::string& text) {
      return w_dep == 0 ? std::string() : pad(text, w_dep) + "  ";
    };
    std::vector<std::string> out;
    out.push_back(pad("STEP", w_tree) + "  " + pad("TEMPLATE", w_tmpl) + "  " +
                  deployer("DEPLOYER") + pad("DURATION", w_dur) + "  MESSAGE");
    for (const auto& r : rows_) {
      std::string line = pad(r.tree, w_tree) + "  " + pad(r.tmpl, w_tmpl) + "  " +
                         deployer(r.deployer) + pad(r.duration, w_dur) + "  " + r.message;
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out.push_back(std::move(line));
    }
    return out;
  }

 private:
  // Display width: the icons and box drawings are one column each, three bytes in UTF-8.
  static std::size_t width(const std::string& s) {
    std::size_t w = 0;
    for (unsigned char c : s) w += (c & 0xC0) != 0x80;
    return w;
  }
  static std::string pad(const std::string& s, std::size_t w) {
    const std::size_t have = width(s);
    return have >= w ? s : s + std::string(w - have, ' ');
  }
  // Whether child `id` of a loop's or a retry's node is one of its items or attempts
  // ("name(0:a)", "name(1)"), not a task that depends on it.
  bool isPart(const core::NodeStatus& n, const std::string& id) const {
    auto it = index_.find(id);
    return it != index_.end() && nodes_[it->second].name.starts_with(n.name + "(");
  }
  bool inDag(const core::NodeStatus& n) const {
    auto it = index_.find(n.boundary_id);
    return it != index_.end() && nodes_[it->second].type == core::NodeType::kDAG;
  }
  std::vector<const core::NodeStatus*> childrenOf(const core::NodeStatus& n) const {
    std::vector<const core::NodeStatus*> out;
    if (n.type == core::NodeType::kDAG) {
      // As `argo get` draws a dag: its tasks in a flat list (Argo's children edges run from
      // a task to the tasks that depend on it); a loop's or a retry's nodes under their own.
      std::unordered_set<std::string> nested;
      for (const auto& m : nodes_) {
        if (m.boundary_id != n.id || m.type == core::NodeType::kDAG) continue;
        if (m.type != core::NodeType::kTaskGroup && m.type != core::NodeType::kRetry) continue;
        for (const auto& id : m.children) {
          if (isPart(m, id)) nested.insert(id);
        }
      }
      for (const auto& m : nodes_) {
        if (m.boundary_id == n.id && m.id != n.id && !nested.contains(m.id)) out.push_back(&m);
      }
      return out;
    }
    if (n.type == core::NodeType::kSteps) {
      // Its groups in order, each folded into its calls (Argo links a group to the calls
      // of the group before it: those edges are drawn here instead).
      for (const auto& g : nodes_) {
        if (g.boundary_id != n.id || !isGroup(g)) continue;
        for (const auto& id : g.children) {
          auto it = index_.find(id);
          if (it != index_.end() && !isGroup(nodes_[it->second])) out.push_back(&nodes_[it->second]);
        }
      }
      return out;
    }
    const bool holds = n.type == core::NodeType::kTaskGroup || n.type == core::NodeType::kRetry;
    for (const auto& id : n.children) {
      auto it = index_.find(id);
      if (it == index_.end()) continue;
      const auto& child = nodes_[it->second];
      // A dag task's edges to the tasks that depend on it: those are drawn under the dag.
      if (inDag(n) && child.boundary_id == n.boundary_id && !(holds && isPart(n, id))) continue;
      if (!isGroup(child)) out.push_back(&child);  // groups are drawn from their steps node
    }
    return out;
  }
  void add(const core::NodeStatus& n, const std::string& branch, const std::string& indent) {
    drawn_.insert(n.id);
    std::string message = n.message;
    if (auto nl = message.find('\n'); nl != std::string::npos) message.resize(nl);
    rows_.push_back({branch + iconOf(n.phase) + " " + n.display_name, n.template_name,
                     n.deployer, durationOf(n, now_), message});
    std::vector<const core::NodeStatus*> children;
    for (const auto* c : childrenOf(n)) {
      if (!drawn_.contains(c->id)) children.push_back(c);
    }
    for (std::size_t i = 0; i < children.size(); ++i) {
      const bool last = i + 1 == children.size();
      add(*children[i], indent + (last ? " └─" : " ├─"), indent + (last ? "   " : " │ "));
    }
  }

  const std::vector<core::NodeStatus>& nodes_;
  std::chrono::steady_clock::time_point now_;
  std::unordered_map<std::string, std::size_t> index_;
  std::unordered_set<std::string> drawn_;
  std::vector<Row> rows_;
};

}  // namespace

NodeTreeDisplay::NodeTreeDisplay(std::string workflow, core::Json parameters, bool live,
                                 std::FILE* out, bool quiet)
    : workflow_(std::move(workflow)),
      parameters_(std::move(parameters)),
      live_(live && !quiet),
      out_(out),
      quiet_(quiet) {}

std::vector<std::string> NodeTreeDisplay::treeLines(const std::vector<core::NodeStatus>& nodes,
                                                    std::chrono::steady_clock::time_point now) {
  return TreeWriter(nodes, now).lines();
}

void NodeTreeDisplay::nodeChanged(const core::NodeStatus& node) {
  if (node.type == core::NodeType::kSuspend && node.phase == core::NodePhase::kRunning &&
      suspended_.emplace(node.id, true).second) {
    printAbove("plugboard: " + node.name + " is suspended: `kill -USR1 " +
               std::to_string(getpid()) + "` resumes it (as argo resume)\n");
  }
  if (quiet_) return;
  if (!live_) {
    // A line when a node reaches a phase it was not in; groups say nothing of their own.
    if (isGroup(node)) return;
    auto [it, added] = logged_.emplace(node.id, node.phase);
    if (!added && it->second == node.phase) return;
    it->second = node.phase;
    if (node.phase == core::NodePhase::kPending) return;
    std::string line = timeOfDay() + " " + node.name + " (" + node.template_name + "): " +
                       std::string(core::nodePhaseName(node.phase));
    if (!node.message.empty()) line += ": " + node.message.substr(0, node.message.find('\n'));
    std::fprintf(out_, "%s\n", line.c_str());
    std::fflush(out_);
    return;
  }
  auto [it, added] = index_.emplace(node.id, nodes_.size());
  if (added) {
    nodes_.push_back(node);
  } else {
    nodes_[it->second] = node;
  }
  dirty_ = true;
  tick();
}

void NodeTreeDisplay::tick() {
  if (quiet_ || !live_ || !dirty_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_draw_ < kTreeRedrawEvery) return;
  redraw(false, nodes_.empty() ? "Pending" : std::string(core::nodePhaseName(nodes_[0].phase)));
}

void NodeTreeDisplay::redraw(bool final, const std::string& status) {
  const auto now = std::chrono::steady_clock::now();
  last_draw_ = now;
  dirty_ = false;
  std::vector<std::string> lines;
  auto field = [&](const std::string& name, const std::string& value) {
    lines.push_back(name + std::string(name.size() < 21 ? 21 - name.size() : 1, ' ') + value);
  };
  field("Name:", workflow_);
  field("Status:", status);
  field("Duration:", core::formatElapsed(
                         std::chrono::duration_cast<core::Millis>(now - started_)));
  if (parameters_.is_object() && !parameters_.empty()) {
    lines.push_back("Parameters:");
    for (const auto& [name, value] : parameters_.items()) {
      const std::string key = "  " + name + ":";
      field(key, value.is_string() ? value.get<std::string>() : value.dump());
    }
  }
  lines.emplace_back();
  for (auto& l : TreeWriter(nodes_, now).lines()) lines.push_back(std::move(l));
  std::size_t first = 0;
  if (!final && lines.size() > kMaxLines) first = lines.size() - kMaxLines;
  drawLive(out_, std::vector<std::string>(lines.begin() + static_cast<std::ptrdiff_t>(first), lines.end()),
           final);
  if (final) endLive();
}

void NodeTreeDisplay::close(const core::RunResult& result) {
  if (quiet_) return;
  std::string status(core::nodePhaseName(result.phase));
  if (result.cancelled) status = "Failed (cancelled)";
  if (live_) {
    nodes_ = result.nodes;
    redraw(true, status);
  } else {
    std::vector<std::string> lines{"", "Name:                " + result.workflow,
                                   "Status:              " + status};
    if (!result.message.empty()) lines.push_back("Message:             " + result.message);
    lines.push_back("Duration:            " + core::formatElapsed(result.duration));
    lines.emplace_back();
    for (auto& l : TreeWriter(result.nodes, std::chrono::steady_clock::now()).lines())
      lines.push_back(std::move(l));
    for (const auto& l : lines) std::fprintf(out_, "%s\n", l.c_str());
  }
  if (live_ && !result.message.empty()) std::fprintf(out_, "Message:             %s\n", result.message.c_str());
  std::fflush(out_);
}

}  // namespace plugboard::cli
