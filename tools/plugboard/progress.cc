#include "tools/plugboard/progress.h"

#include <algorithm>
#include <ctime>

#include "tools/plugboard/terminal.h"

namespace plugboard::cli {
namespace {

constexpr auto kRedrawEvery = std::chrono::milliseconds(200);

const char* colorOf(core::StepPhase phase) {
  switch (phase) {
    case core::StepPhase::kSucceeded:
      return "\x1b[32m";
    case core::StepPhase::kFailed:
    case core::StepPhase::kError:
      return "\x1b[31m";
    case core::StepPhase::kSkipped:
    case core::StepPhase::kCancelled:
      return "\x1b[33m";
    case core::StepPhase::kRunning:
      return "\x1b[36m";
    default:
      return "\x1b[2m";
  }
}

}  // namespace

std::string outputsText(const core::StepOutputs& outputs, std::size_t max_value) {
  if (!outputs.parameters) return "";
  std::string out;
  for (const auto& [name, value] : *outputs.parameters) {
    std::string text = value.is_string() ? value.get<std::string>() : value.dump();
    for (char& c : text) {
      if (c == '\n' || c == '\r' || c == '\t') c = ' ';
    }
    if (!out.empty()) out += ", ";
    out += name + "=" + fitLine(text, max_value);
  }
  return out;
}

std::string timeOfDay() {
  std::time_t now = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%H:%M:%S", std::localtime(&now));
  return buf;
}

ProgressDisplay::ProgressDisplay(const std::vector<std::string>& steps, bool live, std::FILE* out)
    : live_(live), out_(out) {
  if (!live_) return;  // a log line per change needs nothing kept
  compact_ = steps.size() > kMaxStepLines;
  index_.reserve(steps.size());
  for (std::size_t i = 0; i < steps.size(); ++i) {
    index_.emplace(steps[i], i);
    id_width_ = std::max(id_width_, displayWidth(steps[i]));
  }
  id_width_ = std::min(id_width_, kMaxIdWidth);
  if (compact_) {
    phases_.assign(steps.size(), core::StepPhase::kPending);
    counts_[static_cast<std::size_t>(core::StepPhase::kPending)] = steps.size();
    return;
  }
  for (const auto& id : steps) {
    core::StepStatus s;
    s.id = id;
    steps_.push_back(s);
  }
}

std::string ProgressDisplay::lineFor(const core::StepStatus& s) const {
  std::string phase(core::stepPhaseName(s.phase));
  const std::string id = fitLine(s.id, id_width_);
  const std::size_t id_width = displayWidth(id);
  std::string line =
      "  " + id + std::string(id_width_ > id_width ? id_width_ - id_width + 2 : 2, ' ');
  std::string elapsed = s.started ? core::formatElapsed(s.elapsed()) : "";
  line += std::string(colorOf(s.phase)) + phase + "\x1b[0m" + std::string(11 - phase.size(), ' ');
  line += elapsed + std::string(elapsed.size() < 8 ? 8 - elapsed.size() : 1, ' ');
  line += s.deployer + std::string(s.deployer.size() < 10 ? 10 - s.deployer.size() : 1, ' ');
  line += s.message;
  if (s.phase == core::StepPhase::kSucceeded) {
    const std::string outputs = outputsText(s.outputs);
    if (!outputs.empty()) line += (s.message.empty() ? "" : "; ") + outputs;
  }
  return line;
}

std::string ProgressDisplay::countsLine() const {
  std::string line = "  " + std::to_string(phases_.size()) + " steps:";
  const char* sep = " ";
  for (auto phase : {core::StepPhase::kSucceeded, core::StepPhase::kRunning,
                     core::StepPhase::kPending, core::StepPhase::kFailed, core::StepPhase::kError,
                     core::StepPhase::kSkipped, core::StepPhase::kCancelled}) {
    const std::size_t n = counts_[static_cast<std::size_t>(phase)];
    if (n == 0) continue;
    line += sep + std::string(colorOf(phase)) + std::to_string(n) + " " +
            std::string(core::stepPhaseName(phase)) + "\x1b[0m";
    sep = ", ";
  }
  return line;
}

std::vector<std::string> ProgressDisplay::lines() const {
  std::vector<std::string> out;
  if (!compact_) {
    for (const auto& s : steps_) out.push_back(lineFor(s));
    return out;
  }
  out.push_back(countsLine());
  for (const auto& [i, s] : running_) {
    if (out.size() > kMaxStepLines) {
      out.push_back("  ... and " + std::to_string(running_.size() - kMaxStepLines) +
                    " more running");
      break;
    }
    out.push_back(lineFor(s));
  }
  return out;
}

void ProgressDisplay::redraw() {
  drawLive(out_, lines());
  last_draw_ = std::chrono::steady_clock::now();
}

void ProgressDisplay::stepChanged(const core::StepStatus& step) {
  if (live_) {
    auto it = index_.find(step.id);
    if (it == index_.end()) return;
    if (!compact_) {
      steps_[it->second] = step;
      redraw();
      return;
    }
    core::StepPhase& phase = phases_[it->second];
    --counts_[static_cast<std::size_t>(phase)];
    ++counts_[static_cast<std::size_t>(step.phase)];
    phase = step.phase;
    if (step.phase == core::StepPhase::kRunning) {
      running_[it->second] = step;
    } else {
      running_.erase(it->second);
    }
    tick();
    return;
  }
  std::string line =
      timeOfDay() + " step " + step.id + ": " + std::string(core::stepPhaseName(step.phase));
  if (core::isTerminal(step.phase) && step.started && step.phase != core::StepPhase::kSkipped)
    line += " in " + core::formatElapsed(step.elapsed());
  if (core::isTerminal(step.phase) && !step.plugin.empty()) {
    line += " (" + step.plugin;
    if (!step.deployer.empty()) line += " via " + step.deployer;
    line += ")";
  }
  std::string detail = step.message;
  if (step.phase == core::StepPhase::kSucceeded) {
    const std::string outputs = outputsText(step.outputs);
    if (!outputs.empty()) detail += (detail.empty() ? "" : "; ") + outputs;
  }
  if (!detail.empty()) line += ": " + detail;
  std::fprintf(out_, "%s\n", line.c_str());
  std::fflush(out_);
}

void ProgressDisplay::tick() {
  if (live_ && std::chrono::steady_clock::now() - last_draw_ > kRedrawEvery) redraw();
}

void ProgressDisplay::close() {
  if (!live_) return;
  drawLive(out_, lines(), /*final=*/true);
  endLive();
}

}  // namespace plugboard::cli
