#include "core/workflows/model.h"

#include <mutex>
#include <unordered_set>

namespace plugboard::core {
namespace {

struct TextHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
};

}  // namespace

const std::string SourceFile::kEmpty;

SourceFile::SourceFile(std::string_view name) {
  if (name.empty()) return;
  // Never destroyed: a SourceRef may be read while static objects are destroyed.
  static std::mutex* const mu = new std::mutex;
  static auto* const names = new std::unordered_set<std::string, TextHash, std::equal_to<>>;
  std::lock_guard lock(*mu);
  auto it = names->find(name);
  if (it == names->end()) it = names->emplace(name).first;
  text_ = &*it;
}

std::string SourceRef::text() const {
  std::string out = file.str();
  if (line > 0) {
    out += ":" + std::to_string(line);
    if (column > 0) out += ":" + std::to_string(column);
  }
  return out;
}

const Template* WorkflowModel::find(const std::string& template_name) const {
  for (const auto& t : templates) {
    if (t.name == template_name) return &t;
  }
  return nullptr;
}

std::string ModelProblem::oneLine() const {
  std::string out = where.text();
  if (!out.empty()) out += ": ";
  if (!subject.empty()) out += subject + ": ";
  return out + message;
}

}  // namespace plugboard::core
