// libyaml's events into the tree of yaml_tree.h. The nodes, their texts and their lists
// of children live in the Tree's monotonic arena: reading a file is one allocation now
// and then, not one per node, and nothing is freed node by node.
#include "core/frontends/yaml_tree.h"

#include <yaml.h>

#include <algorithm>
#include <cstring>
#include <unordered_map>

namespace plugboard::core::yaml {

namespace {

bool nullText(std::string_view t) {
  return t.empty() || t == "~" || t == "null" || t == "Null" || t == "NULL";
}

std::string quoted(std::string_view text) { return "'" + std::string(text) + "'"; }

}  // namespace

struct Tree::Builder {
  Builder(std::pmr::memory_resource* arena, std::string_view text) : arena(arena), text(text) {
    ascii = std::none_of(text.begin(), text.end(),
                         [](char c) { return static_cast<unsigned char>(c) >= 0x80; });
  }

  std::pmr::memory_resource* arena;
  std::string_view text;
  bool ascii;
  std::vector<std::size_t> line_starts;  // built when a mark is wanted in a non-ASCII text

  // The collections open, innermost last; their children gathered in `kids`.
  struct Open {
    NodeData* node;
    std::size_t first_kid;
    std::string anchor;
    bool flow;  // [...] or {...}
  };
  std::vector<Open> open;
  std::vector<const NodeData*> kids;
  std::unordered_map<std::string, const NodeData*> anchors;  // of the current document
  const NodeData* root = nullptr;
  std::optional<Error> refused;  // the current document's first
  // A value left empty in a block collection (`key:`): libyaml marks it just after the
  // colon; it takes the mark of what comes next, as yaml-cpp marked it (the messages
  // about such values have always named that place).
  NodeData* empty = nullptr;

  void next(const yaml_event_t& e) {
    if (empty) empty->mark = mark(e.start_mark);
    empty = nullptr;
  }

  // Where line `line` (0-based) starts in `text`; past the end for a line beyond it.
  std::size_t lineStart(std::size_t line) {
    if (line_starts.empty()) {
      // A byte order mark is not counted (by libyaml, or by yaml-cpp before it).
      line_starts.push_back(text.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0);
      for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '\n') line_starts.push_back(i + 1);
      }
    }
    return line < line_starts.size() ? line_starts[line] : text.size();
  }

  // libyaml counts a mark's column in characters; the readers (and yaml-cpp before,
  // whose columns the messages kept) count bytes.
  Mark mark(const yaml_mark_t& m) {
    Mark out{static_cast<int>(m.line), static_cast<int>(m.column)};
    if (ascii) return out;
    std::size_t start = lineStart(m.line);
    std::size_t at = start;
    for (std::size_t chars = 0; chars < m.column && at < text.size(); ++chars) {
      ++at;  // one character: its first byte and its continuation bytes
      while (at < text.size() && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80) ++at;
    }
    out.column = static_cast<int>(at - start);
    return out;
  }

  NodeData* node(Node::Type type, const yaml_mark_t& m) {
    void* p = arena->allocate(sizeof(NodeData), alignof(NodeData));
    return new (p) NodeData{type, false, 0, mark(m), nullptr, nullptr};
  }

  // A tag, null-terminated (null: none).
  const char* keepTag(const unsigned char* tag) {
    if (tag == nullptr) return nullptr;
    const std::size_t size = std::strlen(reinterpret_cast<const char*>(tag)) + 1;
    char* p = static_cast<char*>(arena->allocate(size, 1));
    std::memcpy(p, tag, size);
    return p;
  }

  std::string_view keep(const unsigned char* bytes, std::size_t size) {
    if (size == 0) return {};
    char* p = static_cast<char*>(arena->allocate(size, 1));
    std::memcpy(p, bytes, size);
    return {p, size};
  }

  void refuse(Mark at, std::string message) {
    if (!refused) refused = Error{at, std::move(message)};
  }

  // A node complete: registered under its anchor, then a child of the collection open
  // (or the document's root).
  void done(const NodeData* n, const char* anchor) {
    if (anchor) anchors[anchor] = n;
    if (open.empty()) {
      root = n;
    } else {
      kids.push_back(n);
    }
  }

  void scalar(const yaml_event_t& e) {
    const auto& s = e.data.scalar;
    std::string_view value(reinterpret_cast<const char*>(s.value), s.length);
    // Untagged plain scalars are typed (yaml-cpp's and go-yaml's "?" tag); a tag, even
    // `!`, or quotes keep the text as it is.
    bool plain = s.tag == nullptr && s.style == YAML_PLAIN_SCALAR_STYLE;
    NodeData* n = node(plain && nullText(value) ? Node::Type::kNull : Node::Type::kScalar,
                       e.start_mark);
    n->plain = plain;
    if (n->type == Node::Type::kScalar) {
      n->at = keep(s.value, s.length).data();
      n->count = static_cast<std::uint32_t>(s.length);
    }
    n->tag = keepTag(s.tag);
    if (plain && s.length == 0 && s.anchor == nullptr && !open.empty() && !open.back().flow) {
      empty = n;
    }
    done(n, reinterpret_cast<const char*>(s.anchor));
  }

  void alias(const yaml_event_t& e) {
    std::string name(reinterpret_cast<const char*>(e.data.alias.anchor));
    auto it = anchors.find(name);
    if (it != anchors.end()) {
      done(it->second, nullptr);
      return;
    }
    bool inside = std::any_of(open.begin(), open.end(), [&](const Open& o) { return o.anchor == name; });
    refuse(mark(e.start_mark), inside ? "alias *" + name + " is inside the value anchored &" + name +
                                    ": a value cannot contain itself"
                              : "alias *" + name + ": no anchor &" + name + " before it");
    done(node(Node::Type::kNull, e.start_mark), nullptr);
  }

  void start(const yaml_event_t& e, Node::Type type) {
    bool map = type == Node::Type::kMap;
    const yaml_char_t* anchor = map ? e.data.mapping_start.anchor : e.data.sequence_start.anchor;
    bool flow = map ? e.data.mapping_start.style == YAML_FLOW_MAPPING_STYLE
                    : e.data.sequence_start.style == YAML_FLOW_SEQUENCE_STYLE;
    NodeData* n = node(type, e.start_mark);
    n->tag = keepTag(map ? e.data.mapping_start.tag : e.data.sequence_start.tag);
    open.push_back(Open{n, kids.size(), anchor ? reinterpret_cast<const char*>(anchor) : "", flow});
  }

  void end() {
    Open o = std::move(open.back());
    open.pop_back();
    std::size_t n = kids.size() - o.first_kid;
    if (n > 0) {
      auto** p = static_cast<const NodeData**>(
          arena->allocate(n * sizeof(const NodeData*), alignof(const NodeData*)));
      std::copy(kids.begin() + static_cast<std::ptrdiff_t>(o.first_kid), kids.end(), p);
      o.node->at = p;
      o.node->count = static_cast<std::uint32_t>(n);
    }
    kids.resize(o.first_kid);
    if (o.node->type == Node::Type::kMap) checkKeys(*o.node);
    done(o.node, o.anchor.empty() ? nullptr : o.anchor.c_str());
  }

  // A key given twice: YAML forbids it, and Argo's strict reading (sigs.k8s.io/yaml
  // YAMLToJSONStrict, go-yaml's UnmarshalStrict) refuses it.
  void checkKeys(const NodeData& map) {
    std::uint32_t entries = map.count / 2;
    if (entries < 2) return;
    auto key = [&](std::uint32_t i) { return map.kids()[2 * i]; };
    auto twice = [&](std::uint32_t first, std::uint32_t second) {
      refuse(key(second)->mark, "key " + quoted(key(second)->text()) +
                                  " is given twice in one mapping (first on line " +
                                  std::to_string(key(first)->mark.line + 1) +
                                  "); YAML allows each key once");
    };
    if (entries <= 16) {
      for (std::uint32_t i = 1; i < entries; ++i) {
        if (key(i)->type != Node::Type::kScalar) continue;
        for (std::uint32_t j = 0; j < i; ++j) {
          if (key(j)->type == Node::Type::kScalar && key(j)->text() == key(i)->text()) {
            twice(j, i);
            return;
          }
        }
      }
      return;
    }
    std::vector<std::uint32_t> order;
    order.reserve(entries);
    for (std::uint32_t i = 0; i < entries; ++i) {
      if (key(i)->type == Node::Type::kScalar) order.push_back(i);
    }
    std::stable_sort(order.begin(), order.end(),
                     [&](std::uint32_t a, std::uint32_t b) { return key(a)->text() < key(b)->text(); });
    std::optional<std::pair<std::uint32_t, std::uint32_t>> first_twice;
    for (std::size_t i = 1; i < order.size(); ++i) {
      if (key(order[i])->text() == key(order[i - 1])->text() &&
          (!first_twice || order[i] < first_twice->second)) {
        first_twice.emplace(order[i - 1], order[i]);
      }
    }
    if (first_twice) twice(first_twice->first, first_twice->second);
  }
};

Tree::Tree() = default;
Tree::~Tree() = default;

Tree::Parsed Tree::parse(std::string_view text) {
  Parsed out;
  Builder b(&arena_, text);
  yaml_parser_t parser;
  if (!yaml_parser_initialize(&parser)) {
    out.error = Error{Mark{}, "out of memory reading YAML"};
    return out;
  }
  yaml_parser_set_input_string(&parser, reinterpret_cast<const unsigned char*>(text.data()),
                               text.size());
  bool more = true;
  while (more) {
    yaml_event_t e;
    if (!yaml_parser_parse(&parser, &e)) {
      std::string message = parser.problem ? parser.problem : "not YAML";
      Mark at = b.mark(parser.problem_mark);
      if (parser.error == YAML_READER_ERROR) {  // bytes that are not UTF-8: no mark, an offset
        std::string_view before = text.substr(0, std::min(parser.problem_offset, text.size()));
        std::size_t line_start = before.rfind('\n');
        line_start = line_start == std::string_view::npos ? 0 : line_start + 1;
        at = Mark{static_cast<int>(std::count(before.begin(), before.end(), '\n')),
                  static_cast<int>(before.size() - line_start)};
      }
      std::size_t byte = b.lineStart(static_cast<std::size_t>(at.line)) + static_cast<std::size_t>(at.column);
      if (parser.error == YAML_SCANNER_ERROR && byte < text.size() && text[byte] == '\t') {
        message = "a tab character where YAML allows only spaces (indent with spaces)";
      } else if (parser.context) {
        message += std::string(" (") + parser.context + " that starts on line " +
                   std::to_string(parser.context_mark.line + 1) + ")";
      }
      out.error = Error{at, std::move(message)};
      break;
    }
    b.next(e);
    switch (e.type) {
      case YAML_STREAM_END_EVENT:
        more = false;
        break;
      case YAML_DOCUMENT_START_EVENT:
        b.anchors.clear();
        b.root = nullptr;
        b.refused.reset();
        break;
      case YAML_DOCUMENT_END_EVENT:
        out.documents.push_back(Document{Node(b.root), std::move(b.refused)});
        b.refused.reset();
        break;
      case YAML_SCALAR_EVENT:
        b.scalar(e);
        break;
      case YAML_ALIAS_EVENT:
        b.alias(e);
        break;
      case YAML_SEQUENCE_START_EVENT:
      case YAML_MAPPING_START_EVENT:
        if (b.open.size() >= static_cast<std::size_t>(kMaxDepth)) {
          out.error = Error{b.mark(e.start_mark), std::string(kTooDeep), false};
          more = false;
          break;
        }
        b.start(e, e.type == YAML_MAPPING_START_EVENT ? Node::Type::kMap : Node::Type::kSequence);
        break;
      case YAML_SEQUENCE_END_EVENT:
      case YAML_MAPPING_END_EVENT:
        b.end();
        break;
      default:
        break;
    }
    yaml_event_delete(&e);
  }
  yaml_parser_delete(&parser);
  if (out.error) out.documents.clear();
  return out;
}

bool firstMappingHasKey(std::string_view text, std::initializer_list<std::string_view> keys) {
  yaml_parser_t parser;
  if (!yaml_parser_initialize(&parser)) return false;
  yaml_parser_set_input_string(&parser, reinterpret_cast<const unsigned char*>(text.data()),
                               text.size());
  // depth: 1 in the first document's mapping; `key`: the next event at depth 1 is a key.
  int depth = 0;
  bool key = true, found = false, in_document = false;
  for (bool more = true; more;) {
    yaml_event_t e;
    if (!yaml_parser_parse(&parser, &e)) break;
    const bool opens = e.type == YAML_SEQUENCE_START_EVENT || e.type == YAML_MAPPING_START_EVENT;
    const bool closes = e.type == YAML_SEQUENCE_END_EVENT || e.type == YAML_MAPPING_END_EVENT;
    if (e.type == YAML_STREAM_START_EVENT) {
    } else if (e.type == YAML_DOCUMENT_START_EVENT) {
      in_document = true;
    } else if (!in_document || e.type == YAML_STREAM_END_EVENT ||
               e.type == YAML_DOCUMENT_END_EVENT) {
      more = false;
    } else if (depth == 0) {
      more = e.type == YAML_MAPPING_START_EVENT;  // the root: a mapping, or no answer
      depth = 1;
    } else if (depth == 1 && key) {
      if (e.type == YAML_SCALAR_EVENT) {
        const std::string_view k(reinterpret_cast<const char*>(e.data.scalar.value),
                                 e.data.scalar.length);
        for (std::string_view want : keys) found = found || k == want;
        more = !found;
        key = false;
      } else {
        more = false;  // the end of the mapping, or a key that is not a scalar
      }
    } else {
      if (opens) ++depth;
      if (closes) --depth;
      if (depth == 1) key = true;  // a value ended
      if (depth > kMaxDepth) more = false;  // no answer: Tree::parse names the problem
    }
    yaml_event_delete(&e);
  }
  yaml_parser_delete(&parser);
  return found;
}

}  // namespace plugboard::core::yaml
