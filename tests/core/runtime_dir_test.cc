// Runtime directories: made with an owner record, and removed only when their owner is gone.
#include "core/manifests/runtime_dir.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "tests/support/files.h"

namespace plugboard::core {
namespace {

namespace fs = std::filesystem;
using plugboard::testing::TempDir;

std::string ownerLine(const fs::path& dir) {
  std::ifstream in(dir / ".owner");
  std::string line;
  std::getline(in, line);
  return line;
}

// A runtime directory whose .owner holds `line`.
fs::path fakeDir(const TempDir& tmp, const std::string& suffix, const std::string& line) {
  const fs::path dir = tmp / ("plugboard-runtime-" + suffix);
  fs::create_directory(dir);
  std::ofstream(dir / ".owner") << line << "\n";
  std::ofstream(dir / "1-hello.so") << "copy";
  return dir;
}

TEST(RuntimeDirTest, RecordsItsOwnerAndIsNotRemovedWhileItLives) {
  TempDir tmp;
  auto dir = makeRuntimeDir(tmp.path());
  ASSERT_TRUE(dir.ok()) << dir.error().message();
  EXPECT_EQ((fs::status(*dir).permissions() & fs::perms::all), fs::perms::owner_all);
  EXPECT_TRUE(ownerLine(*dir).starts_with(std::to_string(::getpid()) + " "));
  EXPECT_TRUE(removeDeadRuntimeDirs(tmp.path()).empty());
  EXPECT_TRUE(fs::exists(*dir));
}

TEST(RuntimeDirTest, RemovesOnlyTheDirectoriesOfGoneOwners) {
  TempDir tmp;
  auto mine = makeRuntimeDir(tmp.path());
  ASSERT_TRUE(mine.ok());
  std::istringstream fields(ownerLine(*mine));
  std::string pid, start, boot, ns;
  fields >> pid >> start >> boot >> ns;
  // A child that has exited: its pid is free (or reused with another start time).
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  const fs::path exited = fakeDir(tmp, "exited", std::to_string(child) + " 1 " + boot + " " + ns);
  const fs::path reused = fakeDir(tmp, "reused", pid + " 1 " + boot + " " + ns);
  const fs::path old_boot = fakeDir(tmp, "oldboot", pid + " " + start + " another-boot " + ns);
  const fs::path other_ns =
      fakeDir(tmp, "otherns", std::to_string(child) + " 1 " + boot + " pid:[1]");
  const fs::path unknown = fakeDir(tmp, "unknown", "");
  const fs::path live = fakeDir(tmp, "live", pid + " " + start + " " + boot + " " + ns);
  const fs::path other_name = tmp / "something-else";
  fs::create_directory(other_name);

  auto removed = removeDeadRuntimeDirs(tmp.path());
  std::sort(removed.begin(), removed.end());
  EXPECT_EQ(removed, (std::vector<fs::path>{exited, old_boot, reused}));
  for (const auto& kept : {*mine, other_ns, unknown, live, other_name}) {
    EXPECT_TRUE(fs::exists(kept)) << kept;
  }
}

}  // namespace
}  // namespace plugboard::core
