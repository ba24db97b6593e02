// fuzz/config.cc: the configuration file (core/runtime/config.h), as `--config` reads it.
// Nothing is opened: relative paths are only made relative to the file's directory.
#include "core/runtime/config.h"
#include "fuzz/support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto config = plugboard::core::parseConfig(plugboard::fuzz::asText(data, size),
                                             "/etc/plugboard/plugboard.toml");
  if (!config) {
    FUZZ_CHECK(!config.error().message().empty());
    return 0;
  }
  FUZZ_CHECK(config->server.threads >= 0);
  FUZZ_CHECK(config->server.body_limit > 0);
  // A duration is never negative nor beyond the longest, however large the number written.
  for (const auto d : {config->server.default_timeout, config->server.poll_interval, config->server.reply_deadline,
                       config->server.grace_period}) {
    FUZZ_CHECK(d.count() >= 0 && d <= plugboard::core::kMaxDuration);
  }
  for (const auto& dir : config->plugin_dirs) FUZZ_CHECK(dir.is_absolute());
  return 0;
}
