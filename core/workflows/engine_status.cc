// Names and JSON of the engine's nodes and results, as Argo writes its WorkflowStatus
// (pkg/apis/workflow/v1alpha1/workflow_types.go: NodeStatus, Workflow.NodeID).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <ctime>

#include "core/workflows/engine.h"
#include "core/workflows/engine_state.h"

namespace plugboard::core {

std::string_view nodePhaseName(NodePhase phase) {
  switch (phase) {
    case NodePhase::kPending: return "Pending";
    case NodePhase::kRunning: return "Running";
    case NodePhase::kSucceeded: return "Succeeded";
    case NodePhase::kFailed: return "Failed";
    case NodePhase::kError: return "Error";
    case NodePhase::kSkipped: return "Skipped";
    case NodePhase::kOmitted: return "Omitted";
  }
  return "Unknown";
}

bool isEnded(NodePhase phase) {
  return phase != NodePhase::kPending && phase != NodePhase::kRunning;
}

std::string_view nodeTypeName(NodeType type) {
  switch (type) {
    case NodeType::kPod: return "Pod";
    case NodeType::kPlugin: return "Plugin";
    case NodeType::kSteps: return "Steps";
    case NodeType::kStepGroup: return "StepGroup";
    case NodeType::kDAG: return "DAG";
    case NodeType::kTaskGroup: return "TaskGroup";
    case NodeType::kRetry: return "Retry";
    case NodeType::kSkipped: return "Skipped";
    case NodeType::kSuspend: return "Suspend";
  }
  return "Unknown";
}

std::string argoNodeId(const std::string& workflow, const std::string& node_name) {
  if (node_name == workflow) return workflow;
  std::uint32_t h = 2166136261u;  // FNV-1a, 32 bits
  for (unsigned char c : node_name) {
    h ^= c;
    h *= 16777619u;
  }
  return workflow + "-" + std::to_string(h);
}

std::string parameterText(const Json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

namespace {

// RFC 3339 in UTC, seconds: the steady clock's reading placed on the system clock.
std::string rfc3339(std::chrono::steady_clock::time_point tp) {
  const auto wall = std::chrono::system_clock::now() +
                    std::chrono::duration_cast<std::chrono::system_clock::duration>(
                        tp - std::chrono::steady_clock::now());
  const std::time_t t = std::chrono::system_clock::to_time_t(wall);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// The status's members other than its nodes.
Json statusHead(const RunResult& r) {
  Json j = {{"phase", std::string(nodePhaseName(r.phase))}};
  if (!r.message.empty()) j["message"] = r.message;
  if (!r.nodes.empty()) {
    if (r.nodes[0].started) j["startedAt"] = rfc3339(*r.nodes[0].started);
    std::optional<std::chrono::steady_clock::time_point> last;
    for (const auto& n : r.nodes) {
      if (n.finished && (!last || *n.finished > *last)) last = n.finished;
    }
    if (last && isEnded(r.phase)) j["finishedAt"] = rfc3339(*last);
  }
  if (r.outputs.contains("parameters") && !r.outputs["parameters"].empty()) j["outputs"] = r.outputs;
  return j;
}

// `value` as dump(2) writes it, each line after the first indented by `level` more; one
// write (a node's status is some twenty lines: a write per line and indent was a tenth
// of a large run's CPU).
void writeDumped(std::FILE* out, const Json& value, int level) {
  const std::string text = value.dump(2);
  if (level == 0) {
    std::fwrite(text.data(), 1, text.size(), out);
    return;
  }
  const std::string indent(static_cast<std::size_t>(level) * 2, ' ');
  std::string indented;
  indented.reserve(text.size() + text.size() / 8);
  std::size_t from = 0;
  for (std::size_t nl = text.find('\n'); nl != std::string::npos; nl = text.find('\n', from)) {
    indented.append(text, from, nl + 1 - from);
    indented += indent;
    from = nl + 1;
  }
  indented.append(text, from);
  std::fwrite(indented.data(), 1, indented.size(), out);
}

// Appends `text` as a JSON string, as dump() writes it: printable ASCII as it is, anything
// else (escapes, UTF-8, and what is not UTF-8: dump() throws on it) by dump() itself.
void appendString(std::string& out, std::string_view text) {
  for (unsigned char c : text) {
    if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') {
      out += Json(text).dump();
      return;
    }
  }
  out += '"';
  out += text;
  out += '"';
}

// Writes an object's members as dump(2) does at an indent of `base` spaces: each member
// on its own line, ",\n" between, the closing brace on a line of its own.
class ObjectText {
 public:
  ObjectText(std::string& out, std::size_t base) : out_(out), base_(base) { out_ += '{'; }
  // Starts a member: its value is appended next (at an indent of base() + 2).
  std::string& member(std::string_view key) {
    out_ += first_ ? "\n" : ",\n";
    first_ = false;
    out_.append(base_ + 2, ' ');
    out_ += '"';
    out_ += key;  // the keys are ASCII names
    out_ += "\": ";
    return out_;
  }
  void close() {
    if (!first_) {
      out_ += '\n';
      out_.append(base_, ' ');
    }
    out_ += '}';
  }

 private:
  std::string& out_;
  std::size_t base_;
  bool first_ = true;
};

}  // namespace

const std::string* NodeIO::parameter(std::string_view name) const {
  for (const auto& [n, v] : parameters) {
    if (n == name) return &v;
  }
  return nullptr;
}

Json NodeIO::toJson() const {
  if (empty()) return Json();
  Json j = Json::object();
  if (!parameters.empty()) {
    Json list = Json::array();
    for (const auto& [n, v] : parameters) list.push_back({{"name", n}, {"value", v}});
    j["parameters"] = std::move(list);
  }
  if (result) j["result"] = *result;
  if (exit_code) j["exitCode"] = *exit_code;
  return j;
}

void NodeIO::appendJson(std::string& out, std::size_t base) const {
  // toJson()'s members in their order as a JSON object sorts them.
  ObjectText o(out, base);
  if (exit_code) appendString(o.member("exitCode"), *exit_code);
  if (!parameters.empty()) {
    o.member("parameters") += "[\n";
    bool first = true;
    for (const auto& [n, v] : parameters) {
      if (!first) out += ",\n";
      first = false;
      out.append(base + 4, ' ');
      ObjectText p(out, base + 4);
      appendString(p.member("name"), n);
      appendString(p.member("value"), v);
      p.close();
    }
    out += '\n';
    out.append(base + 2, ' ');
    out += ']';
  }
  if (result) appendString(o.member("result"), *result);
  o.close();
}

void NodeStatus::appendJson(std::string& out, std::size_t base) const {
  // toJson()'s members in their order as a JSON object sorts them.
  ObjectText o(out, base);
  if (!boundary_id.empty()) appendString(o.member("boundaryID"), boundary_id);
  if (!children.empty()) {
    o.member("children") += "[\n";
    for (std::size_t i = 0; i < children.size(); ++i) {
      if (i > 0) out += ",\n";
      out.append(base + 4, ' ');
      appendString(out, children[i]);
    }
    out += '\n';
    out.append(base + 2, ' ');
    out += ']';
  }
  appendString(o.member("displayName"), display_name);
  if (finished) appendString(o.member("finishedAt"), rfc3339(*finished));
  appendString(o.member("id"), id);
  if (!inputs.empty()) inputs.appendJson(o.member("inputs"), base + 2);
  if (!message.empty()) appendString(o.member("message"), message);
  appendString(o.member("name"), name);
  if (!outputs.empty()) outputs.appendJson(o.member("outputs"), base + 2);
  appendString(o.member("phase"), nodePhaseName(phase));
  if (started) appendString(o.member("startedAt"), rfc3339(*started));
  if (!template_name.empty()) appendString(o.member("templateName"), template_name);
  appendString(o.member("type"), nodeTypeName(type));
  o.close();
}

Json NodeStatus::toJson() const {
  Json j = {{"id", id},
            {"name", name},
            {"displayName", display_name},
            {"type", std::string(nodeTypeName(type))},
            {"phase", std::string(nodePhaseName(phase))}};
  if (!template_name.empty()) j["templateName"] = template_name;
  if (!message.empty()) j["message"] = message;
  if (!boundary_id.empty()) j["boundaryID"] = boundary_id;
  if (!children.empty()) j["children"] = children;
  if (!inputs.empty()) j["inputs"] = inputs.toJson();
  if (!outputs.empty()) j["outputs"] = outputs.toJson();
  if (started) j["startedAt"] = rfc3339(*started);
  if (finished) j["finishedAt"] = rfc3339(*finished);
  return j;
}

Json RunResult::statusJson() const {
  Json nodes_json = Json::object();
  for (const auto& n : nodes) nodes_json[n.id] = n.toJson();
  Json j = statusHead(*this);
  j["nodes"] = std::move(nodes_json);
  return j;
}

void RunResult::writeStatusJson(std::FILE* out, int level) const {
  // statusJson().dump(2) written member by member: the nodes one at a time (in the order
  // of their ids, as a JSON object sorts them; the last of equal ids, as it keeps), so
  // that a large run's status is never held whole, as a tree or as text.
  const std::string in((level + 1) * 2, ' ');
  const Json head = statusHead(*this);
  std::fputc('{', out);
  bool first = true;
  const auto member = [&](const std::string& key) {
    std::fputs(first ? "\n" : ",\n", out);
    first = false;
    std::fputs(in.c_str(), out);
    writeDumped(out, Json(key), 0);
    std::fputs(": ", out);
  };
  const auto writeNodes = [&] {
    member("nodes");
    if (nodes.empty()) {
      std::fputs("{}", out);
      return;
    }
    std::vector<const NodeStatus*> sorted;
    sorted.reserve(nodes.size());
    for (const auto& n : nodes) sorted.push_back(&n);
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const NodeStatus* a, const NodeStatus* b) { return a->id < b->id; });
    const std::string node_in((level + 2) * 2, ' ');
    std::fputc('{', out);
    bool first_node = true;
    std::string text;  // a node's, written at once (as text: building its JSON value and
                       // dumping it was a sixth of a large YAML run's CPU)
    for (std::size_t i = 0; i < sorted.size(); ++i) {
      if (i + 1 < sorted.size() && sorted[i + 1]->id == sorted[i]->id) continue;
      text.clear();
      text += first_node ? "\n" : ",\n";
      first_node = false;
      text += node_in;
      appendString(text, sorted[i]->id);
      text += ": ";
      sorted[i]->appendJson(text, node_in.size());
      std::fwrite(text.data(), 1, text.size(), out);
    }
    std::fputc('\n', out);
    std::fputs(in.c_str(), out);
    std::fputc('}', out);
  };
  bool nodes_written = false;
  for (const auto& [key, value] : head.items()) {
    if (!nodes_written && key > "nodes") {
      writeNodes();
      nodes_written = true;
    }
    member(key);
    writeDumped(out, value, level + 1);
  }
  if (!nodes_written) writeNodes();
  std::fputc('\n', out);
  for (int i = 0; i < level; ++i) std::fputs("  ", out);
  std::fputc('}', out);
}

}  // namespace plugboard::core
