#include "deployers/process/settings.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string_view>
#include <system_error>

#include "core/duration.h"
#include "core/text.h"

namespace plugboard::process_deployer {

namespace fs = std::filesystem;

namespace {

constexpr const char* kHostName = "plugboard-host";

// ---------------------------------------------------------------------------------------
// Options

// "256M", "1GiB", "512k", "4096", 4096: binary multiples (1K = 1024 bytes).
std::optional<std::uint64_t> parseSizeOption(const Json& v) {
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_number_integer()) {
    const auto n = v.get<std::int64_t>();
    return n < 0 ? std::nullopt : std::optional<std::uint64_t>(n);
  }
  if (!v.is_string()) return std::nullopt;
  const std::string& s = v.get_ref<const std::string&>();
  std::uint64_t n = 0;
  std::size_t i = 0;
  for (; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); ++i) {
    const unsigned digit = s[i] - '0';
    if (n > (UINT64_MAX - digit) / 10) return std::nullopt;
    n = n * 10 + digit;
  }
  if (i == 0) return std::nullopt;
  const std::string unit = plugboard::core::toLower(s.substr(i));
  if (unit.empty() || unit == "b") return n;
  const auto power = std::string_view("kmgt").find(unit[0]);
  const std::string suffix = unit.substr(1);
  if (power == std::string_view::npos || (suffix != "" && suffix != "b" && suffix != "ib")) {
    return std::nullopt;
  }
  const unsigned shift = 10 * static_cast<unsigned>(power + 1);
  if (n > (UINT64_MAX >> shift)) return std::nullopt;
  return n << shift;
}

}  // namespace

void applyOptions(Settings& s, const Json& options) {
  if (!options.is_object()) throw std::invalid_argument("the options must be a JSON object");
  for (const auto& [key, value] : options.items()) {
    const auto must = [&](const std::string& what) {
      return std::invalid_argument("option '" + key + "' must be " + what + ", got " +
                                   value.dump());
    };
    const auto duration = [&] {
      auto d = value.is_string() ? plugboard::core::parseDuration(value.get<std::string>())
                                 : plugboard::core::Expected<Millis>(plugboard::core::Error(""));
      if (!d || d->count() < 0) throw must("a duration such as 30s");
      return *d;
    };
    if (key == "host" || key == "cwd") {
      if (!value.is_string() || value.get_ref<const std::string&>().empty()) {
        throw must("a non-empty path");
      }
      (key == "host" ? s.host : s.cwd) = value.get<std::string>();
    } else if (key == "memory") {
      const auto bytes = parseSizeOption(value);
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
    } else {
      throw std::invalid_argument("unknown option '" + key + "'");
    }
  }
}

// ---------------------------------------------------------------------------------------
// Finding plugboard-host

namespace {

bool isExecutableFile(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

std::optional<fs::path> searchPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string_view rest = path != nullptr ? path : "";
  while (!rest.empty()) {
    const auto colon = rest.find(':');
    const std::string dir(rest.substr(0, colon));
    const fs::path candidate = fs::path(dir.empty() ? "." : dir) / name;
    if (isExecutableFile(candidate)) return fs::absolute(candidate);
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  return std::nullopt;
}

// The directory this module's file is in, symbolic links resolved (a deployer directory
// may hold a link to the installed module); empty if unknown.
fs::path moduleDir() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<const void*>(&moduleDir), &info) == 0 ||
      info.dli_fname == nullptr) {
    return {};
  }
  std::error_code ec;
  fs::path file = fs::canonical(info.dli_fname, ec);
  if (ec) file = fs::absolute(info.dli_fname, ec);
  return file.parent_path();
}

}  // namespace

std::string moduleDirectory() { return moduleDir().string(); }

std::optional<std::uint64_t> parseSize(const Json& value) { return parseSizeOption(value); }

std::optional<std::string> findExecutable(const std::string& path_or_name) {
  if (path_or_name.find('/') != std::string::npos) {
    if (isExecutableFile(path_or_name)) return fs::absolute(path_or_name).lexically_normal().string();
    return std::nullopt;
  }
  if (auto found = searchPath(path_or_name)) return found->string();
  return std::nullopt;
}

std::string defaultHost() {
  if (fs::path dir = moduleDir(); !dir.empty()) {
    if (isExecutableFile(dir.parent_path() / kHostName))
      return (dir.parent_path() / kHostName).string();
    for (int up = 0; up < 4 && dir.has_relative_path(); ++up) {
      dir = dir.parent_path();
      if (isExecutableFile(dir / "bin" / kHostName)) return (dir / "bin" / kHostName).string();
    }
  }
  if (auto found = searchPath(kHostName)) return found->string();
  return {};
}

std::string resolveHost(const std::string& option, const std::string& fallback) {
  if (option.empty()) {
    if (fallback.empty()) {
      throw std::runtime_error(std::string("cannot find ") + kHostName +
                               " next to the process deployer (" + moduleDir().string() +
                               ") or in PATH; set the deployer's option 'host'");
    }
    return fallback;
  }
  if (option.find('/') != std::string::npos)
    return fs::absolute(option).lexically_normal().string();
  if (auto found = searchPath(option)) return found->string();
  throw std::runtime_error("cannot find '" + option + "' (option 'host') in PATH");
}

}  // namespace plugboard::process_deployer
