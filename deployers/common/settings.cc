#include "deployers/common/settings.h"

#include <filesystem>
#include <stdexcept>

#include <plugboard/host/options.h>
#include <plugboard/host/spawn.h>

namespace plugboard::deployer_common {

namespace fs = std::filesystem;

namespace {

constexpr const char* kHostName = "plugboard-host";
constexpr std::uint64_t kMaxFrameLimit = std::uint64_t{1} << 30;

}  // namespace

void applyOptions(Settings& s, const Json& options) {
  if (!options.is_object()) throw std::invalid_argument("the options must be a JSON object");
  for (const auto& item : options.items()) {
    // Named references, not a structured binding: clang before 16 does not let lambdas
    // capture bindings.
    const std::string& key = item.key();
    const Json& value = item.value();
    const auto must = [&](const std::string& what) {
      return std::invalid_argument("option '" + key + "' must be " + what + ", got " +
                                   value.dump());
    };
    const auto duration = [&] {
      auto d = value.is_string() ? host::parseDuration(value.get<std::string>())
                                 : host::Expected<Millis>(host::Error(""));
      if (!d || d->count() < 0) throw must("a duration such as 30s");
      return *d;
    };
    if (key == "host" || key == "cwd") {
      if (!value.is_string() || value.get_ref<const std::string&>().empty()) {
        throw must("a non-empty path");
      }
      (key == "host" ? s.host : s.cwd) = value.get<std::string>();
    } else if (key == "memory") {
      const auto bytes = host::parseSizeValue(value);
      if (!bytes || *bytes == 0) throw must("a size such as 256M or a number of bytes");
      s.memory = *bytes;
      s.memory_text = value.is_string() ? value.get<std::string>() : std::to_string(*bytes);
    } else if (key == "cpu_time") {
      const Millis d = duration();
      if (d.count() == 0) throw must("a positive duration");
      s.cpu_seconds = static_cast<rlim_t>((d.count() + 999) / 1000);
    } else if (key == "open_files") {
      if (!value.is_number_integer() || value.get<long long>() <= 0)
        throw must("a positive integer");
      s.open_files = static_cast<rlim_t>(value.get<long long>());
    } else if (key == "env") {
      if (!value.is_object()) throw must("a table of strings");
      for (const auto& [name, text] : value.items()) {
        if (!text.is_string()) throw must("a table of strings");
        if (name.empty() || name.find('=') != std::string::npos) {
          throw std::invalid_argument("option 'env' names an invalid variable '" + name + "'");
        }
        s.env[name] = text.get<std::string>();
      }
    } else if (key == "config") {
      if (!value.is_object()) throw must("an object");
      s.config = value;
    } else if (key == "cancel_grace") {
      s.cancel_grace = duration();
    } else if (key == "start_timeout") {
      s.start_timeout = duration();
      if (s.start_timeout.count() == 0) throw must("a positive duration");
    } else if (key == "frame_limit") {
      const auto bytes = host::parseSizeValue(value);
      if (!bytes || *bytes < host::kMinFrameLimit || *bytes > kMaxFrameLimit)
        throw must("a size from 4K to 1G, such as 64M");
      s.frame_limit = static_cast<std::size_t>(*bytes);
    } else if (key == "restart_at_open_files" || key == "restart_at_threads" ||
               key == "restart_after_calls") {
      if (!value.is_number_integer() || value.get<long long>() <= 0)
        throw must("a positive integer");
      (key == "restart_at_open_files" ? s.restart_at_open_files
       : key == "restart_at_threads"  ? s.restart_at_threads
                                      : s.restart_after_calls) = value.get<std::uint64_t>();
    } else {
      throw std::invalid_argument("unknown option '" + key + "'");
    }
  }
}

// ---------------------------------------------------------------------------------------
// Finding plugboard-host

std::string defaultHost() {
  if (fs::path dir = host::moduleDirectory(); !dir.empty()) {
    if (auto beside = host::findExecutable((dir.parent_path() / kHostName).string()))
      return *beside;
    for (int up = 0; up < 4 && dir.has_relative_path(); ++up) {
      dir = dir.parent_path();
      if (auto in_bin = host::findExecutable((dir / "bin" / kHostName).string())) return *in_bin;
    }
  }
  return host::findExecutable(kHostName).value_or("");
}

std::string resolveHost(const std::string& option, const std::string& fallback) {
  if (option.empty()) {
    if (fallback.empty()) {
      throw std::runtime_error(std::string("cannot find ") + kHostName +
                               " next to the process deployer (" + host::moduleDirectory() +
                               ") or in PATH; set the deployer's option 'host'");
    }
    return fallback;
  }
  if (option.find('/') != std::string::npos)
    return fs::absolute(option).lexically_normal().string();
  if (auto found = host::findExecutable(option)) return *found;
  throw std::runtime_error("cannot find '" + option + "' (option 'host') in PATH");
}

}  // namespace plugboard::deployer_common
