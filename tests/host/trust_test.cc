// The host kit's trust rules (plugboard/host/trust.h), linked alone as a deployer links
// them: directories above a file, sticky directories, links, trees and the rules a
// deployer receives in an artifact.
#include "plugboard/host/trust.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include "tests/support/files.h"

namespace plugboard::host {
namespace {

namespace fs = std::filesystem;
using plugboard::testing::TempDir;
using plugboard::testing::writeFile;

constexpr uid_t kNobody = 65534;

class HostTrustTest : public ::testing::Test {
 protected:
  fs::path directory(const std::string& name, unsigned mode = 0755) {
    const fs::path d = dir_ / name;
    fs::create_directories(d);
    fs::permissions(d, fs::perms(mode));
    return d;
  }
  fs::path file(const std::string& name, unsigned mode = 0644) {
    const fs::path f = dir_ / name;
    writeFile(f, "code");
    fs::permissions(f, fs::perms(mode));
    return f;
  }
  static std::string why(const Status& st) { return st ? "accepted" : st.error().message(); }
  TempDir dir_;
};

TEST_F(HostTrustTest, AcceptsAFileWhoseDirectoriesOnlyTrustedUsersMayWrite) {
  directory("a/b");
  EXPECT_EQ(why(checkFile(file("a/b/x.so"), {})), "accepted");
}

TEST_F(HostTrustTest, RefusesAFileBelowADirectoryOthersMayWriteNamingThatDirectory) {
  const fs::path open = directory("open", 0777);
  directory("open/deep");
  const fs::path f = file("open/deep/x.so");
  const Status st = checkFile(f, {});
  EXPECT_EQ(st.error().code(), Error::Code::kUntrusted);
  EXPECT_EQ(why(st), "directory " + open.string() +
                         " above it is writable by others (mode 0777); run chmod o-w " +
                         open.string());
  EXPECT_EQ(why(checkFile(f, {.strict = false, .owners = {}})), "accepted");
}

TEST_F(HostTrustTest, AStickyDirectoryAbovePassesOnlyWhenATrustedUserOwnsIt) {
  const fs::path sticky = directory("sticky", 01777);
  directory("sticky/mine");
  const fs::path f = file("sticky/mine/x.so");
  EXPECT_EQ(why(checkFile(f, {})), "accepted");
  // The directory holding the file itself gets no such allowance.
  fs::permissions(dir_ / "sticky/mine", fs::perms(01777));
  EXPECT_EQ(why(checkDirectory(dir_ / "sticky/mine", {})),
            "directory is writable by others (mode 1777); run chmod o-w " +
                (dir_ / "sticky/mine").string());
  if (geteuid() != 0) return;  // only root can give a directory away
  fs::permissions(dir_ / "sticky/mine", fs::perms(0755));
  ASSERT_EQ(::chown(sticky.c_str(), kNobody, kNobody), 0);
  EXPECT_NE(
      why(checkFile(f, {}))
          .find("directory " + sticky.string() + " above it is writable by others (mode 1777)"),
      std::string::npos);
  EXPECT_EQ(why(checkFile(f, {.strict = true, .owners = {kNobody}})), "accepted");
}

TEST_F(HostTrustTest, ALinkIsCheckedWhereItLeads) {
  const fs::path open = directory("open", 0777);
  directory("open/lib");
  const fs::path target = file("open/lib/x.so");
  directory("safe");
  fs::create_symlink(target, dir_ / "safe/x.so");
  EXPECT_NE(why(checkFile(dir_ / "safe/x.so", {})).find("directory " + open.string() + " above it"),
            std::string::npos);
}

TEST_F(HostTrustTest, ATreeNamesTheEntryThatIsRefused) {
  directory("pkg/sub");
  file("pkg/__init__.py");
  const fs::path bad = file("pkg/sub/mod.py", 0666);
  EXPECT_EQ(
      why(checkTree(dir_ / "pkg", {}, "package directory")),
      "file " + bad.string() + " is writable by others (mode 0666); run chmod o-w " + bad.string());
  fs::permissions(bad, fs::perms(0644));
  fs::permissions(dir_ / "pkg/sub", fs::perms(0775));
  EXPECT_EQ(why(checkTree(dir_ / "pkg", {}, "package directory")),
            "directory " + (dir_ / "pkg/sub").string() +
                " is writable by group (mode 0775); run chmod g-w " + (dir_ / "pkg/sub").string());
  fs::permissions(dir_ / "pkg/sub", fs::perms(0755));
  EXPECT_EQ(why(checkTree(dir_ / "pkg", {}, "package directory")), "accepted");
}

// A link in a tree is checked where it leads: a refused file is named by the entry (the
// fix by the file it leads to), a refused directory on the way by that directory.
TEST_F(HostTrustTest, ATreeNamesTheLinkedEntryThatIsRefused) {
  directory("pkg");
  directory("elsewhere");
  const fs::path target = file("elsewhere/mod.py", 0666);
  fs::create_symlink(target, dir_ / "pkg/mod.py");
  EXPECT_EQ(why(checkTree(dir_ / "pkg", {}, "package directory")),
            "file " + (dir_ / "pkg/mod.py").string() +
                " is writable by others (mode 0666); run chmod o-w " + target.string());
  fs::permissions(target, fs::perms(0644));
  fs::permissions(dir_ / "elsewhere", fs::perms(0777));
  const std::string refused = why(checkTree(dir_ / "pkg", {}, "package directory"));
  EXPECT_EQ(refused.find("file "), std::string::npos) << refused;
  EXPECT_NE(refused.find("directory " + (dir_ / "elsewhere").string()), std::string::npos)
      << refused;
  fs::permissions(dir_ / "elsewhere", fs::perms(0755));
  EXPECT_EQ(why(checkTree(dir_ / "pkg", {}, "package directory")), "accepted");
}

TEST_F(HostTrustTest, AnArtifactCarriesTheRulesAndTheirAbsenceIsStrict) {
  EXPECT_TRUE(rulesOf(nlohmann::json::object()).strict);
  EXPECT_TRUE(rulesOf(nlohmann::json{{"trust", "off"}}).strict);
  const TrustRules lax{.strict = false, .owners = {kNobody}};
  const TrustRules read = rulesOf(nlohmann::json{{"path", "/x"}, {kTrustMember, lax.toJson()}});
  EXPECT_FALSE(read.strict);
  EXPECT_EQ(read.owners, std::vector<uid_t>{kNobody});
}

TEST_F(HostTrustTest, ARefusalNamesTheFile) {
  const fs::path f = file("x.so", 0664);
  EXPECT_EQ(
      why(refusal(f, checkFile(f, {}))),
      f.string() + ": refused: file is writable by group (mode 0664); run chmod g-w " + f.string());
  EXPECT_TRUE(refusal(f, Status::Ok()).ok());
}

}  // namespace
}  // namespace plugboard::host
