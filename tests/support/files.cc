#include "tests/support/files.h"

#include <stdlib.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace plugboard::testing {
namespace fs = std::filesystem;

TempDir::TempDir() {
  std::string pattern = (fs::temp_directory_path() / "plugboard-test-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, ec);
  fs::remove_all(path_, ec);
}

std::string readFile(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + file.string());
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

void writeFile(const fs::path& file, std::string_view bytes) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + file.string());
}

std::string withEdit(std::string bytes, std::string_view find, std::string_view replace) {
  if (find.size() != replace.size()) throw std::invalid_argument("edit must keep the length");
  auto pos = bytes.find(find);
  if (pos == std::string::npos) throw std::runtime_error(std::string(find) + " not found");
  bytes.replace(pos, replace.size(), replace);
  return bytes;
}

void copyWithEdit(const fs::path& from, const fs::path& to, std::string_view find,
                  std::string_view replace) {
  writeFile(to, withEdit(readFile(from), find, replace));
}

bool isMapped(const fs::path& file) {
  const std::string maps = readFile("/proc/self/maps");
  return maps.find(fs::absolute(file).lexically_normal().string()) != std::string::npos;
}

std::string TempDir::write(std::string_view name, std::string_view text) const {
  writeFile(path_ / name, text);
  return (path_ / name).string();
}

}  // namespace plugboard::testing
