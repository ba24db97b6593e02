// The front ends' YAML reader (core/frontends/yaml_tree.h): what the YAML of Argo's
// examples uses, read into nodes that keep their line and byte column; and each text it
// refuses, with where and why.
#include "core/frontends/yaml_tree.h"

#include <gtest/gtest.h>

#include <string>

namespace plugboard::core::yaml {
namespace {

// The one document of `text`, which must be read without an error.
Node one(Tree& tree, std::string_view text) {
  Tree::Parsed parsed = tree.parse(text);
  EXPECT_FALSE(parsed.error) << parsed.error->message;
  EXPECT_EQ(parsed.documents.size(), 1u) << text;
  if (parsed.documents.size() != 1) return Node();
  EXPECT_FALSE(parsed.documents[0].refused) << parsed.documents[0].refused->message;
  return parsed.documents[0].root;
}

// "line:column" as messages print them (1-based).
std::string at(Mark m) { return std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1); }

// The syntax error of `text`: "line:column message".
std::string syntaxError(std::string_view text) {
  Tree tree;
  Tree::Parsed parsed = tree.parse(text);
  EXPECT_TRUE(parsed.documents.empty());
  return parsed.error ? at(parsed.error->mark) + " " + parsed.error->message : "no error";
}

// Why the first document of `text` is refused: "line:column message".
std::string refusal(std::string_view text) {
  Tree tree;
  Tree::Parsed parsed = tree.parse(text);
  EXPECT_FALSE(parsed.error) << parsed.error->message;
  if (parsed.documents.empty() || !parsed.documents[0].refused) return "not refused";
  return at(parsed.documents[0].refused->mark) + " " + parsed.documents[0].refused->message;
}

TEST(YamlTree, ReadsMappingsListsAndScalarsTypedAsYaml11Does) {
  Tree tree;
  Node doc = one(tree, R"(name: hello
count: 3
quoted: "3"
tagged: !!str true
empty:
tilde: ~
flow: {a: [1, two], b: null}
block: !list
  - x
  - y: z
)");
  ASSERT_TRUE(doc.isMap());
  EXPECT_EQ(doc.size(), 8u);
  EXPECT_EQ(doc.member("name").scalar(), "hello");
  EXPECT_TRUE(doc.member("count").plain());
  EXPECT_FALSE(doc.member("quoted").plain());  // text whatever it says
  EXPECT_EQ(doc.member("quoted").scalar(), "3");
  EXPECT_FALSE(doc.member("tagged").plain());
  EXPECT_EQ(doc.member("tagged").tag(), "tag:yaml.org,2002:str");
  EXPECT_EQ(doc.member("name").tag(), "");
  EXPECT_TRUE(doc.member("empty").isNull());
  EXPECT_TRUE(doc.member("tilde").isNull());
  EXPECT_FALSE(doc.member("missing").isDefined());
  EXPECT_FALSE(doc.member("name").member("x").isDefined());  // not a mapping: nothing
  Node flow = doc.member("flow");
  ASSERT_TRUE(flow.member("a").isSequence());
  EXPECT_EQ(flow.member("a")[1].scalar(), "two");
  EXPECT_FALSE(flow.member("a")[2].isDefined());
  EXPECT_TRUE(flow.member("b").isNull());
  Node block = doc.member("block");
  ASSERT_EQ(block.size(), 2u);
  EXPECT_EQ(block.tag(), "!list");
  EXPECT_EQ(block[1].member("y").scalar(), "z");
  std::string keys;
  for (const auto& kv : doc.pairs()) keys += std::string(kv.key.scalar()) + " ";
  EXPECT_EQ(keys, "name count quoted tagged empty tilde flow block ");
  int items = 0;
  for (Node item : block.items()) items += item.isDefined() ? 1 : 0;
  EXPECT_EQ(items, 2);
}

TEST(YamlTree, ReadsBlockScalarsAnchorsAndSeveralDocuments) {
  Tree tree;
  Tree::Parsed parsed = tree.parse(R"(script: |
  echo one
  echo two
folded: >-
  a
  b
base: &base {image: busybox}
uses: *base
merged:
  <<: *base
---
second: 2
---
)");
  ASSERT_FALSE(parsed.error);
  ASSERT_EQ(parsed.documents.size(), 3u);
  Node doc = parsed.documents[0].root;
  EXPECT_EQ(doc.member("script").scalar(), "echo one\necho two\n");
  EXPECT_FALSE(doc.member("script").plain());
  EXPECT_EQ(doc.member("folded").scalar(), "a b");
  // An alias is the node its anchor names, not a copy.
  EXPECT_TRUE(doc.member("uses") == doc.member("base"));
  EXPECT_EQ(doc.member("uses").member("image").scalar(), "busybox");
  // `<<` is an ordinary key, as yaml-cpp read it before (the reader refuses it by name).
  EXPECT_TRUE(doc.member("merged").member("<<") == doc.member("base"));
  EXPECT_EQ(parsed.documents[1].root.member("second").scalar(), "2");
  EXPECT_FALSE(parsed.documents[2].root.isDefined() && !parsed.documents[2].root.isNull());
  // A second text read into the same tree leaves the first one's nodes as they were.
  Node other = one(tree, "other: [1]\n");
  EXPECT_EQ(other.member("other").size(), 1u);
  EXPECT_EQ(doc.member("base").member("image").scalar(), "busybox");
}

TEST(YamlTree, MarksAreLinesAndByteColumns) {
  Tree tree;
  Node doc = one(tree, "a: 1\nb:\n  c: \"é\"\ne: [x, é, y]\nf:\ng: {h: , i: 2}\n");
  EXPECT_EQ(at(doc.mark()), "1:1");
  EXPECT_EQ(at(doc.member("a").mark()), "1:4");
  EXPECT_EQ(at(doc.member("b").mark()), "3:3");
  // Columns count bytes: é is two.
  EXPECT_EQ(at(doc.member("e")[2].mark()), "4:12");
  // An empty block value is marked where the next token starts (as yaml-cpp marked it);
  // an empty flow value at the comma after it.
  EXPECT_EQ(at(doc.member("f").mark()), "6:1");
  EXPECT_EQ(at(doc.member("g").member("h").mark()), "6:8");
  // A byte order mark is not counted; \r\n ends a line.
  Node bom = one(tree, "\xEF\xBB\xBF" "a: 1\r\nb: 2\r\n");
  EXPECT_EQ(at(bom.member("a").mark()), "1:4");
  EXPECT_EQ(at(bom.member("b").mark()), "2:4");
}

TEST(YamlTree, RefusesSyntaxErrorsWithTheirLine) {
  EXPECT_EQ(syntaxError("spec:\n  templates: [a, b\n  x: 1\n"),
            "3:4 did not find expected ',' or ']' (while parsing a flow sequence that starts "
            "on line 2)");
  EXPECT_EQ(syntaxError("a: b: c\n"), "1:5 mapping values are not allowed in this context");
  // An unterminated quote (yaml-cpp took the rest of the file as the text).
  EXPECT_EQ(syntaxError("a: 1\nb: \"open\n"),
            "3:1 found unexpected end of stream (while scanning a quoted scalar that starts on "
            "line 2)");
  // Bytes that are not UTF-8: where they are, from their offset.
  EXPECT_EQ(syntaxError("a: 1\nb: x\xff\n").substr(0, 4), "2:5 ");
}

// Collections nested deeper than 128 levels stop the reading where the 129th opens, as
// the events arrive: what follows is not read (a syntax error further on is not reached,
// and 100,000 levels cost no more than 129).
TEST(YamlTree, StopsAtTheDepthLimitWhereTheCollectionOpens) {
  const std::string deep = std::string(100'000, '[') + "a" + std::string(100'000, ']');
  EXPECT_EQ(syntaxError(deep), "1:129 nested deeper than 128 levels");
  // (libyaml looks up to 1024 characters ahead for a simple key: the error is past them.)
  EXPECT_EQ(syntaxError(std::string(2000, '[') + "\"open\n"),
            "1:129 nested deeper than 128 levels");
  std::string block;
  for (int i = 0; i < 200; ++i) block += std::string(i, ' ') + "- \n";
  EXPECT_EQ(syntaxError(block), "129:129 nested deeper than 128 levels");
  // 128 levels are read.
  Tree tree;
  const Node ok = one(tree, std::string(128, '[') + std::string(128, ']'));
  EXPECT_TRUE(ok.isSequence());
}

TEST(YamlTree, RefusesATabWhereYamlWantsSpaces) {
  EXPECT_EQ(syntaxError("spec:\n\tentrypoint: main\n"),
            "2:1 a tab character where YAML allows only spaces (indent with spaces)");
  // A tab after a value, before a comment, is allowed.
  Tree tree;
  EXPECT_EQ(one(tree, "a: 1\t# one\n").member("a").scalar(), "1");
}

TEST(YamlTree, RefusesAKeyGivenTwiceInTheDocumentItIsIn) {
  EXPECT_EQ(refusal("metadata:\n  name: a\n  labels: {}\n  name: b\n"),
            "4:3 key 'name' is given twice in one mapping (first on line 2); YAML allows each "
            "key once");
  // A large mapping: the first key given twice, in the order of the file.
  std::string many;
  for (int i = 0; i < 40; ++i) many += "k" + std::to_string(i) + ": " + std::to_string(i) + "\n";
  EXPECT_EQ(refusal(many + "k30: again\nk3: again\n"),
            "41:1 key 'k30' is given twice in one mapping (first on line 31); YAML allows each "
            "key once");
  // The same key in two mappings is fine; a refused document leaves the others as they are.
  Tree tree;
  Tree::Parsed parsed = tree.parse("a: {x: 1}\nb: {x: 2}\n---\nc: 1\nc: 2\n---\nd: 1\n");
  ASSERT_EQ(parsed.documents.size(), 3u);
  EXPECT_FALSE(parsed.documents[0].refused);
  ASSERT_TRUE(parsed.documents[1].refused);
  EXPECT_EQ(at(parsed.documents[1].refused->mark), "5:1");
  EXPECT_FALSE(parsed.documents[2].refused);
  EXPECT_EQ(parsed.documents[2].root.member("d").scalar(), "1");
}

TEST(YamlTree, RefusesAnAliasOfNoAnchorOrOfTheValueItIsIn) {
  EXPECT_EQ(refusal("a: &a [1, *a]\n"),
            "1:11 alias *a is inside the value anchored &a: a value cannot contain itself");
  EXPECT_EQ(refusal("a: 1\nb: *nowhere\n"), "2:4 alias *nowhere: no anchor &nowhere before it");
  // An anchor is the document's: the next one does not see it.
  EXPECT_EQ(refusal("---\na: &x 1\n---\nb: *x\n"), "not refused");
  Tree tree;
  Tree::Parsed parsed = tree.parse("---\na: &x 1\n---\nb: *x\n");
  ASSERT_EQ(parsed.documents.size(), 2u);
  ASSERT_TRUE(parsed.documents[1].refused);
  EXPECT_EQ(parsed.documents[1].refused->message, "alias *x: no anchor &x before it");
}

// The early look front ends take at a file's first keys, without reading it whole.
TEST(YamlTree, TellsAFirstMappingsKeysWithoutReadingFurther) {
  EXPECT_TRUE(firstMappingHasKey("apiVersion: v1\nkind: Workflow\n", {"apiVersion", "kind"}));
  EXPECT_TRUE(firstMappingHasKey("metadata: {name: [a, {b: c}]}\n'kind': W\n", {"kind"}));
  // It stops at the key: what follows is not read (the whole read reports it).
  EXPECT_TRUE(firstMappingHasKey("kind: W\nspec: [unclosed\n", {"kind"}));
  EXPECT_FALSE(firstMappingHasKey("version: v0.2.0\nsteps: {kind: x}\n", {"apiVersion", "kind"}));
  EXPECT_FALSE(firstMappingHasKey("a: 1\n---\nkind: W\n", {"kind"}));  // the first document
  EXPECT_FALSE(firstMappingHasKey("- kind\n", {"kind"}));
  EXPECT_FALSE(firstMappingHasKey("a: [unclosed\nkind: W\n", {"kind"}));
  // It cannot tell past a key that is not a scalar.
  EXPECT_FALSE(firstMappingHasKey("? [kind]\n: 1\nkind: W\n", {"kind"}));
  EXPECT_FALSE(firstMappingHasKey("", {"kind"}));
}

}  // namespace
}  // namespace plugboard::core::yaml
