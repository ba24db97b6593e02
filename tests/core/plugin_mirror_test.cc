// Private copies of plugin files for hot-loading, on real plugin files in temp dirs.
#include "core/manifests/plugin_mirror.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "tests/support/files.h"
#include "tests/support/paths.h"

namespace plugboard::core {
namespace {

namespace fs = std::filesystem;
using plugboard::testing::plugin;
using plugboard::testing::readFile;
using plugboard::testing::TempDir;
using plugboard::testing::withEdit;
using plugboard::testing::writeFile;

unsigned modeOf(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
  return st.st_mode & 07777;
}

class PluginMirrorTest : public ::testing::Test {
 protected:
  PluginMirrorTest() {
    fs::create_directory(plugins_);
    auto mirror = PluginMirror::create(dir_.path());
    EXPECT_TRUE(mirror.ok()) << mirror.error().message();
    mirror_ = std::move(*mirror);
  }

  // Puts `bytes` in place as plugins/hello.so with `mode`, as an installer does: written
  // beside it, then renamed over it.
  void install(const std::string& bytes, fs::perms mode = fs::perms(0644)) {
    writeFile(dir_ / "staging.so", bytes);
    fs::permissions(dir_ / "staging.so", mode);
    fs::rename(dir_ / "staging.so", hello_);
  }
  static std::string helloVersion(const char* version) {
    return withEdit(readFile(plugin("hello")), R"("version":"1.2.0")",
                    std::string(R"("version":")") + version + "\"");
  }
  MirrorState sync() { return mirror_->sync({plugins_}, TrustPolicy{}); }

  TempDir dir_;
  const fs::path plugins_ = dir_ / "plugins";
  const fs::path hello_ = plugins_ / "hello.so";
  std::unique_ptr<PluginMirror> mirror_;
};

TEST_F(PluginMirrorTest, ANewFileIsCopiedIntoAPrivateDirectory) {
  EXPECT_EQ(modeOf(mirror_->directory()), 0700u);
  EXPECT_EQ(mirror_->directory().parent_path(), dir_.path());
  install(helloVersion("1.2.0"));
  MirrorState state = sync();
  ASSERT_EQ(state.entries.size(), 1u);
  const CatalogEntry& e = state.entries[0].entry;
  const fs::path e_copy = state.entries[0].copy->path();
  EXPECT_EQ(e.manifest.name, "hello");
  EXPECT_EQ(e.file, hello_);
  EXPECT_EQ(e_copy.parent_path(), mirror_->directory());
  EXPECT_EQ(readFile(e_copy), readFile(hello_));
  EXPECT_EQ(modeOf(e_copy), 0500u);
  ASSERT_EQ(state.changes.size(), 1u);
  EXPECT_EQ(state.changes[0].name, "hello");
  EXPECT_EQ(state.changes[0].old_version, "");
  EXPECT_EQ(state.changes[0].new_version, "1.2.0");
  EXPECT_TRUE(state.problems.empty());
  // Nothing changed: no new copy, no change reported.
  MirrorState again = sync();
  ASSERT_EQ(again.entries.size(), 1u);
  EXPECT_EQ(again.entries[0].copy->path(), e_copy);
  EXPECT_TRUE(again.changes.empty());
}

TEST_F(PluginMirrorTest, AChangedFileGetsANewCopyAndTheOldStaysUntilReleased) {
  install(helloVersion("1.2.0"));
  auto first = std::make_unique<MirrorState>(sync());
  const fs::path old_copy = first->entries.at(0).copy->path();
  install(helloVersion("1.3.0"));
  MirrorState second = sync();
  ASSERT_EQ(second.entries.size(), 1u);
  EXPECT_EQ(second.entries[0].entry.manifest.version.text(), "1.3.0");
  EXPECT_NE(second.entries[0].copy->path(), old_copy);
  ASSERT_EQ(second.changes.size(), 1u);
  EXPECT_EQ(second.changes[0].old_version, "1.2.0");
  EXPECT_EQ(second.changes[0].new_version, "1.3.0");
  EXPECT_TRUE(fs::exists(old_copy)) << "the old version's calls still use it";
  first.reset();  // the last entry that refers to the old copy
  EXPECT_FALSE(fs::exists(old_copy));
  EXPECT_TRUE(fs::exists(second.entries[0].copy->path()));
}

TEST_F(PluginMirrorTest, AFileRefusedByTheTrustRulesKeepsThePreviousCopyAndIsReported) {
  install(helloVersion("1.2.0"));
  const fs::path copy = sync().entries.at(0).copy->path();
  install(helloVersion("1.3.0"), fs::perms(0666));
  MirrorState state = sync();
  ASSERT_EQ(state.entries.size(), 1u);
  EXPECT_EQ(state.entries[0].entry.manifest.version.text(), "1.2.0");
  EXPECT_EQ(state.entries[0].copy->path(), copy);
  EXPECT_TRUE(state.changes.empty());
  ASSERT_EQ(state.problems.size(), 1u);
  EXPECT_EQ(state.problems[0].file, hello_);
  EXPECT_NE(state.problems[0].message.find("writable by"), std::string::npos)
      << state.problems[0].message;
  // Fixed: the new version is taken.
  install(helloVersion("1.3.0"));
  MirrorState fixed = sync();
  EXPECT_EQ(fixed.entries.at(0).entry.manifest.version.text(), "1.3.0");
  EXPECT_TRUE(fixed.problems.empty());
}

TEST_F(PluginMirrorTest, AFileWithoutAValidManifestKeepsThePreviousCopyAndIsReported) {
  install(helloVersion("1.2.0"));
  const fs::path copy = sync().entries.at(0).copy->path();
  install("not a plugin at all");
  MirrorState state = sync();
  ASSERT_EQ(state.entries.size(), 1u);
  EXPECT_EQ(state.entries[0].entry.manifest.version.text(), "1.2.0");
  EXPECT_EQ(state.entries[0].copy->path(), copy);
  EXPECT_TRUE(fs::exists(copy));
  ASSERT_EQ(state.problems.size(), 1u);
  EXPECT_EQ(state.problems[0].file, hello_);
  // The refused file's own copy is not left behind.
  std::size_t copies = 0;
  for (const auto& f : fs::directory_iterator(mirror_->directory())) {
    if (!f.path().filename().string().starts_with(".")) ++copies;  // not the .owner record
  }
  EXPECT_EQ(copies, 1u);
}

TEST_F(PluginMirrorTest, ARemovedFileIsRemoved) {
  install(helloVersion("1.2.0"));
  auto first = std::make_unique<MirrorState>(sync());
  const fs::path copy = first->entries.at(0).copy->path();
  fs::remove(hello_);
  MirrorState state = sync();
  EXPECT_TRUE(state.entries.empty());
  ASSERT_EQ(state.changes.size(), 1u);
  EXPECT_EQ(state.changes[0].name, "hello");
  EXPECT_EQ(state.changes[0].old_version, "1.2.0");
  EXPECT_EQ(state.changes[0].new_version, "");
  first.reset();
  EXPECT_FALSE(fs::exists(copy));
}

TEST_F(PluginMirrorTest, TheDirectoryGoesWithTheMirror) {
  install(helloVersion("1.2.0"));
  const fs::path dir = mirror_->directory();
  ASSERT_EQ(sync().entries.size(), 1u);
  mirror_.reset();
  EXPECT_FALSE(fs::exists(dir));
}

// No writable runtime directory (here: its parent does not exist): the copies are sealed
// memfds, loaded as /proc/self/fd/N, that nobody can write, and that close with the last
// entry that refers to them.
TEST_F(PluginMirrorTest, WithoutAWritableDirectoryTheCopiesAreSealedInMemory) {
  auto created = PluginMirror::create(dir_ / "absent");
  ASSERT_TRUE(created.ok()) << created.error().message();
  std::unique_ptr<PluginMirror> mirror = std::move(*created);
  EXPECT_TRUE(mirror->directory().empty());
  EXPECT_FALSE(fs::exists(dir_ / "absent"));
  install(helloVersion("1.2.0"));
  auto first = std::make_unique<MirrorState>(mirror->sync({plugins_}, TrustPolicy{}));
  ASSERT_EQ(first->entries.size(), 1u);
  const fs::path copy = first->entries[0].copy->path();
  EXPECT_TRUE(copy.string().starts_with("/proc/self/fd/")) << copy;
  EXPECT_EQ(first->entries[0].entry.manifest.version.text(), "1.2.0");
  EXPECT_EQ(readFile(copy), readFile(hello_));
  EXPECT_EQ(modeOf(copy), 0500u);
  EXPECT_TRUE(fs::read_symlink(copy).string().starts_with("/memfd:plugboard:")) << copy;
  const int fd = std::stoi(copy.filename().string());
  EXPECT_EQ(::fcntl(fd, F_GET_SEALS), F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL);
  EXPECT_EQ(::fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC) << "a child would inherit it";
  const int writer = ::open(copy.c_str(), O_WRONLY);  // as root, whom no mode stops
  if (writer >= 0) {
    EXPECT_LT(::write(writer, "x", 1), 0) << "the sealed copy was written";
    ::close(writer);
  }
  // A new version gets a copy of its own; the old one closes with its last entry.
  install(helloVersion("1.3.0"));
  MirrorState second = mirror->sync({plugins_}, TrustPolicy{});
  ASSERT_EQ(second.entries.size(), 1u);
  EXPECT_EQ(second.entries[0].entry.manifest.version.text(), "1.3.0");
  EXPECT_NE(second.entries[0].copy->path(), copy);
  EXPECT_NE(::fcntl(fd, F_GETFD), -1) << "the old version's calls still use it";
  first.reset();
  EXPECT_EQ(::fcntl(fd, F_GETFD), -1);
  EXPECT_EQ(readFile(second.entries[0].copy->path()), readFile(hello_));
}

}  // namespace
}  // namespace plugboard::core
