// The launcher in-process: placement, trust on registry artifacts, the cache of started
// plugins, and serve's registry plugins (core/launch/registry_plugins.h), with the deployers built
// in this tree and real plugin files.
#include "core/launch/launcher.h"

#include <gtest/gtest.h>

#include "core/launch/registry_plugins.h"
#include "core/runtime/config.h"
#include "core/runtime/runtime.h"
#include "tests/support/files.h"
#include "tests/support/launch.h"
#include "tests/support/paths.h"

namespace plugboard::core {
namespace {

namespace fs = std::filesystem;
using plugboard::testing::deployerDir;
using plugboard::testing::fixture;
using plugboard::testing::isMapped;
using plugboard::testing::plugin;
using plugboard::testing::TempDir;

class LauncherTest : public ::testing::Test {
 protected:
  // A launcher over this tree's deployers with `registry_text` as its registry (if any).
  std::shared_ptr<Launcher> make(const std::string& registry_text = "", Config config = {},
                                 bool keep_started = true) {
    config.deployer_dirs = {deployerDir()};
    if (!registry_text.empty()) config.registry = dir_.write("registry.toml", registry_text);
    auto made = makeLauncher(config, keep_started);
    EXPECT_TRUE(made.ok()) << made.error().message();
    return std::move(*made);
  }
  const Catalog& catalog() {
    if (!catalog_) {
      fs::create_directories(dir_ / "plugins");
      for (const char* name : {"echo", "hello"})
        fs::copy_file(plugin(name), dir_ / "plugins" / (std::string(name) + ".so"));
      catalog_ = std::make_unique<Catalog>(Catalog::scan({dir_ / "plugins"}));
    }
    return *catalog_;
  }

  TempDir dir_;
  std::unique_ptr<Catalog> catalog_;
};

TEST_F(LauncherTest, APluginDirectoryPluginRunsInProcessUnlessDeploySaysOtherwise) {
  auto launcher = make();
  auto target = launcher->place(*catalog().find("echo"));
  ASSERT_TRUE(target.ok()) << target.error().message();
  EXPECT_EQ(target->deployer->manifest.name, "native");
  EXPECT_EQ(target->kind, "native");
  EXPECT_EQ(target->artifact["path"], (dir_ / "plugins/echo.so").string());

  Config config;
  config.plugin_deploy["echo"] = Placement{"process", {{"memory", "256M"}}};
  // The target points into the launcher's deployers: the launcher must outlive it.
  auto configured = make("", config);
  auto placed = configured->place(*catalog().find("echo"));
  ASSERT_TRUE(placed.ok()) << placed.error().message();
  EXPECT_EQ(placed->deployer->manifest.name, "process");
  EXPECT_EQ(placed->options["memory"], "256M");
}

TEST_F(LauncherTest, TheStarEntryOfDeployPlacesEveryPluginWithoutOneOfItsOwn) {
  auto config = parseConfig("[deploy]\n\"*\" = \"process\"\necho = \"native\"\n", "cfg.toml");
  ASSERT_TRUE(config.ok()) << config.error().message();
  auto launcher =
      make("[plugins.pyonly.\"1.0.0\"]\npython = { module = \"m\", path = \".\" }\n", *config);
  auto hello = launcher->place(*catalog().find("hello"));
  ASSERT_TRUE(hello.ok()) << hello.error().message();
  EXPECT_EQ(hello->deployer->manifest.name, "process");
  auto echo = launcher->place(*catalog().find("echo"));  // its own entry wins
  ASSERT_TRUE(echo.ok()) << echo.error().message();
  EXPECT_EQ(echo->deployer->manifest.name, "native");
  // A step's own deployer still comes first.
  auto own = launcher->place(PluginRef{"hello", "", "native", Json::object()}, &catalog());
  ASSERT_TRUE(own.ok()) << own.error().message();
  EXPECT_EQ(own->deployer->manifest.name, "native");
  // A plugin with no artifact the "*" deployer runs keeps the default order.
  auto python = launcher->place(PluginRef{"pyonly", "", "", Json::object()}, &catalog());
  ASSERT_TRUE(python.ok()) << python.error().message();
  EXPECT_EQ(python->deployer->manifest.name, "python");
}

TEST_F(LauncherTest, AStepsOwnDeployerComesFirstAndBadChoicesSayWhy) {
  Config config;
  config.plugin_deploy["echo"] = Placement{"process", Json::object()};
  auto launcher = make("", config);
  auto own = launcher->place(PluginRef{"echo", "", "native", Json::object()}, &catalog());
  ASSERT_TRUE(own.ok()) << own.error().message();
  EXPECT_EQ(own->deployer->manifest.name, "native");

  auto unknown = launcher->place(PluginRef{"echo", "", "teleport", Json::object()}, &catalog());
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message().find("no deployer 'teleport' (installed deployers: "),
            std::string::npos);
  auto bad_option = launcher->place(PluginRef{"echo", "", "process", {{"nope", 1}}}, &catalog());
  ASSERT_FALSE(bad_option.ok());
  EXPECT_NE(bad_option.error().message().find("has no option 'nope'"), std::string::npos);
  auto missing = launcher->place(PluginRef{"ghost", "", "", Json::object()}, &catalog());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message(),
            "'ghost' is neither in the registry nor in the plugin directories");

  Config gone;
  gone.plugin_deploy["echo"] = Placement{"vanished", Json::object()};
  auto configured = make("", gone)->place(*catalog().find("echo"));
  ASSERT_FALSE(configured.ok());
  EXPECT_NE(configured.error().message().find(
                "configured to run through deployer 'vanished', which is not installed"),
            std::string::npos);
}

TEST_F(LauncherTest, PlacesAPluginOnlyTheRegistryKnowsThroughTheDeployerOfItsArtifact) {
  auto launcher = make("[plugins.pyonly.\"1.0.0\"]\npython = { module = \"m\", path = \".\" }\n");
  auto py = launcher->place(PluginRef{"pyonly", "", "", Json::object()}, &catalog());
  ASSERT_TRUE(py.ok()) << py.error().message();
  EXPECT_EQ(py->deployer->manifest.name, "python");
}

// A plugin in both the plugin directory and the registry runs through a deployer of any
// of its artifacts, whichever way it is reached: by a step's reference, or as the catalog's
// entry.
TEST_F(LauncherTest, APluginOfBothSourcesRunsThroughTheDeployerOfAnyOfItsArtifacts) {
  const std::string registry =
      "[plugins.hello.\"1.2.0\"]\npython = { module = \"hello\", path = \".\" }\n";
  auto launcher = make(registry);
  auto process = launcher->place(PluginRef{"hello", "", "process", Json::object()}, &catalog());
  ASSERT_TRUE(process.ok()) << process.error().message();
  EXPECT_EQ(process->kind, "native");
  EXPECT_EQ(process->artifact["path"], (dir_ / "plugins/hello.so").string());
  ASSERT_NE(process->expected, nullptr);  // the file's manifest, which the plugin must report
  EXPECT_EQ(process->expected->name, "hello");
  auto python = launcher->place(PluginRef{"hello", "1.2.0", "python", Json::object()}, &catalog());
  ASSERT_TRUE(python.ok()) << python.error().message();
  EXPECT_EQ(python->kind, "python");
  EXPECT_EQ(python->expected, nullptr);  // a Python module's manifest is its own
  // By default the native file, in-process, as before.
  auto plain = launcher->place(PluginRef{"hello", "", "", Json::object()}, &catalog());
  ASSERT_TRUE(plain.ok()) << plain.error().message();
  EXPECT_EQ(plain->deployer->manifest.name, "native");

  // The catalog's entry, placed by [deploy] on its registry artifact.
  Config config;
  config.plugin_deploy["hello"] = Placement{"python", Json::object()};
  auto configured = make(registry, config);
  auto entry = configured->place(*catalog().find("hello"));
  ASSERT_TRUE(entry.ok()) << entry.error().message();
  EXPECT_EQ(entry->deployer->manifest.name, "python");
  EXPECT_EQ(entry->expected, nullptr);
}

TEST_F(LauncherTest, ANativeRegistryArtifactIsCheckedWithTheConfiguredTrustPolicy) {
  fs::copy_file(plugin("echo"), dir_ / "open.so");
  fs::permissions(dir_ / "open.so", fs::perms(0664));
  const std::string registry = "[plugins.echo.\"1.0.0\"]\nnative = \"open.so\"\n";
  auto refused = make(registry)->place(PluginRef{"echo", "", "native", Json::object()}, nullptr);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(
      refused.error().message().find("open.so: refused: file is writable by group (mode 0664)"),
      std::string::npos)
      << refused.error().message();

  Config lax;
  lax.trust.strict = false;
  auto launcher = make(registry, lax);
  auto accepted = launcher->place(PluginRef{"echo", "", "native", Json::object()}, nullptr);
  ASSERT_TRUE(accepted.ok()) << accepted.error().message();
  auto started = launcher->start(*accepted);
  ASSERT_TRUE(started.ok()) << started.error().message();
  EXPECT_EQ((*started)->handle->manifest().name, "echo");
}

TEST_F(LauncherTest, APluginIsStartedOnceAndSharedWhileKept) {
  auto launcher = make();
  const CatalogEntry& echo = *catalog().find("echo");
  auto first = launcher->open(echo, PluginSource::file());
  auto second = launcher->open(echo, PluginSource::file());
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(first->get(), second->get());
  // The same content under another path is the same plugin too (by digest).
  fs::copy_file(plugin("echo"), dir_ / "echo-copy.so");
  auto target = launcher->place(echo);
  target->artifact["path"] = (dir_ / "echo-copy.so").string();
  auto copy = launcher->start(*target);
  ASSERT_TRUE(copy.ok());
  EXPECT_EQ(copy->get(), first->get());
}

TEST_F(LauncherTest, ServeKeepsAStartedPluginOnlyWhileItIsHeld) {
  auto launcher = make("", {}, /*keep_started=*/false);
  const fs::path file = dir_ / "plugins/echo.so";
  {
    auto held = launcher->open(*catalog().find("echo"), PluginSource::file());
    ASSERT_TRUE(held.ok()) << held.error().message();
    EXPECT_TRUE(isMapped(file));
  }
  EXPECT_FALSE(isMapped(file));  // unloaded once nobody holds it
  auto again = launcher->open(*catalog().find("echo"), PluginSource::file());
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(isMapped(file));
}

TEST_F(LauncherTest, AManifestThatDiffersFromTheFilesIsRefused) {
  auto launcher = make();
  // An entry whose manifest says another version than the file it names.
  CatalogEntry entry = *catalog().find("echo");
  auto manifest = parseManifest(
      plugboard::testing::withEdit(entry.manifest.text, entry.manifest.version.text(), "9.9.9"));
  ASSERT_TRUE(manifest.ok()) << manifest.error().message();
  entry.manifest = *manifest;
  // Refused before it is loaded: the file it opens is read again, and is not that plugin.
  auto opened = launcher->open(entry, PluginSource::file());
  ASSERT_FALSE(opened.ok());
  EXPECT_NE(opened.error().message().find("echo.so: the plugin file changed since it was read"),
            std::string::npos)
      << opened.error().message();
}

// serve's plugins from the registry: started when a generation is built, started again
// when their file changes, and a broken change keeps the version started before.
TEST_F(LauncherTest, RegistryPluginsFollowTheirFiles) {
  const fs::path file = dir_ / "reg-echo.so";
  fs::copy_file(plugin("echo"), file);
  auto launcher =
      make("[plugins.echo.\"1.0.0\"]\nnative = \"reg-echo.so\"\n", {}, /*keep_started=*/false);
  RegistryPlugins plugins(*launcher, dir_ / "registry.toml", *launcher->registry());
  std::vector<CatalogEntry> entries;
  PluginSources sources;
  std::vector<CatalogProblem> problems;
  plugins.addEntries(entries, sources, problems);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_TRUE(problems.empty());
  EXPECT_EQ(entries[0].manifest.name, "echo");
  // Its source holds the started plugin: opening it starts nothing.
  ASSERT_EQ(sources.of(entries[0]).kind, PluginSource::Kind::kStarted);
  auto first = launcher->open(entries[0], sources.of(entries[0]));
  ASSERT_TRUE(first.ok());
  EXPECT_FALSE(plugins.changed());

  // A plugin directory that holds echo takes precedence: nothing is added for it.
  std::vector<CatalogEntry> with_echo = {*catalog().find("echo")};
  std::vector<CatalogProblem> none;
  plugins.addEntries(with_echo, sources, none);
  EXPECT_EQ(with_echo.size(), 1u);

  // A broken change: the file is no plugin any more (replaced, as an installer replaces
  // files: the loaded one stays mapped); the version started before serves on.
  std::vector<CatalogEntry> again;
  plugins.addEntries(again, sources, problems);  // echo is wanted again
  plugboard::testing::writeFile(dir_ / "broken.so", "not an ELF file");
  fs::rename(dir_ / "broken.so", file);
  EXPECT_TRUE(plugins.changed());
  std::vector<CatalogEntry> broken;
  PluginSources broken_sources;
  std::vector<CatalogProblem> broken_problems;
  plugins.addEntries(broken, broken_sources, broken_problems);
  ASSERT_EQ(broken.size(), 1u);
  ASSERT_EQ(broken_problems.size(), 1u);
  EXPECT_NE(broken_problems[0].message.find("the version started before keeps serving"),
            std::string::npos)
      << broken_problems[0].message;
  EXPECT_EQ(launcher->open(broken[0], broken_sources.of(broken[0]))->get(), first->get());

  // Mended: started again, a new plugin.
  fs::remove(file);
  fs::copy_file(plugin("echo"), file);
  std::vector<CatalogEntry> mended;
  std::vector<CatalogProblem> mended_problems;
  plugins.addEntries(mended, sources, mended_problems);
  ASSERT_EQ(mended.size(), 1u);
  EXPECT_TRUE(mended_problems.empty());
  EXPECT_NE(launcher->open(mended[0], sources.of(mended[0]))->get(), first->get());
}

}  // namespace
}  // namespace plugboard::core
