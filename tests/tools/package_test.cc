// The Debian packages tools/package.sh builds (the CTest fixture package_build makes them
// from this build tree into <build>/test-packages): unpacked into a temporary root, the
// CLI there finds its deployers and the system plugin directory without flags and runs the
// hello workflow; every file is in an FHS location; lintian reports no errors; the
// installed bash completion completes commands and the bundled plugins' names, and zsh's
// and fish's are installed beside it; the man pages cite the installed documentation.
// InstalledPackageTest installs them with apt in a throw-away copy of this machine's root
// (podman's overlay of /, discarded at the end): the shipped examples run from the package
// alone, serve runs as the service would (its own user, its configuration, the runtime
// directory the only place it writes), the unit verifies and is disabled, and remove and
// purge leave nothing behind.
#include <algorithm>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/completion.h"
#include "tests/support/files.h"
#include "tests/support/paths.h"
#include "tests/support/run_report.h"
#include "tests/support/subprocess.h"

namespace plugboard::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

fs::path packageDir() { return buildDir() / "test-packages"; }

// The .deb files of the package named `name` in packageDir(): exactly one is expected.
fs::path deb(const std::string& name) {
  std::vector<fs::path> found;
  for (const auto& entry : fs::directory_iterator(packageDir())) {
    const auto file = entry.path().filename().string();
    if (file.starts_with(name + "_") && file.ends_with(".deb")) found.push_back(entry.path());
  }
  EXPECT_EQ(found.size(), 1u) << name;
  return found.empty() ? fs::path() : found.front();
}

// Both packages unpacked with dpkg-deb -x into one temporary root, as installing them
// would lay them out.
class PackageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : {"plugboard", "plugboard-dev"}) {
      auto r = run({"dpkg-deb", "-x", deb(name).string(), root_.path().string()});
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
  }
  fs::path usr() const { return root_.path() / "usr"; }
  // The installed CLI with no plugin or deployer directory from the environment.
  RunResult installed(std::vector<std::string> args) const {
    args.insert(args.begin(), (usr() / "bin" / "plugboard").string());
    RunOptions options;
    options.env = {"PLUGBOARD_PLUGINS=", "PLUGBOARD_DEPLOYERS="};
    return run(args, options);
  }

  TempDir root_;
};

TEST_F(PackageTest, TheCliListsTheBundledDeployersAndPluginsWithoutFlags) {
  auto r = installed({"plugins", "list"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Every deployer this tree builds, from the installed deployer directory.
  int deployers = 0;
  for (const auto& entry : fs::directory_iterator(deployerDir())) {
    if (entry.path().extension() != ".so") continue;
    ++deployers;
    const auto file = usr() / "lib" / "plugboard" / "deployers" / entry.path().filename();
    EXPECT_THAT(r.out, HasSubstr(file.string())) << "deployer " << entry.path().filename();
  }
  EXPECT_GE(deployers, 4);
  EXPECT_THAT(r.out, HasSubstr((usr() / "lib" / "plugboard" / "plugins" / "hello.so").string()));
}

TEST_F(PackageTest, TheCliRunsTheHelloWorkflowWithoutFlags) {
  auto r = installed({"run", (sourceDir() / "examples" / "hello.toml").string(), "--output", "json",
                      "--param", "who=Ada"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_THAT(r.out, HasSubstr("Hello, Ada"));
}

// The man pages cite the documentation where the package installs it, every file they cite
// is in the package, each renders without a warning, and no default is the build
// machine's (--parallel's core count).
TEST_F(PackageTest, TheManPagesCiteTheInstalledDocumentation) {
  const auto man = usr() / "share" / "man" / "man1";
  std::string run_page;
  int citations = 0;
  for (const auto& entry : fs::directory_iterator(man)) {
    auto r = run({"zcat", entry.path().string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    if (entry.path().filename() == "plugboard-run.1.gz") run_page = r.out;
    // What the install step wrote renders without a warning from groff.
    TempDir plain;
    auto rendered = run({"groff", "-man", "-Tascii", "-ww", "-P-cbou",
                         plain.write("page.1", r.out)});
    EXPECT_EQ(rendered.exit_code, 0) << entry.path().filename();
    EXPECT_EQ(rendered.err, "") << entry.path().filename();
    // Roff writes a path's hyphens as \-; a cited file ends at a blank, ')' or line end.
    const std::string doc = "/usr/share/doc/plugboard/";
    for (auto at = r.out.find(doc); at != std::string::npos; at = r.out.find(doc, at + 1)) {
      auto end = r.out.find_first_of(" )\n", at);
      std::string path = r.out.substr(at, end - at);
      for (auto dash = path.find("\\-"); dash != std::string::npos; dash = path.find("\\-"))
        path.erase(dash, 1);
      if (path.ends_with(".") || path.ends_with(",")) path.pop_back();
      ++citations;
      EXPECT_TRUE(fs::exists(root_.path() / path.substr(1)))
          << entry.path().filename() << " cites " << path << ", which the package lacks";
    }
    // Every "docs/..." a page cites is the installed one.
    for (auto at = r.out.find("docs/"); at != std::string::npos; at = r.out.find("docs/", at + 1)) {
      EXPECT_TRUE(at >= doc.size() && r.out.compare(at - doc.size(), doc.size(), doc) == 0)
          << entry.path().filename() << ": " << r.out.substr(at > 40 ? at - 40 : 0, 80);
    }
  }
  EXPECT_GE(citations, 3);
  EXPECT_THAT(run_page, HasSubstr("/usr/share/doc/plugboard/docs/configuration.md"));
  const auto parallel = run_page.find("\\fB\\-\\-parallel\\fR");
  ASSERT_NE(parallel, std::string::npos) << run_page;
  EXPECT_EQ(run_page.substr(parallel, run_page.find('\n', parallel) - parallel),
            "\\fB\\-\\-parallel\\fR \\fIarg (=number of cores)\\fR");
}

TEST_F(PackageTest, TheManPagesAndTheCompletionAreInstalled) {
  EXPECT_TRUE(fs::exists(usr() / "share" / "man" / "man1" / "plugboard.1.gz"));
  EXPECT_TRUE(fs::exists(usr() / "share" / "man" / "man1" / "plugboard-run.1.gz"));
  const auto script = usr() / "share" / "bash-completion" / "completions" / "plugboard";
  auto r = complete(script, usr() / "bin", {"plugboard", "ru"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(lines(r.out), ElementsAre("run"));
  // The bundled plugins, found by the installed CLI in its system plugin directory.
  r = complete(script, usr() / "bin", {"plugboard", "call", "he"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(lines(r.out), ElementsAre("hello"));
  // zsh's and fish's, where Debian's zsh and fish look for them (docs_test runs them).
  EXPECT_TRUE(fs::exists(usr() / "share" / "zsh" / "vendor-completions" / "_plugboard"));
  EXPECT_TRUE(fs::exists(usr() / "share" / "fish" / "vendor_completions.d" / "plugboard.fish"));
  // The Python SDK where Debian's python3 imports from.
  EXPECT_TRUE(
      fs::exists(usr() / "lib" / "python3" / "dist-packages" / "plugboard_sdk" / "__init__.py"));
}

// The system plugin directory is a fallback of installed binaries only: the build tree's
// binary has no <prefix>/lib/plugboard/plugins above it, so it still asks for one.
TEST(SystemPluginDirTest, TheBuildTreeStillNeedsAPluginDirectory) {
  RunOptions options;
  options.env = {"PLUGBOARD_PLUGINS=", "PLUGBOARD_DEPLOYERS="};
  auto r = run({binary().string(), "plugins", "list"}, options);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("no plugin directory"));
}

// Every path in both packages is one the FHS gives packages: /usr/bin, /usr/include,
// /usr/lib/<what the package owns>, /usr/lib/python3/dist-packages, /usr/share/{man,doc,
// bash-completion,lintian/overrides}, zsh's and fish's vendor completions, the configuration
// in /etc/plugboard and the unit in /usr/lib/systemd/system; and each package has its copyright
// and changelog.
TEST(PackageContentsTest, EveryFileIsInAnFhsLocation) {
  const std::vector<std::string> allowed = {"./usr/bin/",
                                            "./usr/include/plugboard/",
                                            "./usr/lib/plugboard/",
                                            "./usr/lib/cmake/plugboard/",
                                            "./usr/lib/python3/dist-packages/plugboard_sdk/",
                                            "./usr/share/man/man1/",
                                            "./usr/share/bash-completion/completions/",
                                            "./usr/share/lintian/overrides/",
                                            "./usr/share/zsh/vendor-completions/",
                                            "./usr/share/fish/vendor_completions.d/",
                                            "./usr/share/doc/plugboard/",
                                            "./usr/share/doc/plugboard-dev/",
                                            "./etc/plugboard/plugboard.toml",
                                            "./usr/lib/systemd/system/plugboard.service"};
  std::set<std::string> docs;
  for (const char* name : {"plugboard", "plugboard-dev"}) {
    auto r = run({"dpkg-deb", "-c", deb(name).string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (const auto& line : lines(r.out)) {
      const std::string path = line.substr(line.find("./"));
      bool ok =
          path.ends_with("/") && std::any_of(allowed.begin(), allowed.end(),
                                             [&](const auto& a) { return a.starts_with(path); });
      for (const auto& a : allowed) ok = ok || path.starts_with(a);
      // The host kit's static library: /usr/lib/libplugboard_host.a.
      ok = ok || path == "./usr/lib/libplugboard_host.a";
      EXPECT_TRUE(ok) << name << ": " << path;
      if (path.starts_with("./usr/share/doc/")) docs.insert(path);
    }
  }
  for (const char* name : {"plugboard", "plugboard-dev"}) {
    EXPECT_THAT(docs, Contains(std::string("./usr/share/doc/") + name + "/copyright"));
    EXPECT_THAT(docs, Contains(std::string("./usr/share/doc/") + name + "/changelog.gz"));
  }
}

// No errors and no warnings; what lintian would say otherwise and is overridden is in
// cmake/debian/lintian-overrides, each with its reason.
TEST(PackageContentsTest, LintianReportsNoErrorsOrWarnings) {
  auto r = run({"lintian", "--fail-on", "error,warning", deb("plugboard").string(),
                deb("plugboard-dev").string()});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  for (const auto& line : lines(r.out)) {
    EXPECT_FALSE(line.starts_with("E: ") || line.starts_with("W: ")) << line;
  }
}

// The runtime package's conffile is its configuration, and nothing else.
TEST(PackageContentsTest, TheConfigurationIsAConffile) {
  auto r = run({"dpkg-deb", "--info", deb("plugboard").string(), "conffiles"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(lines(r.out), ElementsAre("/etc/plugboard/plugboard.toml"));
}

// `script`, run by `sh -e` as root in a throw-away copy of this machine's root file system:
// podman's overlay of / (what the script writes is discarded with the container), without a
// network, the packages at /packages. apt installs them from there as it would on this
// machine: every dependency is already installed here.
RunResult inThrowAwayRoot(const std::string& script) {
  const std::string install =
      "export DEBIAN_FRONTEND=noninteractive\n"
      "install_packages() { apt-get install -y -q --no-install-recommends " +
      ("/packages/" + deb("plugboard").filename().string()) + " " +
      ("/packages/" + deb("plugboard-dev").filename().string()) +
      " >/tmp/apt.log 2>&1 || { cat /tmp/apt.log >&2; return 1; }; }\n";
  return run({"podman", "run", "--rm", "--network=none", "--ulimit", "nofile=1024:1024",
              "--ulimit", "nproc=4096:4096", "--volume", packageDir().string() + ":/packages:ro",
              "--rootfs", "/:O", "sh", "-ec", install + script});
}

// The examples shipped in /usr/share/doc/plugboard run with the installed CLI alone, by a
// user who may write nothing there: pipeline.toml (sleep, echo, multi, a polled step) and
// mixed.toml with the shipped registry (Python plugins in a child process and embedded).
TEST(InstalledPackageTest, TheShippedExamplesRunFromThePackageAlone) {
  auto r = inThrowAwayRoot(R"sh(install_packages
cd /
runuser -u nobody -- plugboard run /usr/share/doc/plugboard/examples/pipeline.toml --output json
echo '----'
runuser -u nobody -- plugboard run /usr/share/doc/plugboard/examples/mixed.toml \
  --registry /usr/share/doc/plugboard/examples/registry.toml --output json
)sh");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto split = r.out.find("----\n");
  ASSERT_NE(split, std::string::npos) << r.out;
  const auto pipeline = nlohmann::json::parse(r.out.substr(0, split));
  for (const char* step : {"upper", "count", "nap", "summary", "recount"}) {
    EXPECT_EQ(reportStep(pipeline, step)["phase"], "Succeeded") << step << ": " << pipeline;
  }
  const auto mixed = nlohmann::json::parse(r.out.substr(split + 5));
  ASSERT_FALSE(mixed["steps"].empty()) << mixed;
  for (const auto& step : mixed["steps"]) EXPECT_EQ(step["phase"], "Succeeded") << step;
}

// The service as systemd would run it: the unit verifies, is hardened and is installed
// disabled; its command line serves the configuration /etc/plugboard/plugboard.toml as a
// user of no name (DynamicUser) that may write only the runtime directory
// (TMPDIR=/run/plugboard), and answers a call to a plugin of the system plugin directory.
TEST(InstalledPackageTest, TheServiceIsDisabledVerifiesAndServes) {
  auto r = inThrowAwayRoot(R"sh(install_packages
unit=/usr/lib/systemd/system/plugboard.service
echo "enabled: $(systemctl is-enabled plugboard.service || true)"
systemd-analyze verify "$unit" 2>&1 | sed 's/^/verify: /'
grep -q '^ExecStart=/usr/bin/plugboard serve --config /etc/plugboard/plugboard.toml$' "$unit"
if systemd-analyze security --offline=true --threshold=30 "$unit" >/dev/null 2>&1; then
  echo "exposure: at most 3.0"
else
  systemd-analyze security --offline=true "$unit" 2>&1 | tail -1 | sed 's/^/exposure: /'
fi
mkdir -m 0700 /run/plugboard
chown 61234:61234 /run/plugboard
TMPDIR=/run/plugboard setpriv --reuid=61234 --regid=61234 --clear-groups --no-new-privs \
  plugboard serve --config /etc/plugboard/plugboard.toml 2>/tmp/serve.log &
serve=$!
up=no
for i in $(seq 300); do
  if curl -fsS -o /dev/null http://127.0.0.1:7878/metrics; then up=yes; break; fi
  sleep 0.1
done
echo "up: $up"
curl -sS -X POST -H 'Content-Type: application/json' \
  -d '{"template":{"plugin":{"hello":{"name":"Ada"}}}}' \
  http://127.0.0.1:7878/api/v1/template.execute | sed 's/^/reply: /'
echo
echo "runtime: $(find /run/plugboard -mindepth 1 -maxdepth 1 -user 61234 | wc -l)"
kill -TERM $serve
wait $serve || echo "serve exited $?"
sed 's/^/serve: /' /tmp/serve.log
)sh");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("enabled: disabled\n"));
  // Hardened: systemd's own measure of its exposure (DynamicUser, ProtectSystem=strict, no
  // capabilities, ...) says "OK" (2.8 today; a unit without them is 9.6, "UNSAFE").
  EXPECT_THAT(r.out, HasSubstr("exposure: at most 3.0\n"));
  for (const auto& line : lines(r.out)) EXPECT_FALSE(line.starts_with("verify: ")) << line;
  EXPECT_THAT(r.out, HasSubstr("up: yes\n"));
  EXPECT_THAT(r.out, HasSubstr("Hello, Ada"));
  // Its private copies of the plugins it loaded, in the runtime directory.
  EXPECT_THAT(r.out, HasSubstr("runtime: 1\n"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("serve exited")));
}

// apt remove leaves no bytecode Python wrote beside the packages' Python files (root
// importing the SDKs and the example plugins), and keeps only the conffile; purge then
// leaves the file system as it was before the install, with the unit enabled meanwhile.
// The throw-away root is an overlay of the live one: what other tests' containers change
// meanwhile (podman's images, its network addresses under /var/lib/cni) is not compared.
TEST(InstalledPackageTest, RemoveAndPurgeLeaveNothingBehind) {
  auto r = inThrowAwayRoot(R"sh(snapshot() {
  find /etc /usr /var /opt /srv /home /root -xdev \( -path /var/cache -o -path /var/lib/apt \
    -o -path /var/lib/dpkg -o -path /var/log -o -path /var/tmp -o -path /var/lib/containers \
    -o -path /var/lib/cni -o -path /root/.cache \) -prune -o -print | sort
}
snapshot >/tmp/before
install_packages
python3 -c 'import plugboard_sdk'
PYTHONPATH=/usr/lib/plugboard/python python3 -c 'import plugboard_sdk'
(cd /usr/share/doc/plugboard/plugins/python && python3 -c 'import pyhello')
(cd /usr/share/doc/plugboard/plugins/arcaflow && python3 -c 'import atpkit')
echo "bytecode: $(find /usr -name __pycache__ -path '*plugboard*' | wc -l)"
systemctl enable plugboard.service 2>/dev/null
echo "enabled: $(systemctl is-enabled plugboard.service || true)"
apt-get remove -y -q plugboard plugboard-dev >/tmp/apt.log 2>&1 || { cat /tmp/apt.log; exit 1; }
find /usr -name __pycache__ -path '*plugboard*' | sed 's/^/left after remove: /'
echo "conffile: $(cat /etc/plugboard/plugboard.toml >/dev/null && echo kept)"
dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' plugboard plugboard-dev 2>/dev/null | sed 's/^/state after remove: /'
# plugboard-dev has no conffile, so remove left nothing of it to purge (apt no longer knows it).
apt-get purge -y -q plugboard >/tmp/apt.log 2>&1 || { cat /tmp/apt.log; exit 1; }
snapshot >/tmp/after
diff /tmp/before /tmp/after | sed -n 's/^[<>] /changed by install and purge: &/p'
echo done
)sh");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  // The script made bytecode in each place (so that its absence below means something).
  EXPECT_THAT(r.out, HasSubstr("bytecode: 4\n"));
  EXPECT_THAT(r.out, HasSubstr("enabled: enabled\n"));
  EXPECT_THAT(r.out, HasSubstr("conffile: kept\n"));
  EXPECT_THAT(r.out, HasSubstr("state after remove: rc  plugboard\n"));
  EXPECT_THAT(r.out, HasSubstr("done\n"));
  for (const auto& line : lines(r.out)) {
    EXPECT_FALSE(line.starts_with("left after remove: ")) << line;
    EXPECT_FALSE(line.starts_with("changed by install and purge: ")) << line;
  }
}

}  // namespace
}  // namespace plugboard::testing
