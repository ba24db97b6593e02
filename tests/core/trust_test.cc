#include "core/manifests/trust.h"

#include <unistd.h>

#include <gtest/gtest.h>
#include <plugboard/host/sha256.h>

#include "core/manifests/catalog.h"
#include "core/manifests/elf_section.h"
#include "core/manifests/file_handle.h"
#include "tests/support/files.h"
#include "tests/support/paths.h"
#include "tests/support/subprocess.h"

namespace plugboard::core {
namespace {

namespace fs = std::filesystem;
using plugboard::testing::plugin;
using plugboard::testing::TempDir;

class TrustTest : public ::testing::Test {
 protected:
  fs::path install(const char* name, fs::perms mode = fs::perms(0644)) {
    const fs::path file = dir_ / (std::string(name) + ".so");
    fs::copy_file(plugin(name), file);
    fs::permissions(file, mode);
    return file;
  }
  std::string refusal(const fs::path& file, const TrustPolicy& policy = {}) {
    auto entry = readPluginFile(file, policy);
    if (entry.ok()) return "accepted";
    EXPECT_EQ(entry.error().code(), Error::Code::kUntrusted) << entry.error().message();
    return entry.error().message();
  }
  TempDir dir_;
};

TEST_F(TrustTest, AcceptsAFileOnlyItsOwnerMayWrite) {
  EXPECT_EQ(refusal(install("hello")), "accepted");
}

TEST_F(TrustTest, RefusesAFileOthersMayWriteAndSaysHowToFixIt) {
  const auto file = install("hello", fs::perms(0666));
  EXPECT_EQ(refusal(file),
            "file is writable by others (mode 0666); run chmod o-w " + file.string());
}

TEST_F(TrustTest, RefusesAGroupWritableFile) {
  const auto file = install("hello", fs::perms(0664));
  EXPECT_EQ(refusal(file), "file is writable by group (mode 0664); run chmod g-w " + file.string());
}

TEST_F(TrustTest, RefusesAFileOwnedBySomeoneElse) {
  if (geteuid() != 0) GTEST_SKIP() << "only root can give a file away";
  const auto file = install("hello");
  ASSERT_EQ(::chown(file.c_str(), 65534, 65534), 0);
  EXPECT_NE(refusal(file).find("file is owned by nobody, not by root; run chown root "),
            std::string::npos);
  TrustPolicy allow;
  allow.extra_owners = {65534};
  EXPECT_EQ(refusal(file, allow), "accepted");
}

TEST_F(TrustTest, ChecksTheOpenedFileNotTheLinkToIt) {
  const auto target = install("echo", fs::perms(0666));
  fs::create_directory(dir_ / "plugins");
  fs::create_symlink(target, dir_ / "plugins/link.so");  // the link itself is 0777
  EXPECT_NE(refusal(dir_ / "plugins/link.so").find("mode 0666"), std::string::npos);
  fs::permissions(target, fs::perms(0644));
  EXPECT_EQ(refusal(dir_ / "plugins/link.so"), "accepted");
}

TEST_F(TrustTest, RefusesEveryFileOfAWritableDirectory) {
  install("hello");
  install("echo");
  fs::permissions(dir_.path(), fs::perms(0777));
  auto catalog = Catalog::scan({dir_.path()});
  EXPECT_TRUE(catalog.entries().empty());
  ASSERT_EQ(catalog.problems().size(), 1u);
  EXPECT_EQ(catalog.problems()[0].oneLine(),
            dir_.path().string() +
                ": refused: plugin directory is writable by others (mode 0777); "
                "run chmod o-w " +
                dir_.path().string());
  fs::permissions(dir_.path(), fs::perms(0700));
}

TEST_F(TrustTest, StrictModesCanBeTurnedOff) {
  TrustPolicy lax;
  lax.strict = false;
  EXPECT_EQ(refusal(install("hello", fs::perms(0666)), lax), "accepted");
}

TEST_F(TrustTest, Sha256MatchesTheSystemTool) {
  const auto file = install("hello");
  auto handle = FileHandle::open(file);
  ASSERT_TRUE(handle.ok());
  auto digest = host::sha256File(handle->fd());
  ASSERT_TRUE(digest.ok());
  auto tool = plugboard::testing::run({"sha256sum", file.string()});
  EXPECT_EQ(tool.out.substr(0, 64), host::hexOf(*digest));
}

TEST_F(TrustTest, PinsAcceptTheirDigestAndRefuseAnother) {
  const auto file = install("hello");
  auto handle = FileHandle::open(file);
  ASSERT_TRUE(handle.ok());
  const std::string digest = host::hexOf(*host::sha256File(handle->fd()));
  TrustPolicy pinned;
  pinned.pins["hello"] = digest;
  EXPECT_EQ(refusal(file, pinned), "accepted");
  pinned.pins["hello"] = std::string(64, '0');
  EXPECT_EQ(refusal(file, pinned), "plugin 'hello' 1.2.0 in " + file.string() + " has SHA-256 " +
                                       digest + ", but the config pins 'hello' to " +
                                       std::string(64, '0') +
                                       "; reinstall the plugin or update the pin");
  // A pin for one version leaves the others alone.
  TrustPolicy other_version;
  other_version.pins["hello@9.9.9"] = std::string(64, '0');
  EXPECT_EQ(refusal(file, other_version), "accepted");
}

}  // namespace
}  // namespace plugboard::core
