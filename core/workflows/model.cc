#include "core/workflows/model.h"

namespace plugboard::core {

std::string SourceRef::text() const {
  std::string out = file;
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
