// The trust rule for symbolic links, through the real binary: a link that lives in, or leads
// through, a directory another user may write is refused, for plugin files, Python files
// and registry files alike; and what is loaded is what was checked, even while another
// user flips a link as fast as it can (the race tests: the attacker's code would leave a
// mark, and it never does).
//
// Tests run as root; the attacker is nobody (a child process that drops to uid 65534).
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/support/files.h"
#include "tests/support/paths.h"
#include "tests/support/subprocess.h"

namespace plugboard::testing {
namespace {

namespace fs = std::filesystem;

constexpr uid_t kNobody = 65534;
constexpr int kFlips = 1000;

class TrustLinksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root, to act as another user";
    fs::permissions(dir_.path(), fs::perms(0755));  // the attacker may reach ww/
    genuine_ = directory("genuine");
    fs::copy_file(plugin("echo"), genuine_ / "echo.so");
    // The attacker's own files, in a directory of its own.
    evil_ = directory("evil");
    fs::copy_file(fixture("impostor"), evil_ / "impostor.so");
    writeFile(evil_ / "evil.py", pythonText(attackerMark(), "evil"));
    for (const fs::path& p : {evil_, evil_ / "impostor.so", evil_ / "evil.py"}) {
      ASSERT_EQ(::chown(p.c_str(), kNobody, kNobody), 0);
    }
    ww_ = directory("ww", 0777);
    plugins_ = directory("plugins");
  }

  RunResult plugboard(std::vector<std::string> args) {
    args.insert(args.begin(), binary().string());
    RunOptions options;
    options.env = {"PLUGBOARD_IMPOSTOR_MARK=" + attackerMark().string()};
    return run(args, options);
  }
  fs::path directory(const std::string& name, unsigned mode = 0755) {
    const fs::path d = dir_.path() / name;
    fs::create_directories(d);
    fs::permissions(d, fs::perms(mode));
    return d;
  }
  // A Python plugin that leaves `mark` when it is imported.
  static std::string pythonText(const fs::path& mark, const std::string& name) {
    return "import plugboard_sdk as pb\nopen(r'" + mark.string() +
           "', 'a').close()\n\n@pb.plugin(name='" + name +
           "', version='1.0.0', provides=['template.execute'])\n"
           "def run(request):\n    return pb.succeeded({'ran': 'yes'})\n";
  }
  fs::path attackerMark() const { return dir_.path() / "attacker-ran"; }
  fs::path genuineMark() const { return dir_.path() / "genuine-ran"; }
  // A Python plugin `evil` whose file is py/evil.py -> ../ww/evil.py -> ../genuine/evil.py.
  void pythonThroughWw() {
    writeFile(genuine_ / "evil.py", pythonText(genuineMark(), "evil"));
    fs::permissions(genuine_ / "evil.py", fs::perms(0644));
    const fs::path py = directory("py");
    fs::create_symlink("../genuine/evil.py", ww_ / "evil.py");
    fs::create_symlink("../ww/evil.py", py / "evil.py");
    dir_.write("registry.toml", "[plugins.evil.\"1.0.0\"]\npython = { path = \"py/evil.py\" }\n");
  }
  RunResult runPython() {
    const std::string wf =
        dir_.write("wf.toml",
                   "name = \"wf\"\n[[steps]]\nid = \"s\"\nplugin = \"evil\"\nargs = { name = \"x\" "
                   "}\ndeploy = { deployer = \"python\", mode = \"embedded\" }\n");
    return plugboard({"run", wf, "--plugins", plugins_.string(), "--registry",
                      (dir_.path() / "registry.toml").string()});
  }
  static void expectRefused(const RunResult& r, const std::string& refusal) {
    EXPECT_NE(r.exit_code, 0) << r.out << r.err;
    EXPECT_NE((r.out + r.err).find(refusal), std::string::npos) << r.out << r.err;
  }
  std::string wwRefusal(const fs::path& link) const {
    return "directory " + ww_.string() + " above it (through the link " + link.string() +
           ") is writable by others (mode 0777); run chmod o-w " + ww_.string();
  }

  // Forks the attacker: as nobody, it renames a fresh link over `link` kFlips times, its
  // target alternating between `a` and `b`. Returns its pid.
  static pid_t startFlipper(const fs::path& link, const std::string& a, const std::string& b) {
    const std::string target = link.string(), fresh = link.string() + ".new";
    const pid_t pid = ::fork();
    if (pid != 0) return pid;
    if (::setgroups(0, nullptr) != 0 || ::setresgid(kNobody, kNobody, kNobody) != 0 ||
        ::setresuid(kNobody, kNobody, kNobody) != 0) {
      ::_exit(2);
    }
    const timespec pause{0, 2'000'000};
    for (int i = 0; i < kFlips; ++i) {
      ::unlink(fresh.c_str());
      if (::symlink((i % 2 ? a : b).c_str(), fresh.c_str()) != 0 ||
          ::rename(fresh.c_str(), target.c_str()) != 0) {
        ::_exit(3);
      }
      ::nanosleep(&pause, nullptr);
    }
    ::_exit(0);
  }
  // Runs `attempt` over and over while the attacker flips; returns how many rounds ran.
  template <class Attempt>
  int whileFlipping(pid_t flipper, Attempt attempt) {
    int rounds = 0, status = 0;
    while (::waitpid(flipper, &status, WNOHANG) == 0) {
      attempt();
      ++rounds;
    }
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "the attacker could not flip the link: " << status;
    return rounds;
  }
  std::string marked() const {
    return fs::exists(attackerMark()) ? readFile(attackerMark()) : std::string();
  }

  TempDir dir_;
  fs::path genuine_, evil_, ww_, plugins_;
};

TEST_F(TrustLinksTest, ANativePluginLinkedThroughADirectoryOthersMayWriteIsRefused) {
  fs::create_symlink("../genuine/echo.so", ww_ / "echo.so");
  fs::create_symlink("../ww/echo.so", plugins_ / "echo.so");
  expectRefused(plugboard({"call", "echo", "--plugins", plugins_.string()}),
                wwRefusal(plugins_ / "echo.so"));
  fs::permissions(ww_, fs::perms(0755));
  const auto r = plugboard({"call", "echo", "--plugins", plugins_.string()});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

TEST_F(TrustLinksTest, ALinkAnotherUserOwnsInAStickyDirectoryIsRefused) {
  const fs::path sticky = directory("sticky", 01777);
  fs::create_symlink("../genuine/echo.so", sticky / "echo.so");
  ASSERT_EQ(::lchown((sticky / "echo.so").c_str(), kNobody, kNobody), 0);
  fs::create_symlink("../sticky/echo.so", plugins_ / "echo.so");
  expectRefused(plugboard({"call", "echo", "--plugins", plugins_.string()}),
                (sticky / "echo.so").string() + " is owned by nobody in directory " +
                    sticky.string() + ", which others may write (mode 1777)");
  // Root's own link there is one others may not replace, as sshd accepts /tmp.
  ASSERT_EQ(::lchown((sticky / "echo.so").c_str(), 0, 0), 0);
  const auto r = plugboard({"call", "echo", "--plugins", plugins_.string()});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

TEST_F(TrustLinksTest, APythonFileLinkedThroughADirectoryOthersMayWriteIsRefused) {
  pythonThroughWw();
  expectRefused(runPython(), wwRefusal(dir_.path() / "py/evil.py"));
  EXPECT_FALSE(fs::exists(genuineMark()));
  fs::permissions(ww_, fs::perms(0755));
  const auto r = runPython();
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(fs::exists(genuineMark()));
}

TEST_F(TrustLinksTest, ARegistryFileLinkedThroughADirectoryOthersMayWriteIsRefused) {
  writeFile(genuine_ / "registry.toml", "");
  fs::permissions(genuine_ / "registry.toml", fs::perms(0644));
  fs::create_symlink("../genuine/registry.toml", ww_ / "registry.toml");
  const fs::path registry = dir_.path() / "registry.toml";
  fs::create_symlink("ww/registry.toml", registry);
  fs::copy_file(plugin("echo"), plugins_ / "echo.so");
  const std::vector<std::string> args = {"call",       "echo", "--plugins", plugins_.string(),
                                         "--registry", registry.string()};
  expectRefused(plugboard(args), registry.string() + ": refused: " + wwRefusal(registry));
  fs::permissions(ww_, fs::perms(0755));
  const auto r = plugboard(args);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

TEST_F(TrustLinksTest, AFlippedLinkNeverLoadsTheAttackersPlugin) {
  fs::create_symlink("../genuine/echo.so", ww_ / "echo.so");
  fs::create_symlink("../ww/echo.so", plugins_ / "echo.so");
  const std::string in_child = dir_.write("plugboard.toml", "[deploy]\necho = \"process\"\n");
  const pid_t flipper = startFlipper(ww_ / "echo.so", "../genuine/echo.so", "../evil/impostor.so");
  const int rounds = whileFlipping(flipper, [&] {
    plugboard({"call", "echo", "--plugins", plugins_.string()});
    plugboard({"call", "echo", "--plugins", plugins_.string(), "--config", in_child});
  });
  EXPECT_FALSE(fs::exists(attackerMark())) << "in " << rounds << " rounds: " << marked();
}

TEST_F(TrustLinksTest, APinnedPluginIsLoadedFromTheFileWhoseDigestWasChecked) {
  // With the mode checks off, only the pin stands between the attacker and root: the digest
  // is checked on the descriptor the plugin is then loaded from.
  fs::create_symlink("../genuine/echo.so", ww_ / "echo.so");
  fs::create_symlink("../ww/echo.so", plugins_ / "echo.so");
  const auto sum = run({"sha256sum", (genuine_ / "echo.so").string()});
  ASSERT_EQ(sum.exit_code, 0);
  const std::string config =
      dir_.write("plugboard.toml", "[trust]\nstrict = false\n[trust.pins]\necho = \"" +
                                       sum.out.substr(0, 64) + "\"\n");
  const auto r = plugboard({"call", "echo", "--plugins", plugins_.string(), "--config", config});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  const pid_t flipper = startFlipper(ww_ / "echo.so", "../genuine/echo.so", "../evil/impostor.so");
  const int calls = whileFlipping(flipper, [&] {
    plugboard({"call", "echo", "--plugins", plugins_.string(), "--config", config});
  });
  EXPECT_FALSE(fs::exists(attackerMark())) << "in " << calls << " calls: " << marked();
}

TEST_F(TrustLinksTest, AFlippedLinkNeverRunsTheAttackersPythonFile) {
  pythonThroughWw();
  const pid_t flipper = startFlipper(ww_ / "evil.py", "../genuine/evil.py", "../evil/evil.py");
  const int runs = whileFlipping(flipper, [&] { runPython(); });
  EXPECT_FALSE(fs::exists(attackerMark())) << "in " << runs << " runs";
}

}  // namespace
}  // namespace plugboard::testing
