// The atp deployer's CBOR reader (deployers/atp/cbor_reader.h) on the examples of RFC 8949,
// Appendix A, fed whole and byte by byte, and its schema conversion
// (deployers/atp/schema.h), in-process.
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/workflows/schema.h"
#include "deployers/atp/cbor_reader.h"
#include "deployers/atp/schema.h"

namespace plugboard::atp_deployer {
namespace {

std::string bytes(std::initializer_list<int> list) {
  std::string out;
  for (int b : list) out += static_cast<char>(b);
  return out;
}

// Decodes `data` fed in pieces of `step` bytes; expects exactly one item.
Json decode(const std::string& data, std::size_t step = 0) {
  CborReader reader(1 << 20, 64, false);
  std::vector<Json> items;
  if (step == 0) step = data.size();
  for (std::size_t at = 0; at < data.size(); at += step) {
    EXPECT_TRUE(reader.feed(std::string_view(data).substr(at, step), items).ok());
  }
  EXPECT_EQ(items.size(), 1u);
  EXPECT_EQ(reader.pending(), 0u);
  return items.empty() ? Json() : items[0];
}

TEST(AtpCborReaderTest, DecodesTheKindsOfItemsAtpPeersSend) {
  for (std::size_t step : {0, 1}) {
    EXPECT_EQ(decode(bytes({0xf9, 0x3c, 0x00}), step), 1.0);      // half float
    EXPECT_EQ(decode(bytes({0xf9, 0x7b, 0xff}), step), 65504.0);  // half float
    EXPECT_EQ(decode(bytes({0xfa, 0x47, 0xc3, 0x50, 0x00}), step), 100000.0);
    EXPECT_EQ(decode(bytes({0xfb, 0x3f, 0xf1, 0x99, 0x99, 0x99, 0x99, 0x99, 0x9a}), step), 1.1);
    EXPECT_EQ(decode(bytes({0x38, 0x63}), step), -100);
    EXPECT_EQ(decode(bytes({0x1b, 0, 0, 0, 0xe8, 0xd4, 0xa5, 0x10, 0}), step), 1000000000000);
    EXPECT_EQ(decode(bytes({0xc1, 0x1a, 0x51, 0x4b, 0x67, 0xb0}), step), 1363896240);  // a tag
    EXPECT_EQ(decode(bytes({0xa2, 0x01, 0x02, 0x03, 0x04}), step), Json::parse(R"({"1":2,"3":4})"));
    EXPECT_EQ(
        decode(bytes({0x7f, 0x65, 's', 't', 'r', 'e', 'a', 0x64, 'm', 'i', 'n', 'g', 0xff}), step),
        "streaming");
    EXPECT_EQ(decode(bytes({0xbf, 0x61, 'a', 0x01, 0x61, 'b', 0x9f, 0x02, 0x03, 0xff, 0xff}), step),
              Json::parse(R"({"a":1,"b":[2,3]})"));
    EXPECT_EQ(decode(bytes({0x83, 0x01, 0x82, 0x02, 0x03, 0x80}), step),
              Json::parse("[1,[2,3],[]]"));
    EXPECT_EQ(decode(bytes({0xf6}), step), nullptr);
    EXPECT_EQ(decode(bytes({0xf7}), step), nullptr);  // undefined
  }
}

TEST(AtpCborReaderTest, SplitsConcatenatedItemsAndKeepsAnIncompleteOne) {
  CborReader reader(1 << 20, 64, true);
  std::vector<Json> items;
  const std::string two = bytes({0xa1, 0x61, 'a', 0x01, 0xa1, 0x61, 'b'});
  ASSERT_TRUE(reader.feed(two, items).ok());
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0], Json::parse(R"({"a":1})"));
  EXPECT_GT(reader.pending(), 0u);
  ASSERT_TRUE(reader.feed(bytes({0x02}), items).ok());
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[1], Json::parse(R"({"b":2})"));
}

TEST(AtpCborReaderTest, TextThatIsNotAMessageIsQuoted) {
  CborReader reader(1 << 20, 64, true);
  std::vector<Json> items;
  auto st = reader.feed("Unknown kind of runtime message: 9", items);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message().find("\"Unknown kind of runtime message: 9\""), std::string::npos)
      << st.error().message();
  EXPECT_FALSE(reader.feed(bytes({0xa0}), items).ok());  // the stream stays broken
}

TEST(AtpCborReaderTest, AKeyThatIsAContainerIsRefused) {
  CborReader reader(1 << 20, 64, false);
  std::vector<Json> items;
  // {[1]: 2}: a key whose text, dumped again within keys of keys, would grow without bound.
  EXPECT_FALSE(reader.feed(bytes({0xa1, 0x81, 0x01, 0x02}), items).ok());
  EXPECT_TRUE(items.empty());
}

TEST(AtpCborReaderTest, LimitsTheSizeAndDepthOfAnItem) {
  std::vector<Json> items;
  CborReader small(8, 64, false);
  EXPECT_FALSE(small.feed(bytes({0x5a, 0, 1, 0, 0}), items).ok());  // a 64 KiB byte string
  CborReader shallow(1 << 20, 3, false);
  EXPECT_FALSE(shallow.feed(bytes({0x81, 0x81, 0x81, 0x81, 0x01}), items).ok());
}

TEST(AtpSchemaTest, ConvertsScopesEnumsWithIntegerKeysAndOneOf) {
  const Json scope = Json::parse(R"({"root":"In","objects":{
    "In":{"id":"In","properties":{
      "level":{"type":{"type_id":"enum_integer","values":{"1":{},"2":{}}},"required":true},
      "who":{"type":{"type_id":"one_of_int","types":{"7":{"type_id":"ref","id":"Sub"}}},"required":true},
      "n":{"type":{"type_id":"integer","min":0,"max":5},"required":true,"default":"1"},
      "sub":{"type":{"type_id":"ref","id":"Sub"},"required":false},
      "m":{"type":{"type_id":"map","keys":{"type_id":"integer"},"values":{"type_id":"string"}}}}},
    "Sub":{"id":"Sub","properties":{"x":{"type":{"type_id":"string","min":1},"required":true}}}}})");
  const Json out =
      convertType(Json{{"type_id", "scope"}, {"objects", scope["objects"]}, {"root", "In"}}, scope);
  // n has a default; m says nothing, and the schema language's default is required
  // (the Python SDK's PropertySchema).
  EXPECT_EQ(out["required"], Json::parse(R"(["level","m","who"])"));
  EXPECT_EQ(out["properties"]["level"]["enum"], Json::parse("[1,2]"));
  EXPECT_EQ(out["properties"]["who"]["properties"]["_type"]["enum"], Json::parse("[7]"));
  // The discriminator is required and chooses the type whose fields are checked.
  EXPECT_EQ(out["properties"]["who"]["required"], Json::parse(R"(["_type"])"));
  EXPECT_TRUE(core::checkSchema(Json::parse(R"({"level":1,"m":{},"who":{"_type":7,"x":"a"}})"), out, "args")
                  .empty());
  EXPECT_EQ(core::checkSchema(Json::parse(R"({"level":1,"m":{},"who":{"_type":7,"x":""}})"), out, "args"),
            std::vector<std::string>{"args.who.x: must be at least 1 characters long"});
  EXPECT_EQ(core::checkSchema(Json::parse(R"({"level":1,"m":{},"who":{"_type":7,"y":"a"}})"), out, "args"),
            (std::vector<std::string>{"args.who: missing required member 'x'",
                                      "args.who: unknown member 'y'"}));
  EXPECT_EQ(out["properties"]["n"]["maximum"], 5);
  EXPECT_EQ(out["properties"]["n"]["default"], 1);
  EXPECT_EQ(out["properties"]["sub"]["properties"]["x"]["minLength"], 1);
  EXPECT_EQ(out["properties"]["m"]["additionalProperties"]["type"], "string");
  EXPECT_EQ(out["additionalProperties"], false);
}

TEST(AtpSchemaTest, ReferencesSharedByManyPropertiesDoNotExpandWithoutBound) {
  // O0 has two properties of type O1, O1 two of O2 ... : 2^30 types if all were expanded.
  Json objects = Json::object();
  for (int i = 0; i < 30; ++i) {
    const Json ref = {{"type", {{"type_id", "ref"}, {"id", "O" + std::to_string(i + 1)}}}};
    objects["O" + std::to_string(i)] = {{"id", "O" + std::to_string(i)},
                                        {"properties", {{"a", ref}, {"b", ref}}}};
  }
  objects["O30"] = {{"id", "O30"}, {"properties", Json::object()}};
  const Json scope = {{"objects", objects}, {"root", "O0"}};
  const Json out =
      convertType(Json{{"type_id", "scope"}, {"objects", objects}, {"root", "O0"}}, scope);
  EXPECT_LT(out.dump().size(), 10u << 20);
  EXPECT_TRUE(out["properties"].contains("a"));
}

TEST(AtpSchemaTest, TemplateExecuteIsTheOnlyStepOrTheOneNamed) {
  const Json step = Json::parse(R"({"input":{"root":"I","objects":{"I":{"id":"I","properties":{}}}},
                                    "outputs":{"success":{"schema":{"root":"O","objects":{"O":{"id":"O",
                                    "properties":{"message":{"type":{"type_id":"string"}}}}}}}},
                                    "signal_handlers":{"cancel":{}}})");
  ManifestSpec spec{"p", "1.0.0", "", {"success"}};
  auto one = manifestOf(Json{{"steps", {{"a", step}}}}, spec);
  ASSERT_TRUE(one.ok()) << one.error().message();
  EXPECT_EQ((*one)["provides"], Json::parse(R"(["arcaflow.a","template.execute"])"));
  EXPECT_TRUE((*one)["schemas"]["arcaflow.a"]["output"]["properties"].contains("message"));
  EXPECT_EQ(stepOf(*one, "template.execute"), "a");
  EXPECT_TRUE(cancellable(*one, "a"));
  auto two = manifestOf(Json{{"steps", {{"a", step}, {"b", step}}}}, spec);
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(stepOf(*two, "template.execute"), "");
  spec.default_step = "c";
  auto missing = manifestOf(Json{{"steps", {{"a", step}, {"b", step}}}}, spec);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message().find("option 'step' names step 'c'"), std::string::npos);
}

}  // namespace
}  // namespace plugboard::atp_deployer
