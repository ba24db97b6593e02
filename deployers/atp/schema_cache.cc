// deployers/atp/schema_cache.cc: see schema_cache.h.
#include "deployers/atp/schema_cache.h"

#include <openssl/evp.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace plugboard::atp_deployer {
namespace {

namespace fs = std::filesystem;

EVP_MD_CTX* md(void* ctx) { return static_cast<EVP_MD_CTX*>(ctx); }

}  // namespace

std::string defaultCacheDir() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg == '/')
    return (fs::path(xdg) / "plugboard" / "atp").string();
  if (const char* home = std::getenv("HOME"); home != nullptr && *home == '/')
    return (fs::path(home) / ".cache" / "plugboard" / "atp").string();
  return {};
}

Digest::Digest() : ctx_(EVP_MD_CTX_new()) { EVP_DigestInit_ex(md(ctx_), EVP_sha256(), nullptr); }

Digest::~Digest() { EVP_MD_CTX_free(md(ctx_)); }

void Digest::addText(const std::string& text) {
  const std::string framed = std::to_string(text.size()) + ":" + text;
  EVP_DigestUpdate(md(ctx_), framed.data(), framed.size());
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

std::string Digest::hex() {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(md(ctx_), out, &len);
  static const char* digits = "0123456789abcdef";
  std::string text;
  for (unsigned i = 0; i < len; ++i) {
    text += digits[out[i] >> 4];
    text += digits[out[i] & 15];
  }
  return text;
}

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
