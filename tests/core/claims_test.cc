// The one rule for plugins that claim the same name and version, or the same key.
#include "core/manifests/claims.h"

#include <gtest/gtest.h>

namespace plugboard::core {
namespace {

// A catalog entry for `name` `version` with `aliases`, as if read from dir/<file>.
CatalogEntry entry(const std::string& file, const std::string& name, const std::string& version,
                   const std::string& aliases = "[]") {
  auto m = parseManifest(R"({"name":")" + name + R"(","version":")" + version +
                         R"(","provides":["template.execute"],"aliases":)" + aliases +
                         R"(,"kind":"executor","abi":1})");
  EXPECT_TRUE(m.ok()) << m.error().message();
  return {*m, "/p/" + file, name + "@" + version};
}

Catalog catalogOf(std::vector<CatalogEntry> entries, const Catalog* incumbent = nullptr) {
  return Catalog::fromEntries(std::move(entries), {}, incumbent);
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(ClaimsTest, AnAliasOfTwoPluginsRoutesToNeitherAndNamesBothFiles) {
  const Catalog c = catalogOf({entry("alpha.so", "alpha", "1.0.0", R"(["shared"])"),
                               entry("beta.so", "beta", "1.0.0", R"(["Shared","b"])")});
  EXPECT_EQ(c.find("shared"), nullptr);
  EXPECT_EQ(c.find("SHARED"), nullptr);
  const CatalogConflict* conflict = c.conflictFor("Shared");
  ASSERT_NE(conflict, nullptr);
  EXPECT_EQ(conflict->files, (std::vector<std::filesystem::path>{"/p/alpha.so", "/p/beta.so"}));
  EXPECT_TRUE(conflict->holder.empty());
  EXPECT_TRUE(has(conflict->message,
                  "an alias of plugin 'alpha' (/p/alpha.so) and an alias of "
                  "plugin 'beta' (/p/beta.so); it routes to neither"))
      << conflict->message;
  // Everything else still routes.
  ASSERT_NE(c.find("alpha"), nullptr);
  ASSERT_NE(c.find("b"), nullptr);
  EXPECT_EQ(c.find("b")->manifest.name, "beta");
  EXPECT_EQ(c.entries().size(), 2u);
  EXPECT_TRUE(c.problems().empty());
  EXPECT_EQ(c.conflicts().size(), 1u);
}

TEST(ClaimsTest, AnAliasEqualToAnotherPluginsNameRoutesToNeither) {
  const Catalog c = catalogOf(
      {entry("hello.so", "hello", "1.0.0"), entry("zeta.so", "zeta", "1.0.0", R"(["HELLO"])")});
  EXPECT_EQ(c.find("hello"), nullptr);
  ASSERT_NE(c.conflictFor("hello"), nullptr);
  EXPECT_TRUE(has(c.conflictFor("hello")->message,
                  "'hello' is the name of plugin 'hello' (/p/hello.so) and an alias of plugin "
                  "'zeta' (/p/zeta.so)"));
  EXPECT_EQ(c.find("zeta")->manifest.name, "zeta");
}

TEST(ClaimsTest, TheArgoSuffixAliasClaimsToo) {
  const Catalog c =
      catalogOf({entry("a.so", "foo-executor-plugin", "1.0.0"), entry("b.so", "foo", "1.0.0")});
  EXPECT_EQ(c.find("foo"), nullptr);
  EXPECT_NE(c.conflictFor("foo"), nullptr);
  ASSERT_NE(c.find("foo-executor-plugin"), nullptr);
  EXPECT_EQ(c.find("foo-executor-plugin")->manifest.name, "foo-executor-plugin");
}

TEST(ClaimsTest, OnlyTheHighestVersionsAliasesClaim) {
  const Catalog c = catalogOf({entry("a1.so", "alpha", "1.0.0", R"(["shared"])"),
                               entry("a2.so", "alpha", "2.0.0"),
                               entry("b.so", "beta", "1.0.0", R"(["shared"])")});
  ASSERT_NE(c.find("shared"), nullptr);
  EXPECT_EQ(c.find("shared")->manifest.name, "beta");
  EXPECT_TRUE(c.conflicts().empty());
  EXPECT_EQ(c.find("alpha", "1")->label, "alpha@1.0.0");
}

TEST(ClaimsTest, ThePluginThatHeldAnAliasKeepsIt) {
  const Catalog before = catalogOf({entry("alpha.so", "alpha", "1.0.0", R"(["shared"])")});
  const Catalog after = catalogOf({entry("alpha.so", "alpha", "1.1.0", R"(["shared"])"),
                                   entry("aardvark.so", "aardvark", "1.0.0", R"(["shared"])")},
                                  &before);
  ASSERT_NE(after.find("shared"), nullptr);
  EXPECT_EQ(after.find("shared")->label, "alpha@1.1.0");
  EXPECT_EQ(after.find("aardvark")->label, "aardvark@1.0.0");  // serves under its name
  EXPECT_EQ(after.conflictFor("shared"), nullptr);
  ASSERT_EQ(after.conflicts().size(), 1u);
  const CatalogConflict& c = after.conflicts()[0];
  EXPECT_EQ(c.holder, "alpha");
  EXPECT_EQ(c.files, (std::vector<std::filesystem::path>{"/p/alpha.so", "/p/aardvark.so"}));
  EXPECT_EQ(c.message,
            "'shared' stays an alias of plugin 'alpha' (/p/alpha.so); the claim as an alias of "
            "plugin 'aardvark' (/p/aardvark.so) is refused");
  // And keeps it in the generations after.
  const Catalog later = catalogOf({entry("alpha.so", "alpha", "1.1.0", R"(["shared"])"),
                                   entry("aardvark.so", "aardvark", "1.0.0", R"(["shared"])")},
                                  &after);
  EXPECT_EQ(later.find("shared")->label, "alpha@1.1.0");
  EXPECT_EQ(later.conflicts(), after.conflicts());
}

TEST(ClaimsTest, ANewcomerNamedAfterAHeldAliasIsRefused) {
  const Catalog before = catalogOf({entry("alpha.so", "alpha", "1.0.0", R"(["shared"])")});
  const Catalog after =
      catalogOf({entry("alpha.so", "alpha", "1.0.0", R"(["shared"])"),
                 entry("shared.so", "Shared", "1.0.0"), entry("shared-old.so", "shared", "0.9.0")},
                &before);
  EXPECT_EQ(after.find("shared")->label, "alpha@1.0.0");
  EXPECT_EQ(after.entries().size(), 1u);
  ASSERT_EQ(after.problems().size(), 2u);
  EXPECT_EQ(after.problems()[0].file, "/p/shared-old.so");
  EXPECT_EQ(after.problems()[1].message,
            "plugin 'Shared' is not used: 'shared' is already an alias of plugin 'alpha' "
            "(/p/alpha.so), which keeps it; rename the plugin or remove the alias");
  EXPECT_TRUE(after.conflicts().empty());
}

TEST(ClaimsTest, ANameAndVersionOfTwoFilesIsRefusedForBothWithoutAnIncumbent) {
  const Catalog c = catalogOf({entry("a.so", "hello", "1.0.0"), entry("b.so", "HELLO", "1.0.0"),
                               entry("c.so", "hello", "0.9.0")});
  ASSERT_EQ(c.problems().size(), 2u);
  EXPECT_TRUE(has(c.problems()[0].message, "is also provided by /p/b.so; neither file is used"));
  EXPECT_EQ(c.find("hello")->label, "hello@0.9.0");
}

TEST(ClaimsTest, TheFileThatServedANameAndVersionKeepsIt) {
  const Catalog before = catalogOf({entry("b.so", "hello", "1.0.0")});
  const Catalog after =
      catalogOf({entry("a.so", "hello", "1.0.0"), entry("b.so", "hello", "1.0.0")}, &before);
  ASSERT_EQ(after.entries().size(), 1u);
  EXPECT_EQ(after.find("hello")->file, "/p/b.so");
  ASSERT_EQ(after.problems().size(), 1u);
  EXPECT_EQ(after.problems()[0].oneLine(),
            "/p/a.so: refused: plugin 'hello' 1.0.0 is already served from /p/b.so, which keeps "
            "serving it; this file is not used: remove one");
}

TEST(ClaimsTest, AConflictNobodyHeldRoutesToNeitherAlsoWithAnIncumbent) {
  const Catalog before = catalogOf({entry("x.so", "x", "1.0.0")});
  const Catalog after = catalogOf({entry("alpha.so", "alpha", "1.0.0", R"(["shared"])"),
                                   entry("beta.so", "beta", "1.0.0", R"(["shared"])")},
                                  &before);
  EXPECT_EQ(after.find("shared"), nullptr);
  EXPECT_NE(after.conflictFor("shared"), nullptr);
}

}  // namespace
}  // namespace plugboard::core
