// tools/plugboard/graph.h: a workflow's step graph as Graphviz DOT or Mermaid text.
//
// Each step is a node labelled with its id, plugin, RPC and deployer (with the options the
// step or the configuration gives it); each dependency is an edge from the step depended
// on. A step given a phase (from a `run --output json` result) is filled with that phase's
// colour and shows it. Both writers escape every text they
// emit, so any step id or plugin name gives valid output. Pure functions; thread-safe.
#ifndef PLUGBOARD_TOOLS_GRAPH_H_
#define PLUGBOARD_TOOLS_GRAPH_H_

#include <map>
#include <string>
#include <vector>

#include "core/runtime/exports.h"
#include "core/runtime/runtime.h"

namespace plugboard::cli {

struct GraphStep {
  const core::WorkflowStep* step = nullptr;
  core::StepPlace place;
  std::string phase;  // empty: not run
};

// The phases graphs colour, with their fill colours, in the order a legend lists them.
const std::vector<std::pair<std::string, std::string>>& phaseColours();

std::string toDot(const core::Workflow& workflow, const std::vector<GraphStep>& steps);
std::string toMermaid(const core::Workflow& workflow, const std::vector<GraphStep>& steps);

// A model workflow (Argo YAML) as written, from its entry point: a node per call of a
// template (its name, the template and what it runs, its condition and loop), edges for a
// dag's dependencies and from each steps group to the next, a dashed edge from a call of
// a steps or dag template to the calls it makes (a template already being drawn on the
// way there is not drawn again: recursion), and the exit handlers.
std::string toDot(const core::WorkflowModel& model);
std::string toMermaid(const core::WorkflowModel& model);

}  // namespace plugboard::cli

#endif  // PLUGBOARD_TOOLS_GRAPH_H_
