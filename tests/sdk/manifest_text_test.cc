#include "plugboard/detail/manifest_text.hpp"

#include <string>

#include <gtest/gtest.h>

namespace plugboard::detail {
namespace {

#define RENDER(text) \
  std::string(renderManifest<renderedSize(text, "executor")>(text, "executor").data())

TEST(ManifestTextTest, StripsWhitespaceOutsideStringsAndAppendsKindAndAbi) {
  EXPECT_EQ(RENDER(R"({ "name" : "a b",
                        "provides": [ "x" ] })"),
            R"({"name":"a b","provides":["x"],"kind":"executor","abi":1,"polled":false})");
}

TEST(ManifestTextTest, RendersAnEmptyObject) {
  EXPECT_EQ(RENDER("{ }"), R"({"kind":"executor","abi":1,"polled":false})");
}

TEST(ManifestTextTest, KeepsEscapesInsideStrings) {
  EXPECT_EQ(RENDER(R"({"description": "say \"hi\" \\ { ["})"),
            R"({"description":"say \"hi\" \\ { [","kind":"executor","abi":1,"polled":false})");
}

TEST(ManifestTextTest, SaysAPluginIsNotPolledUnlessItsObjectSaysSo) {
  EXPECT_EQ(RENDER(R"({"polled": true})"), R"({"polled":true,"kind":"executor","abi":1})");
  // Only a member of the object itself counts, not one nested or inside a string.
  EXPECT_EQ(RENDER(R"({"schemas": {"polled": true}, "description": "\"polled\":"})"),
            R"({"schemas":{"polled":true},"description":"\"polled\":","kind":"executor",)"
            R"("abi":1,"polled":false})");
  // A deployer module is never polled: nothing is appended.
  EXPECT_EQ(std::string(renderManifest<renderedSize("{}", "deployer")>("{}", "deployer").data()),
            R"({"kind":"deployer","abi":1})");
}

TEST(ManifestTextTest, ChecksTheShapeAtCompileTime) {
  static_assert(manifestShapeOk(R"({"a": [1, {"b": 2}]})"));
  static_assert(!manifestShapeOk(R"({"a": [1, 2})"));
  static_assert(!manifestShapeOk(R"({"a": "unterminated})"));
  static_assert(!manifestShapeOk(R"([1, 2])"));
  static_assert(!manifestShapeOk(R"({} {})"));
  static_assert(!manifestShapeOk(""));
  static_assert(!manifestShapeOk("{\"a\": \"line\nbreak\"}"));
  SUCCEED();
}

}  // namespace
}  // namespace plugboard::detail
