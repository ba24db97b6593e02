// core/serving/metrics_text.h: the Prometheus text exposition format (version 0.0.4), as
// serve's /metrics writes it: one place that writes metric families, samples and label
// values, escaping each label value (backslash, double quote and line feed, the three
// characters the format escapes) so that any name or version a label carries leaves the
// text parseable.
//
// Thread-safety: a MetricsText is used by one thread at a time; escapeLabelValue() is a
// pure function.
#ifndef PLUGBOARD_CORE_SERVING_METRICS_TEXT_H_
#define PLUGBOARD_CORE_SERVING_METRICS_TEXT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace plugboard::core {

// `value` as it goes between the quotes of a label: \ as \\, " as \", line feed as \n.
std::string escapeLabelValue(std::string_view value);

class MetricsText {
 public:
  using Labels = std::vector<std::pair<std::string_view, std::string_view>>;

  // Starts a family: its # HELP (escaped as the format says: \ and line feed) and # TYPE
  // lines. `type`: counter, gauge, histogram.
  void family(std::string_view name, std::string_view type, std::string_view help);
  // One sample line: name{label="value",...} value. REQUIRES: label names are valid
  // Prometheus names (they are this program's own).
  void sample(std::string_view name, const Labels& labels, std::uint64_t value);
  void sample(std::string_view name, const Labels& labels, double value);

  const std::string& text() const { return text_; }

 private:
  void start(std::string_view name, const Labels& labels);
  std::string text_;
};

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_SERVING_METRICS_TEXT_H_
