// tests/support/prometheus.h: Prometheus text exposition read by the Prometheus project's
// own parser (Debian's python3-prometheus-client, through tests/support/prometheus_parse.py
// and Debian's /usr/bin/python3), for tests of serve's /metrics.
#ifndef PLUGBOARD_TESTS_SUPPORT_PROMETHEUS_H_
#define PLUGBOARD_TESTS_SUPPORT_PROMETHEUS_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/paths.h"
#include "tests/support/subprocess.h"

namespace plugboard::testing {

// Whether the parser is installed (tools/setup.sh installs it).
inline bool havePrometheusParser() {
  return run({"/usr/bin/python3", "-c", "import prometheus_client"}).exit_code == 0;
}

struct ParsedMetrics {
  bool ok = false;    // the text parsed
  std::string error;  // why not
  // Each sample: {"family", "type", "name", "labels": {...}, "value"}; "+Inf"/"-Inf" as text.
  std::vector<nlohmann::json> samples;
};

inline ParsedMetrics parsePrometheus(const std::string& text) {
  auto r = run(
      {"/usr/bin/python3", (sourceDir() / "tests" / "support" / "prometheus_parse.py").string()},
      text);
  ParsedMetrics parsed;
  parsed.ok = r.exit_code == 0;
  parsed.error = r.err;
  for (std::size_t start = 0, end; (end = r.out.find('\n', start)) != std::string::npos;
       start = end + 1) {
    parsed.samples.push_back(nlohmann::json::parse(r.out.substr(start, end - start)));
  }
  return parsed;
}

}  // namespace plugboard::testing

#endif  // PLUGBOARD_TESTS_SUPPORT_PROMETHEUS_H_
