// serve's Prometheus text writer (core/serving/metrics_text.h) against the format: label
// values holding the three characters the format escapes, and others it does not, are read
// back unchanged by the Prometheus project's own parser (Debian's python3-prometheus-client,
// tests/support/prometheus_parse.py), and the writer's escapes are the format's.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/serving/metrics_text.h"
#include "tests/support/prometheus.h"

namespace plugboard::core {
namespace {

using Json = nlohmann::json;

// Every sample the parser reads in `text`, or a failure naming what did not parse.
std::vector<Json> parsed(const std::string& text) {
  auto r = testing::parsePrometheus(text);
  EXPECT_TRUE(r.ok) << r.error << "\n" << text;
  return r.samples;
}

TEST(MetricsTextTest, EscapesBackslashQuoteAndNewlineAsTheFormatSays) {
  EXPECT_EQ(escapeLabelValue(R"(a"b\c)"
                             "\n"
                             "d"),
            R"(a\"b\\c\nd)");
  EXPECT_EQ(escapeLabelValue("plain@1.0.0+build.5"), "plain@1.0.0+build.5");
  MetricsText out;
  out.family("x_total", "counter", "A help text with a \\ and a\nline feed.");
  out.sample("x_total", {{"plugin", "a\"b"}}, std::uint64_t{3});
  EXPECT_EQ(out.text(),
            "# HELP x_total A help text with a \\\\ and a\\nline feed.\n"
            "# TYPE x_total counter\n"
            "x_total{plugin=\"a\\\"b\"} 3\n");
}

TEST(MetricsTextTest, ThePrometheusParserReadsHostileLabelValuesBackUnchanged) {
  if (!testing::havePrometheusParser()) {
    GTEST_SKIP() << "python3-prometheus-client is not installed (tools/setup.sh installs it)";
  }
  const std::vector<std::string> values = {
      R"(quote"d)", R"(back\slash)", "line\nfeed", R"(\")", R"(\\n)", "}{,=", "é ü 😀", "", "#"};
  MetricsText out;
  out.family("plugboard_calls_total", "counter", "Plugin calls, by \"phase\".");
  for (const auto& v : values) {
    out.sample("plugboard_calls_total", {{"plugin", v}, {"phase", "Succeeded"}}, std::uint64_t{7});
  }
  out.family("plugboard_call_duration_seconds", "histogram", "Latency.");
  out.sample("plugboard_call_duration_seconds_bucket", {{"plugin", values[1]}, {"le", "0.5"}},
             std::uint64_t{1});
  out.sample("plugboard_call_duration_seconds_bucket", {{"plugin", values[1]}, {"le", "+Inf"}},
             std::uint64_t{2});
  out.sample("plugboard_call_duration_seconds_sum", {{"plugin", values[1]}}, 0.25);
  out.sample("plugboard_call_duration_seconds_count", {{"plugin", values[1]}}, std::uint64_t{2});
  const auto samples = parsed(out.text());
  ASSERT_EQ(samples.size(), values.size() + 4) << out.text();
  for (std::size_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(samples[i]["name"], "plugboard_calls_total");
    EXPECT_EQ(samples[i]["labels"]["plugin"], values[i]) << i;
    EXPECT_EQ(samples[i]["labels"]["phase"], "Succeeded");
    EXPECT_EQ(samples[i]["value"], 7.0);
  }
  EXPECT_EQ(samples[values.size() + 2]["value"], 0.25);
  EXPECT_EQ(samples[values.size() + 1]["labels"]["le"], "+Inf");
}

TEST(MetricsTextTest, TheParserRefusesWhatTheWriterWouldBreakWithoutEscaping) {
  if (!testing::havePrometheusParser()) {
    GTEST_SKIP() << "python3-prometheus-client is not installed (tools/setup.sh installs it)";
  }
  // The check can fail: an unescaped quote or line feed is not the format.
  for (const char* broken : {"x{plugin=\"a\"b\"} 1\n", "x{plugin=\"a\nb\"} 1\n"}) {
    EXPECT_FALSE(testing::parsePrometheus(broken).ok) << broken;
  }
}

}  // namespace
}  // namespace plugboard::core
