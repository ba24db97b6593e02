#include "core/manifests/catalog.h"

#include <gtest/gtest.h>

#include "tests/support/files.h"
#include "tests/support/paths.h"

namespace plugboard::core {
namespace {

namespace fs = std::filesystem;
using plugboard::testing::copyWithEdit;
using plugboard::testing::fixture;
using plugboard::testing::plugin;
using plugboard::testing::pluginDir;
using plugboard::testing::TempDir;

const CatalogProblem* problemFor(const Catalog& c, const fs::path& file) {
  for (const auto& p : c.problems()) {
    if (p.file == file) return &p;
  }
  return nullptr;
}

TEST(CatalogTest, ListsTheExamplePlugins) {
  auto catalog = Catalog::scan({pluginDir()});
  EXPECT_TRUE(catalog.problems().empty());
  std::vector<std::string> names;
  for (const auto& e : catalog.entries()) names.push_back(e.manifest.name);
  EXPECT_EQ(names, (std::vector<std::string>{"echo", "fail", "hello", "legacy-executor-plugin",
                                             "multi", "sleep"}));
}

TEST(CatalogTest, FindsByNameAliasAndCaseAndArgoSuffix) {
  auto catalog = Catalog::scan({pluginDir()});
  for (const char* key : {"hello", "HELLO", "greeter", "hello-executor-plugin",
                          "Greeter-Executor-Plugin"}) {
    const auto* e = catalog.find(key);
    ASSERT_NE(e, nullptr) << key;
    EXPECT_EQ(e->manifest.name, "hello");
  }
  for (const char* key : {"legacy", "legacy-executor-plugin", "LEGACY"}) {
    const auto* e = catalog.find(key);
    ASSERT_NE(e, nullptr) << key;
    EXPECT_EQ(e->manifest.name, "legacy-executor-plugin");
  }
  EXPECT_EQ(catalog.find("nobody"), nullptr);
  EXPECT_EQ(catalog.find("hell"), nullptr);
}

TEST(CatalogTest, IndexesProvidersAndLegacyPlugins) {
  auto catalog = Catalog::scan({pluginDir()});
  std::vector<std::string> names;
  for (const auto* e : catalog.providers("template.execute")) names.push_back(e->manifest.name);
  EXPECT_EQ(names, (std::vector<std::string>{"echo", "fail", "hello", "sleep"}));
  ASSERT_EQ(catalog.providers("text.count").size(), 1u);
  EXPECT_TRUE(catalog.providers("no.such.rpc").empty());
  ASSERT_EQ(catalog.legacy().size(), 1u);
  EXPECT_EQ(catalog.legacy()[0]->manifest.name, "legacy-executor-plugin");
}

TEST(CatalogTest, KeepsEveryVersionAndResolvesTheHighest) {
  TempDir dir;
  fs::copy_file(plugin("hello"), dir / "hello.so");
  copyWithEdit(plugin("hello"), dir / "hello-1.10.so", R"("version":"1.2.0")", R"("version":"1.9.9")");
  copyWithEdit(plugin("hello"), dir / "hello-2.so", R"("version":"1.2.0")", R"("version":"2.0.0")");
  auto catalog = Catalog::scan({dir.path()});
  ASSERT_EQ(catalog.entries().size(), 3u);
  EXPECT_EQ(catalog.find("hello")->manifest.version.text(), "2.0.0");
  EXPECT_EQ(catalog.find("hello", "1")->manifest.version.text(), "1.9.9");
  EXPECT_EQ(catalog.find("hello", "1.2")->manifest.version.text(), "1.2.0");
  EXPECT_EQ(catalog.find("hello", "1.2.0")->file, dir / "hello.so");
  EXPECT_EQ(catalog.find("hello", "3"), nullptr);
  EXPECT_EQ(catalog.providers("hello.greet").size(), 1u);  // one entry per plugin
}

TEST(CatalogTest, RefusesBothFilesOfADuplicateNameAndVersion) {
  TempDir dir;
  fs::copy_file(plugin("hello"), dir / "a.so");
  fs::copy_file(plugin("hello"), dir / "b.so");
  fs::copy_file(plugin("echo"), dir / "echo.so");
  auto catalog = Catalog::scan({dir.path()});
  EXPECT_EQ(catalog.find("hello"), nullptr);
  EXPECT_NE(catalog.find("echo"), nullptr);
  const auto* a = problemFor(catalog, dir / "a.so");
  const auto* b = problemFor(catalog, dir / "b.so");
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_NE(a->message.find((dir / "b.so").string()), std::string::npos) << a->message;
  EXPECT_NE(b->message.find((dir / "a.so").string()), std::string::npos) << b->message;
  EXPECT_NE(a->message.find("neither file is used"), std::string::npos);
}

TEST(CatalogTest, NamesEachBadFileAndItsReasonAndKeepsTheRest) {
  TempDir dir;
  fs::copy_file(plugin("hello"), dir / "hello.so");
  plugboard::testing::writeFile(dir / "text.so", "just text");
  const std::string whole = plugboard::testing::readFile(plugin("echo"));
  plugboard::testing::writeFile(dir / "truncated.so", std::string_view(whole).substr(0, 2000));
  fs::create_symlink(dir / "missing-target.so", dir / "dangling.so");
  for (const char* name : {"no_manifest", "bad_json", "no_name", "abi_future", "crash_on_load"}) {
    fs::copy_file(fixture(name), dir / (std::string(name) + ".so"));
  }
  plugboard::testing::writeFile(dir / "README.txt", "not a plugin, not looked at");

  auto catalog = Catalog::scan({dir.path()});
  EXPECT_NE(catalog.find("hello"), nullptr);
  // The plugin whose initializer aborts is listed: reading it ran none of its code.
  EXPECT_NE(catalog.find("crash-on-load"), nullptr);

  const std::vector<std::pair<const char*, const char*>> expected = {
      {"text.so", "not an ELF file"},
      {"truncated.so", "truncated"},
      {"dangling.so", "cannot open"},
      {"no_manifest.so", "no plugboard manifest"},
      {"bad_json.so", "not valid JSON"},
      {"no_name.so", "no 'name'"},
      {"abi_future.so", "built for plugboard ABI 2, this runtime supports ABI 1"},
  };
  for (const auto& [file, reason] : expected) {
    const auto* p = problemFor(catalog, dir / file);
    ASSERT_NE(p, nullptr) << file;
    EXPECT_NE(p->message.find(reason), std::string::npos) << file << ": " << p->message;
    EXPECT_EQ(p->oneLine().find('\n'), std::string::npos);
  }
  EXPECT_EQ(catalog.problems().size(), expected.size());
}

TEST(CatalogTest, ReportsAMissingDirectory) {
  TempDir dir;
  auto catalog = Catalog::scan({dir / "nope", pluginDir()});
  ASSERT_EQ(catalog.problems().size(), 1u);
  EXPECT_NE(catalog.problems()[0].message.find("cannot read plugin directory"), std::string::npos);
  EXPECT_NE(catalog.find("hello"), nullptr);
}

}  // namespace
}  // namespace plugboard::core
