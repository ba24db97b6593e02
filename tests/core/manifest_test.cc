#include "core/manifests/manifest.h"

#include <gtest/gtest.h>

#include "tests/support/deep_json.h"

namespace plugboard::core {
namespace {

std::string errorOf(std::string_view text) {
  auto m = parseManifest(text);
  return m.ok() ? "" : m.error().message();
}

TEST(ManifestTest, ParsesEveryMember) {
  auto m = parseManifest(
      R"({"kind":"executor","name":"hello","version":"1.2.0","abi":1,)"
      R"("provides":["template.execute","hello.greet"],"aliases":["greeter"],)"
      R"("concurrency":"serial","schemas":{"hello.greet":{"input":{"type":"object"}}},)"
      R"("description":"Greets"})");
  ASSERT_TRUE(m.ok()) << m.error().message();
  EXPECT_EQ(m->name, "hello");
  EXPECT_EQ(m->version.text(), "1.2.0");
  EXPECT_EQ(m->abi, 1);
  EXPECT_TRUE(m->providesRpc("hello.greet"));
  EXPECT_FALSE(m->legacy());
  EXPECT_EQ(m->aliases, std::vector<std::string>{"greeter"});
  EXPECT_EQ(m->concurrency, Concurrency::kSerial);
  EXPECT_EQ(m->description, "Greets");
}

TEST(ManifestTest, NoProvidesMeansLegacy) {
  auto m = parseManifest(R"({"kind":"executor","name":"old","version":"0.1.0","abi":1})");
  ASSERT_TRUE(m.ok());
  EXPECT_TRUE(m->legacy());
  EXPECT_EQ(m->concurrency, Concurrency::kParallel);
}

TEST(ManifestTest, IgnoresTrailingNulAndUnknownMembers) {
  std::string text = R"({"kind":"executor","name":"a","version":"1.0.0","abi":1,"future":7})";
  text.push_back('\0');
  EXPECT_TRUE(parseManifest(text).ok());
}

TEST(ManifestTest, ReportsTheFirstProblemByMember) {
  EXPECT_EQ(errorOf("{not json"), "manifest is not valid JSON");
  EXPECT_EQ(errorOf("[1]"), "manifest is not a JSON object");
  EXPECT_EQ(errorOf(R"({"kind":"executor","version":"1.0.0","abi":1})"), "manifest has no 'name'");
  EXPECT_NE(errorOf(R"({"kind":"thing","name":"a","version":"1.0.0","abi":1})").find("'kind'"),
            std::string::npos);
  EXPECT_NE(errorOf(R"({"kind":"executor","name":"a b","version":"1.0.0","abi":1})").find("invalid"),
            std::string::npos);
  EXPECT_NE(errorOf(R"({"kind":"executor","name":"a","version":"one","abi":1})").find("invalid version"),
            std::string::npos);
  EXPECT_NE(errorOf(R"({"kind":"executor","name":"a","version":"1.0.0"})").find("'abi'"),
            std::string::npos);
  EXPECT_NE(errorOf(R"({"kind":"executor","name":"a","version":"1.0.0","abi":1,"provides":"x"})")
                .find("'provides' must be an array"),
            std::string::npos);
  EXPECT_NE(errorOf(R"({"kind":"executor","name":"a","version":"1.0.0","abi":1,"concurrency":"many"})")
                .find("'concurrency'"),
            std::string::npos);
  EXPECT_NE(errorOf(R"({"kind":"executor","name":"a","version":"1.0.0","abi":1,)"
                    R"("provides":["x"],"schemas":{"y":{}}})")
                .find("'provides' does not list"),
            std::string::npos);
}

TEST(ManifestTest, RefusesTwoManifestsInOneSection) {
  std::string two = R"({"kind":"executor","name":"a","version":"1.0.0","abi":1})";
  two.push_back('\0');
  two += two;
  EXPECT_NE(errorOf(two).find("more than one manifest"), std::string::npos);
}

// A number that does not fit an int is refused, never read as another: an ABI of 2^32 + 1
// would otherwise pass for ABI 1 (found by fuzz/elf_manifest.cc).
TEST(ManifestTest, RefusesIntegersAnIntCannotHold) {
  const std::string head = R"({"kind":"deployer","name":"a","version":"1.0.0","deploys":["x"],)";
  EXPECT_EQ(errorOf(head + R"("abi":4294967297})"), "manifest of 'a' has no integer 'abi'");
  EXPECT_EQ(errorOf(head + R"("abi":-4294967295})"), "manifest of 'a' has no integer 'abi'");
  EXPECT_EQ(errorOf(head + R"("abi":1,"priority":18446744073709551615})"),
            "manifest member 'priority' must be an integer");
  auto m = parseManifest(head + R"("abi":2147483647,"priority":-2147483648})");
  ASSERT_TRUE(m.ok()) << m.error().message();
  EXPECT_EQ(m->abi, 2147483647);
  EXPECT_EQ(m->priority, -2147483648);
}

// A hostile plugin file yields an error, never a crash: the catalog copies what it parsed.
TEST(ManifestTest, RefusesAManifestNestedBeyondTheLimit) {
  const std::string deep = R"({"kind":"executor","name":"a","version":"1.0.0","abi":1,"x":)" +
                           plugboard::testing::nestedArrays(plugboard::testing::kStackBreakingDepth) + "}";
  EXPECT_EQ(errorOf(deep), "manifest is nested deeper than 512 levels");
}

}  // namespace
}  // namespace plugboard::core
