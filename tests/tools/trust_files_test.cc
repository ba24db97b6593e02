// The trust rules for every kind of file that becomes code, through the real binary: the
// configuration file, registry files, Python plugins (module, package, bytecode, the
// directory on sys.path), interpreters and virtual environments the configuration names,
// plugin files given to the process deployer, the program that serves them, image
// archives, deployer modules and plugin directories (every directory above each one).
// Tests run as root here, so root-owned files are trusted: refusals come from modes that
// let group or others write, or from files given to another user.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "tests/support/files.h"
#include "tests/support/paths.h"
#include "tests/support/subprocess.h"

namespace plugboard::testing {
namespace {

namespace fs = std::filesystem;

constexpr uid_t kNobody = 65534;

class TrustFilesTest : public ::testing::Test {
 protected:
  RunResult plugboard(std::vector<std::string> args) {
    args.insert(args.begin(), binary().string());
    return run(args, "");
  }
  // A directory `name` in the test's directory with `mode`, and its path.
  fs::path directory(const std::string& name, unsigned mode = 0755) {
    const fs::path d = dir_ / name;
    fs::create_directories(d);
    fs::permissions(d, fs::perms(mode));
    return d;
  }
  // A Python plugin `name` whose import leaves a mark, so a test can tell that it never ran.
  fs::path pythonPlugin(const fs::path& file, const std::string& name) {
    writeFile(file, "import plugboard_sdk as pb\nopen(r'" + mark().string() +
                        "', 'w').close()\n\n@pb.plugin(name='" + name +
                        "', version='1.0.0', provides=['template.execute'])\n"
                        "def run(request):\n    return pb.succeeded({'ran': 'yes'})\n");
    fs::permissions(file, fs::perms(0644));
    return file;
  }
  fs::path mark() const { return dir_ / "imported"; }
  std::string registry(const std::string& text) { return dir_.write("registry.toml", text); }
  // A workflow of one step running `plugin` with `deploy` (none when empty).
  std::string workflow(const std::string& plugin, const std::string& deploy) {
    return dir_.write("wf.toml", "name = \"wf\"\n[[steps]]\nid = \"s\"\nplugin = \"" + plugin +
                                     "\"\nargs = { name = \"x\" }\n" +
                                     (deploy.empty() ? "" : "deploy = " + deploy + "\n"));
  }
  RunResult runStep(const std::string& plugin, const std::string& deploy,
                    std::vector<std::string> more = {}) {
    std::vector<std::string> args = {"run",        workflow(plugin, deploy),
                                     "--plugins",  pluginDir().string(),
                                     "--registry", (dir_ / "registry.toml").string()};
    args.insert(args.end(), more.begin(), more.end());
    return plugboard(args);
  }
  // Expects `r` to have failed with `refusal` in its output.
  static void expectRefused(const RunResult& r, const std::string& refusal) {
    EXPECT_NE(r.exit_code, 0) << r.out << r.err;
    EXPECT_NE((r.out + r.err).find(refusal), std::string::npos) << r.out << r.err;
  }

  TempDir dir_;
};

TEST_F(TrustFilesTest, AConfigurationFileOthersMayWriteIsRefusedEvenIfItSwitchesTheChecksOff) {
  const std::string config = dir_.write("plugboard.toml", "[trust]\nstrict = false\n");
  fs::permissions(config, fs::perms(0666));
  const auto r =
      plugboard({"plugins", "list", "--config", config, "--plugins", pluginDir().string()});
  expectRefused(
      r, config + ": refused: file is writable by others (mode 0666); run chmod o-w " + config);
  fs::permissions(config, fs::perms(0644));
  const auto fixed =
      plugboard({"plugins", "list", "--config", config, "--plugins", pluginDir().string()});
  EXPECT_EQ(fixed.exit_code, 0) << fixed.out << fixed.err;
}

TEST_F(TrustFilesTest, ARegistryFileOthersMayWriteIsRefused) {
  const fs::path py = directory("py");
  pythonPlugin(py / "evil.py", "evil");
  registry("[plugins.evil.\"1.0.0\"]\npython = { module = \"evil\", path = \"py\" }\n");
  fs::permissions(dir_ / "registry.toml", fs::perms(0666));
  const std::string file = (dir_ / "registry.toml").string();
  expectRefused(runStep("evil", "{ deployer = \"python\", mode = \"embedded\" }"),
                file + ": refused: file is writable by others (mode 0666); run chmod o-w " + file);
  EXPECT_FALSE(fs::exists(mark()));
  // The same registry, once only its owner may write it, runs the plugin.
  fs::permissions(file, fs::perms(0644));
  const auto r = runStep("evil", "{ deployer = \"python\", mode = \"embedded\" }");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(fs::exists(mark()));
}

TEST_F(TrustFilesTest, APythonModuleOthersMayWriteIsNeverImportedInEitherMode) {
  const fs::path py = directory("py");
  const fs::path module = pythonPlugin(py / "evil.py", "evil");
  fs::permissions(module, fs::perms(0666));
  registry("[plugins.evil.\"1.0.0\"]\npython = { module = \"evil\", path = \"py\" }\n");
  for (const char* mode : {"embedded", "process"}) {
    expectRefused(
        runStep("evil", std::string("{ deployer = \"python\", mode = \"") + mode + "\" }"),
        module.string() + ": refused: file is writable by others (mode 0666)");
  }
  EXPECT_FALSE(fs::exists(mark()));
}

TEST_F(TrustFilesTest, ThePythonFileOfAnArtifactAndTheDirectoryAboveItAreChecked) {
  // The case as reported: registry, module and directory all writable by everyone.
  const fs::path open = directory("open", 0777);
  const fs::path module = pythonPlugin(open / "evil.py", "evil");
  registry("[plugins.evil.\"1.0.0\"]\npython = { path = \"open/evil.py\" }\n");
  expectRefused(runStep("evil", "{ deployer = \"python\", mode = \"embedded\" }"),
                module.string() + ": refused: directory " + open.string() +
                    " above it is writable by others (mode 0777); run chmod o-w " + open.string());
  EXPECT_FALSE(fs::exists(mark()));
}

TEST_F(TrustFilesTest, EveryFileOfAPythonPackageIsChecked) {
  const fs::path package = directory("py/evilpkg");
  pythonPlugin(package / "__init__.py", "evil");
  writeFile(package / "helper.py", "x = 1\n");
  fs::permissions(package / "helper.py", fs::perms(0664));
  registry("[plugins.evil.\"1.0.0\"]\npython = { module = \"evilpkg\", path = \"py\" }\n");
  expectRefused(runStep("evil", "{ deployer = \"python\", mode = \"process\" }"),
                package.string() + ": refused: file " + (package / "helper.py").string() +
                    " is writable by group (mode 0664)");
  EXPECT_FALSE(fs::exists(mark()));
}

TEST_F(TrustFilesTest, BytecodeOfAPythonModuleIsChecked) {
  if (geteuid() != 0) GTEST_SKIP() << "only root can give a file away";
  const fs::path py = directory("py");
  pythonPlugin(py / "evil.py", "evil");
  const fs::path cache = directory("py/__pycache__");
  writeFile(cache / "evil.cpython-311.pyc", "not bytecode");
  ASSERT_EQ(::chown((cache / "evil.cpython-311.pyc").c_str(), kNobody, kNobody), 0);
  registry("[plugins.evil.\"1.0.0\"]\npython = { module = \"evil\", path = \"py\" }\n");
  expectRefused(runStep("evil", "{ deployer = \"python\", mode = \"embedded\" }"),
                (cache / "evil.cpython-311.pyc").string() +
                    ": refused: file is owned by nobody, not by root; run chown root");
  EXPECT_FALSE(fs::exists(mark()));
}

TEST_F(TrustFilesTest, AnInterpreterTheConfigurationNamesIsChecked) {
  const fs::path open = directory("bin", 0777);
  fs::create_symlink("/usr/bin/python3", open / "python3");
  const fs::path py = directory("py");
  pythonPlugin(py / "evil.py", "evil");
  registry("[plugins.evil.\"1.0.0\"]\npython = { module = \"evil\", path = \"py\" }\n");
  const std::string config = dir_.write(
      "plugboard.toml", "[deployers.python]\npython = \"" + (open / "python3").string() + "\"\n");
  expectRefused(runStep("evil", "{ deployer = \"python\" }", {"--config", config}),
                (open / "python3").string() + ": refused: directory " + open.string() +
                    " above it is writable by others (mode 0777)");
  EXPECT_FALSE(fs::exists(mark()));
}

TEST_F(TrustFilesTest, TheStartUpFilesOfAVirtualEnvironmentAreChecked) {
  const fs::path venv = directory("venv");
  directory("venv/bin");
  fs::create_symlink("/usr/bin/python3", venv / "bin/python");
  writeFile(venv / "pyvenv.cfg", "home = /usr/bin\ninclude-system-site-packages = false\n");
  const fs::path site = directory("venv/lib/python3.11/site-packages");
  writeFile(site / "hook.pth", "import os\n");
  fs::permissions(site / "hook.pth", fs::perms(0666));
  const fs::path py = directory("py");
  pythonPlugin(py / "evil.py", "evil");
  registry("[plugins.evil.\"1.0.0\"]\npython = { module = \"evil\", path = \"py\" }\n");
  // The virtual environment is the configuration's to name, never a step's.
  const std::vector<std::string> config = {
      "--config", dir_.write("plugboard.toml", "[deploy]\nevil = { deployer = \"python\", venv = \"" +
                                                   venv.string() + "\" }\n")};
  expectRefused(runStep("evil", "", config),
                (site / "hook.pth").string() + ": refused: file is writable by others (mode 0666)");
  EXPECT_FALSE(fs::exists(mark()));
  fs::permissions(site / "hook.pth", fs::perms(0644));
  const auto r = runStep("evil", "", config);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(fs::exists(mark()));
}

TEST_F(TrustFilesTest, APluginFileForTheProcessDeployerIsCheckedWithTheDirectoriesAboveIt) {
  const fs::path open = directory("open", 0777);
  directory("open/lib");
  fs::copy_file(plugin("hello"), open / "lib/hello.so");
  registry("[plugins.hello.\"9.0.0\"]\nnative = \"open/lib/hello.so\"\n");
  expectRefused(runStep("hello", "\"process\""), (open / "lib/hello.so").string() +
                                                     ": refused: directory " + open.string() +
                                                     " above it is writable by others (mode 0777)");
}

TEST_F(TrustFilesTest, InspectLoadsNoFileBelowADirectoryOthersMayWrite) {
  const fs::path open = directory("open", 0777);
  directory("open/lib");
  fs::copy_file(plugin("hello"), open / "lib/hello.so");
  const auto r = plugboard({"inspect", (open / "lib/hello.so").string(), "--load"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("refused:     directory " + open.string() + " above it"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("load:        not loaded: the file failed the trust checks"),
            std::string::npos)
      << r.out;
}

TEST_F(TrustFilesTest, TheProgramThatServesAProcessPluginIsChecked) {
  const fs::path bin = directory("bin");
  fs::copy_file(buildDir() / "plugboard-host", bin / "plugboard-host");
  fs::permissions(bin / "plugboard-host", fs::perms(0775));
  const std::string config =
      dir_.write("plugboard.toml",
                 "[deployers.process]\nhost = \"" + (bin / "plugboard-host").string() + "\"\n");
  registry("");
  expectRefused(
      runStep("hello", "\"process\"", {"--config", config}),
      (bin / "plugboard-host").string() + ": refused: file is writable by group (mode 0775)");
  fs::permissions(bin / "plugboard-host", fs::perms(0755));
  const auto r = runStep("hello", "\"process\"", {"--config", config});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

TEST_F(TrustFilesTest, AnImageArchiveIsCheckedBeforePodmanReadsIt) {
  if (!fs::exists("/usr/bin/podman")) GTEST_SKIP() << "podman is not installed";
  const fs::path archive = dir_ / "hello.tar";
  writeFile(archive, "not read");
  fs::permissions(archive, fs::perms(0666));
  registry("[plugins.hello.\"9.0.0\"]\ncontainer = { image = \"oci-archive:" + archive.string() +
           "\" }\n");
  expectRefused(runStep("hello", "\"container\""),
                archive.string() + ": refused: file is writable by others (mode 0666)");
}

TEST_F(TrustFilesTest, DeployerModulesBelowADirectoryOthersMayWriteAreRefused) {
  const fs::path open = directory("open", 0777);
  const fs::path deployers = directory("open/deployers");
  fs::copy_file(deployerDir() / "process.so", deployers / "process.so");
  registry("");
  expectRefused(runStep("hello", "\"process\"", {"--deployers", deployers.string()}),
                deployers.string() + ": refused: directory " + open.string() +
                    " above it is writable by others (mode 0777)");
}

TEST_F(TrustFilesTest, PluginDirectoriesAreCheckedUpToTheRootAndStickyDirectoriesPass) {
  const fs::path open = directory("open", 0777);
  const fs::path plugins = directory("open/plugins");
  fs::copy_file(plugin("hello"), plugins / "hello.so");
  auto r = plugboard({"call", "hello", "--plugins", plugins.string()});
  expectRefused(r, "directory " + open.string() + " above it is writable by others (mode 0777)");
  // Sticky and owned by root, like /tmp: others may add entries but not replace ours.
  fs::permissions(open, fs::perms(01777));
  r = plugboard({"call", "hello", "--plugins", plugins.string()});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

TEST_F(TrustFilesTest, APinnedPythonFileMustHaveItsDigestAndADirectoryCannotBePinned) {
  const fs::path py = directory("py");
  pythonPlugin(py / "evil.py", "evil");
  const std::string wrong(64, '0');
  const std::string config =
      dir_.write("plugboard.toml", "[trust.pins]\nevil = \"" + wrong + "\"\n");
  registry("[plugins.evil.\"1.0.0\"]\npython = { path = \"py/evil.py\" }\n");
  expectRefused(runStep("evil", "{ deployer = \"python\" }", {"--config", config}),
                "but the config pins 'evil' to " + wrong);
  registry("[plugins.evil.\"1.0.0\"]\npython = { module = \"evil\", path = \"py\" }\n");
  expectRefused(runStep("evil", "{ deployer = \"python\" }", {"--config", config}),
                "is pinned ('evil'), but its python artifact is a directory");
  EXPECT_FALSE(fs::exists(mark()));
}

}  // namespace
}  // namespace plugboard::testing
