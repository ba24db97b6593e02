// deployers/atp/schema_cache.cc: see schema_cache.h.
#include "deployers/atp/schema_cache.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace plugboard::atp_deployer {
namespace {

namespace fs = std::filesystem;

}  // namespace

std::string defaultCacheDir() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg == '/')
    return (fs::path(xdg) / "plugboard" / "atp").string();
  if (const char* home = std::getenv("HOME"); home != nullptr && *home == '/')
    return (fs::path(home) / ".cache" / "plugboard" / "atp").string();
  return {};
}

void Digest::addText(const std::string& text) {
  const std::string framed = std::to_string(text.size()) + ":" + text;
  sha_.update(framed);
}

bool Digest::addFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream content;
  content << in.rdbuf();
  addText(path);
  addText(content.str());
  return true;
}

bool Digest::addTree(const std::string& dir) {
  std::error_code ec;
  std::vector<fs::path> files;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().filename() == "__pycache__") {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file(ec)) files.push_back(it->path());
  }
  if (ec) return false;
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    addText(f.lexically_relative(dir).string());
    if (!addFile(f.string())) return false;
  }
  return true;
}

std::string Digest::hex() { return host::hexOf(sha_.digest()); }

std::optional<Json> loadSchema(const std::string& dir, const std::string& digest) {
  if (dir.empty()) return std::nullopt;
  std::ifstream in(fs::path(dir) / (digest + ".json"));
  if (!in) return std::nullopt;
  Json entry = Json::parse(in, nullptr, false);
  if (!entry.is_object() || !entry.contains("schema")) return std::nullopt;
  return entry["schema"];
}

bool storeSchema(const std::string& dir, const std::string& digest, const Json& schema) {
  if (dir.empty()) return false;
  std::error_code ec;
  fs::create_directories(dir, ec);
  const fs::path final_path = fs::path(dir) / (digest + ".json");
  const fs::path tmp = fs::path(dir) / (digest + ".tmp." + std::to_string(::getpid()));
  {
    std::ofstream out(tmp);
    if (!out) return false;
    out << Json{{"schema", schema}}.dump(-1, ' ', false, Json::error_handler_t::replace);
    if (!out) return false;
  }
  fs::rename(tmp, final_path, ec);
  if (ec) fs::remove(tmp, ec);
  return !ec;
}

}  // namespace plugboard::atp_deployer
