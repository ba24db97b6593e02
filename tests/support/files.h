// tests/support/files.h: temporary directories and plugin-file surgery for tests and
// benchmarks.
#ifndef PLUGBOARD_TESTS_SUPPORT_FILES_H_
#define PLUGBOARD_TESTS_SUPPORT_FILES_H_

#include <filesystem>
#include <string>
#include <string_view>

namespace plugboard::testing {

// A fresh directory under the system temp dir, removed with everything in it on
// destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(std::string_view name) const { return path_ / name; }
  // Writes `text` to the file `name` in the directory and returns its path.
  std::string write(std::string_view name, std::string_view text) const;

 private:
  std::filesystem::path path_;
};

std::string readFile(const std::filesystem::path& file);
void writeFile(const std::filesystem::path& file, std::string_view bytes);

// Returns `bytes` with the first occurrence of `find` replaced by `replace` (of the same
// length). Throws if `find` does not occur.
std::string withEdit(std::string bytes, std::string_view find, std::string_view replace);

// Copies `from` to `to`, replacing the first occurrence of `find` by `replace` (of the same
// length, so that every ELF offset stays valid). Throws if `find` does not occur.
// Used to make plugins with other manifest names or versions from one built plugin.
void copyWithEdit(const std::filesystem::path& from, const std::filesystem::path& to,
                  std::string_view find, std::string_view replace);

// True when `file` (as an absolute path) is mapped into this process.
bool isMapped(const std::filesystem::path& file);

}  // namespace plugboard::testing

#endif  // PLUGBOARD_TESTS_SUPPORT_FILES_H_
