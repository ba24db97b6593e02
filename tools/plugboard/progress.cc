#include "tools/plugboard/progress.h"

#include <algorithm>
#include <ctime>

namespace plugboard::cli {
namespace {

const char* colorOf(core::StepPhase phase) {
  switch (phase) {
    case core::StepPhase::kSucceeded: return "\x1b[32m";
    case core::StepPhase::kFailed:
    case core::StepPhase::kError: return "\x1b[31m";
    case core::StepPhase::kSkipped:
    case core::StepPhase::kCancelled: return "\x1b[33m";
    case core::StepPhase::kRunning: return "\x1b[36m";
    default: return "\x1b[2m";
  }
}

std::string timestamp() {
  std::time_t now = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%H:%M:%S", std::localtime(&now));
  return buf;
}

}  // namespace

ProgressDisplay::ProgressDisplay(const std::vector<std::string>& steps, bool live, std::FILE* out)
    : live_(live), out_(out) {
  for (const auto& id : steps) {
    core::StepStatus s;
    s.id = id;
    steps_.push_back(s);
    id_width_ = std::max(id_width_, id.size());
  }
}

std::string ProgressDisplay::lineFor(const core::StepStatus& s) const {
  std::string phase(core::stepPhaseName(s.phase));
  std::string line = "  " + s.id + std::string(id_width_ - s.id.size() + 2, ' ');
  std::string elapsed = s.started ? core::formatElapsed(s.elapsed()) : "";
  line += std::string(colorOf(s.phase)) + phase + "\x1b[0m" + std::string(11 - phase.size(), ' ');
  line += elapsed + std::string(elapsed.size() < 8 ? 8 - elapsed.size() : 1, ' ');
  line += s.message;
  return line;
}

void ProgressDisplay::redraw() {
  if (drawn_) std::fprintf(out_, "\x1b[%zuA", steps_.size());
  for (const auto& s : steps_) std::fprintf(out_, "\r\x1b[2K%s\n", lineFor(s).c_str());
  std::fflush(out_);
  drawn_ = true;
  last_draw_ = std::chrono::steady_clock::now();
}

void ProgressDisplay::stepChanged(const core::StepStatus& step) {
  for (auto& s : steps_) {
    if (s.id == step.id) s = step;
  }
  if (live_) {
    redraw();
    return;
  }
  std::string line = timestamp() + " step " + step.id + ": " + std::string(core::stepPhaseName(step.phase));
  if (core::isTerminal(step.phase) && step.started) line += " in " + core::formatElapsed(step.elapsed());
  if (core::isTerminal(step.phase) && !step.plugin.empty()) line += " (" + step.plugin + ")";
  if (!step.message.empty()) line += ": " + step.message;
  std::fprintf(out_, "%s\n", line.c_str());
  std::fflush(out_);
}

void ProgressDisplay::tick() {
  if (live_ && std::chrono::steady_clock::now() - last_draw_ > std::chrono::milliseconds(200)) {
    redraw();
  }
}

void ProgressDisplay::close() {
  if (live_) redraw();
}

}  // namespace plugboard::cli
