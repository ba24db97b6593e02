#include "core/serving/metrics_text.h"

#include <cmath>
#include <cstdio>

namespace plugboard::core {

std::string escapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (const char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

void MetricsText::family(std::string_view name, std::string_view type, std::string_view help) {
  text_.append("# HELP ").append(name).append(" ");
  for (const char c : help) {
    if (c == '\\') {
      text_ += "\\\\";
    } else if (c == '\n') {
      text_ += "\\n";
    } else {
      text_ += c;
    }
  }
  text_.append("\n# TYPE ").append(name).append(" ").append(type).append("\n");
}

void MetricsText::start(std::string_view name, const Labels& labels) {
  text_.append(name);
  if (labels.empty()) return;
  text_ += '{';
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (i > 0) text_ += ',';
    text_.append(labels[i].first).append("=\"").append(escapeLabelValue(labels[i].second));
    text_ += '"';
  }
  text_ += '}';
}

void MetricsText::sample(std::string_view name, const Labels& labels, std::uint64_t value) {
  start(name, labels);
  text_.append(" ").append(std::to_string(value)).append("\n");
}

void MetricsText::sample(std::string_view name, const Labels& labels, double value) {
  start(name, labels);
  char buf[32];
  if (std::isinf(value)) {
    std::snprintf(buf, sizeof buf, "%s", value > 0 ? "+Inf" : "-Inf");
  } else if (std::isnan(value)) {
    std::snprintf(buf, sizeof buf, "NaN");
  } else {
    std::snprintf(buf, sizeof buf, "%.9g", value);
  }
  text_.append(" ").append(buf).append("\n");
}

}  // namespace plugboard::core
