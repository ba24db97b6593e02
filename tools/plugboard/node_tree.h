// tools/plugboard/node_tree.h: how `plugboard run` shows a model workflow's nodes, as `argo
// submit --watch` and `argo get` show them.
//
// On a terminal: the header (name, status, duration, parameters) and the node tree (a line
// per node: icon, display name, template, the deployer that ran it, duration, message;
// StepGroup and TaskGroup nodes fold into the branches of their children as Argo draws
// them), redrawn in place at most five times a second, the last 60 lines when the tree is
// taller (tools/plugboard/terminal.h draws it). Otherwise: a log line for every change of a
// node's phase. At the end, the final tree either way.
// Called on the engine's thread only.
#ifndef PLUGBOARD_TOOLS_NODE_TREE_H_
#define PLUGBOARD_TOOLS_NODE_TREE_H_

#include <chrono>
#include <cstdio>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/runtime/exports.h"

namespace plugboard::cli {

class NodeTreeDisplay : public core::EngineObserver {
 public:
  static constexpr std::size_t kMaxLines = 60;

  // `workflow` and `parameters` (name -> value) for the header; `live` selects the
  // in-place terminal display; `quiet` draws nothing (--output json) but the line on
  // standard error that says how to resume a suspended node, which every mode prints.
  NodeTreeDisplay(std::string workflow, core::Json parameters, bool live, std::FILE* out,
                  bool quiet = false);

  void nodeChanged(const core::NodeStatus& node) override;
  void tick() override;
  // Draws the final state with the run's phase and message.
  void close(const core::RunResult& result);

  // The tree's lines for `nodes` (nodes[0] the root), without the header: for `close` and
  // for tests.
  static std::vector<std::string> treeLines(const std::vector<core::NodeStatus>& nodes,
                                            std::chrono::steady_clock::time_point now);

 private:
  void redraw(bool final, const std::string& status);

  std::string workflow_;
  core::Json parameters_;
  bool live_;
  std::FILE* out_;
  bool quiet_;
  std::unordered_map<std::string, bool> suspended_;  // suspend nodes whose line was printed
  std::vector<core::NodeStatus> nodes_;  // live: every node, in creation order
  std::unordered_map<std::string, std::size_t> index_;  // live: position by id
  std::unordered_map<std::string, core::NodePhase> logged_;  // log: last phase printed
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_draw_{};
  bool dirty_ = false;
};

}  // namespace plugboard::cli

#endif  // PLUGBOARD_TOOLS_NODE_TREE_H_
