// core/frontends/yaml_tree.h: YAML text read with libyaml's event parser into a light tree
// in which every node keeps where it was written (line and column). The one YAML reader
// of the front ends: Argo workflows and WorkflowTemplates, parameter files, executor
// plugin manifests. Internal to core/frontends.
//
// A Tree owns its nodes; a Node is a handle (a pointer) that is valid while its Tree
// lives, and is cheap to copy. A Tree is not thread-safe; distinct Trees share nothing.
//
// What is read as YAML 1.1 readers (yaml-cpp before, go-yaml in Argo) read it: a plain
// scalar `~`, `null`, `Null`, `NULL` or nothing is null; a quoted, block or tagged scalar
// is text whatever it says. An alias is the node its anchor names (the same node, not a
// copy). Merge keys (`<<`) are an ordinary key. Refused, each an Error with its mark:
// YAML syntax errors, tabs where YAML wants spaces, and in a document, a key given twice
// in a mapping (as Argo's strict reading refuses it) and an alias of an anchor not yet
// complete (a value containing itself) or not defined.
#ifndef PLUGBOARD_CORE_FRONTENDS_YAML_TREE_H_
#define PLUGBOARD_CORE_FRONTENDS_YAML_TREE_H_

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <memory_resource>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace plugboard::core::yaml {

// Where a node was written: 0-based line and column (bytes into the line); -1: nowhere.
struct Mark {
  int line = -1;
  int column = -1;
  bool isNull() const { return line < 0; }
};

struct NodeData;
struct NodePair;
template <typename T>
class NodeRange;

class Node {
 public:
  enum class Type : std::uint8_t { kUndefined, kNull, kScalar, kSequence, kMap };

  Node() = default;  // undefined: what a lookup of a missing key gives
  explicit Node(const NodeData* data) : data_(data) {}

  Type type() const;
  bool isDefined() const { return data_ != nullptr; }
  bool isNull() const { return type() == Type::kNull; }
  bool isScalar() const { return type() == Type::kScalar; }
  bool isSequence() const { return type() == Type::kSequence; }
  bool isMap() const { return type() == Type::kMap; }
  // A scalar's text ("" for any other node).
  std::string_view scalar() const;
  std::string text() const { return std::string(scalar()); }
  // True for a plain scalar without a tag: one that YAML 1.1 types (true, 5, 1.5).
  bool plain() const;
  // A node's explicit tag as libyaml resolves it ("!expr", "tag:yaml.org,2002:str" for
  // `!!str`); "" when it has none.
  std::string_view tag() const;
  Mark mark() const;

  // A sequence's items, or a mapping's entries; 0 for anything else.
  std::size_t size() const;
  // Item `i` of a sequence (undefined past the end or for anything else).
  Node operator[](std::size_t i) const;
  // The value of key `key` in a mapping; undefined when it is not a mapping or has none.
  Node member(std::string_view key) const;

  // Iterates a sequence's items (Node) or a mapping's entries (NodePair); empty otherwise.
  NodeRange<Node> items() const;
  NodeRange<NodePair> pairs() const;

  bool operator==(const Node& other) const { return data_ == other.data_; }

 private:
  const NodeData* data_ = nullptr;
};

// 32 bytes: a large file's tree is mostly these (17 of them for each task of a dag).
struct NodeData {
  Node::Type type;
  bool plain;
  std::uint32_t count;  // a scalar's bytes; a collection's kids
  Mark mark;
  // A scalar's bytes, or a collection's kids (a sequence's items; a mapping's key, value,
  // key, value...); they belong to the Tree.
  const void* at;
  const char* tag;  // null-terminated, belonging to the Tree; null when none
  std::string_view text() const { return {static_cast<const char*>(at), count}; }
  const NodeData* const* kids() const { return static_cast<const NodeData* const*>(at); }
};
static_assert(sizeof(NodeData) <= 32);

struct NodePair {
  Node key;
  Node value;
};

template <typename T>
class NodeRange {
 public:
  class iterator {
   public:
    iterator(const NodeData* const* at) : at_(at) {}
    T operator*() const {
      if constexpr (std::is_same_v<T, NodePair>) {
        return NodePair{Node(at_[0]), Node(at_[1])};
      } else {
        return Node(*at_);
      }
    }
    iterator& operator++() {
      at_ += std::is_same_v<T, NodePair> ? 2 : 1;
      return *this;
    }
    bool operator!=(const iterator& o) const { return at_ != o.at_; }
    bool operator==(const iterator& o) const { return at_ == o.at_; }

   private:
    const NodeData* const* at_;
  };
  NodeRange(const NodeData* const* begin, const NodeData* const* end) : begin_(begin), end_(end) {}
  iterator begin() const { return iterator(begin_); }
  iterator end() const { return iterator(end_); }

 private:
  const NodeData* const* begin_;
  const NodeData* const* end_;
};

// The deepest nesting of collections a text may have (the readers walking a tree stop at
// the same depth, which aliases may reach too).
inline constexpr int kMaxDepth = 128;
inline constexpr std::string_view kTooDeep = "nested deeper than 128 levels";

// Where a text or a document is refused, and why (a sentence without a prefix).
struct Error {
  Mark mark;
  std::string message;
  bool syntax = true;  // false: YAML past a limit of the reader (kTooDeep)
};

// One document of a text: its root (null for an empty document), or why it is refused:
// YAML that libyaml reads but that is not valid (a key given twice, an alias of no anchor
// or of the value it is in). A refused document's tree is incomplete.
struct Document {
  Node root;
  std::optional<Error> refused;
};

class Tree {
 public:
  Tree();
  ~Tree();
  Tree(const Tree&) = delete;
  Tree& operator=(const Tree&) = delete;

  // Reads every document of `text`. A syntax error (libyaml's message, which go-yaml
  // shares; a tab where YAML wants spaces named as such), or a collection nested deeper
  // than kMaxDepth levels (told when it opens: libyaml's cost per token grows with the
  // nesting, so 100,000 levels would take minutes), stops the reading: `error` is set
  // and no document is returned. May be called again for another text: every node
  // read stays valid while the Tree lives.
  struct Parsed {
    std::vector<Document> documents;
    std::optional<Error> error;
  };
  Parsed parse(std::string_view text);

 private:
  struct Builder;
  std::pmr::monotonic_buffer_resource arena_;
};

// True when the first document of `text` is a mapping with one of `keys` (a scalar key) among
// the keys before its first that is not a scalar. Reads events only up to that key, without
// building a tree, so the rest of the text may still be anything (a syntax error too):
// for an early "no" before a whole read (e.g. of an Argo workflow, whose apiVersion comes
// first). False also when it cannot tell.
bool firstMappingHasKey(std::string_view text, std::initializer_list<std::string_view> keys);

// Thrown by readers walking a tree that meet a value they cannot take (nested too deep,
// too large), with the node's mark; caught where a whole file is read.
struct TreeLimit {
  Mark mark;
  std::string message;
};

// ----- inline definitions

inline Node::Type Node::type() const { return data_ ? data_->type : Type::kUndefined; }
inline std::string_view Node::scalar() const {
  return data_ && data_->type == Type::kScalar ? data_->text() : std::string_view();
}
inline bool Node::plain() const { return data_ && data_->plain; }
inline std::string_view Node::tag() const {
  return data_ && data_->tag ? std::string_view(data_->tag) : std::string_view();
}
inline Mark Node::mark() const { return data_ ? data_->mark : Mark{}; }
inline std::size_t Node::size() const {
  if (!data_) return 0;
  if (data_->type == Type::kSequence) return data_->count;
  if (data_->type == Type::kMap) return data_->count / 2;
  return 0;
}
inline Node Node::operator[](std::size_t i) const {
  return data_ && data_->type == Type::kSequence && i < data_->count ? Node(data_->kids()[i])
                                                                     : Node();
}
inline Node Node::member(std::string_view key) const {
  if (!data_ || data_->type != Type::kMap) return Node();
  for (std::uint32_t i = 0; i < data_->count; i += 2) {
    const NodeData* k = data_->kids()[i];
    if (k->type == Type::kScalar && k->text() == key) return Node(data_->kids()[i + 1]);
  }
  return Node();
}
inline NodeRange<Node> Node::items() const {
  if (!data_ || data_->type != Type::kSequence) return NodeRange<Node>(nullptr, nullptr);
  return NodeRange<Node>(data_->kids(), data_->kids() + data_->count);
}
inline NodeRange<NodePair> Node::pairs() const {
  if (!data_ || data_->type != Type::kMap) return NodeRange<NodePair>(nullptr, nullptr);
  return NodeRange<NodePair>(data_->kids(), data_->kids() + data_->count);
}

}  // namespace plugboard::core::yaml

#endif  // PLUGBOARD_CORE_FRONTENDS_YAML_TREE_H_
