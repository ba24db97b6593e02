#include "core/workflows/template_text.h"

#include <cstdint>
#include <vector>

#include "core/workflows/expression_tree.h"

namespace plugboard::core {
namespace template_text_parts {  // named: the layer is one unity batch

using Serializer = nlohmann::detail::serializer<Json>;

bool holdsTag(const std::string& s) { return s.find("{{") != std::string::npos; }

void dump(const Json& value, std::string& out) {
  Serializer s(nlohmann::detail::output_adapter<char>(out), ' ', Json::error_handler_t::replace);
  s.dump(value, false, false, 0);
}

// What fill() counts of a value without tags: the names of its members and its strings.
std::size_t counted(const Json& value) {
  if (value.is_string()) return value.get_ref<const std::string&>().size();
  std::size_t n = 0;
  if (value.is_array()) {
    for (const auto& item : value) n += counted(item);
  } else if (value.is_object()) {
    for (auto it = value.begin(); it != value.end(); ++it) n += it.key().size() + counted(it.value());
  }
  return n;
}

// Where in the template a value sits, for the members a call sets.
enum class Role : std::uint8_t { kOther, kRoot, kInputs, kParameters, kParameter };

}  // namespace template_text_parts

struct TemplateText::Part {
  enum class Kind : std::uint8_t { kText, kTag, kObject, kArray };
  // The member a call sets in this object: the root's name, a parameter's value.
  enum class Sets : std::uint8_t { kNothing, kName, kValue };
  Kind kind = Kind::kText;
  Sets sets = Sets::kNothing;
  bool has_set = false;  // the member it sets is written in the template (keys[at])
  std::size_t at = 0;    // where the member it sets goes among `keys`
  std::size_t counted = 0;  // kText: what fill() counts of it
  std::string text;   // kText: its JSON text; kTag: the string as written
  std::string input;  // kValue: the parameter's name
  std::vector<std::string> keys;  // kObject: each member's name as JSON text, with its ':'
  std::vector<std::size_t> key_sizes;  // kObject: the length of each member's name
  std::size_t size_hint = 0;  // the root: the length of its text as written
  std::vector<Part> items;        // kObject: each member's value; kArray: the items
};

namespace template_text_parts {  // named: the layer is one unity batch

using Part = TemplateText::Part;

// False when the template cannot be prepared (see the header).
bool prepare(const Json& value, Role role, Part& part) {
  const auto asText = [&] {
    part.kind = Part::Kind::kText;
    part.text.clear();
    dump(value, part.text);
    part.counted = counted(value);
    return true;
  };
  if (value.is_string()) {
    if (!holdsTag(value.get_ref<const std::string&>())) return asText();
    // A string that is one tag may become any value: where the call looks into the
    // structure, the whole template is filled first instead.
    if (role != Role::kOther) return false;
    part.kind = Part::Kind::kTag;
    part.text = value.get<std::string>();
    return true;
  }
  if (value.is_array()) {
    part.kind = Part::Kind::kArray;
    bool constant = true;
    for (const auto& item : value) {
      Part& p = part.items.emplace_back();
      if (!prepare(item, role == Role::kParameters ? Role::kParameter : Role::kOther, p))
        return false;
      constant = constant && p.kind == Part::Kind::kText;
    }
    if (constant) part.items.clear();
    return constant ? asText() : true;
  }
  if (!value.is_object()) return asText();
  part.kind = Part::Kind::kObject;
  const char* set = nullptr;
  if (role == Role::kRoot) {
    part.sets = Part::Sets::kName;
    set = "name";
  } else if (role == Role::kParameter && value.contains("name")) {
    const Json& name = value["name"];
    if (name.is_string() && holdsTag(name.get_ref<const std::string&>())) return false;
    if (name.is_string()) {
      part.sets = Part::Sets::kValue;
      part.input = name.get<std::string>();
      set = "value";
    }
  }
  bool constant = part.sets == Part::Sets::kNothing;
  for (auto it = value.begin(); it != value.end(); ++it) {
    if (holdsTag(it.key())) return false;
    if (set != nullptr && it.key() < set) part.at = part.keys.size() + 1;
    if (set != nullptr && it.key() == set) {
      part.at = part.keys.size();
      part.has_set = true;
    }
    const Role r = role == Role::kRoot && it.key() == "inputs"         ? Role::kInputs
                   : role == Role::kInputs && it.key() == "parameters" ? Role::kParameters
                                                                       : Role::kOther;
    std::string key;
    dump(Json(it.key()), key);
    part.keys.push_back(key + ':');
    part.key_sizes.push_back(it.key().size());
    Part& p = part.items.emplace_back();
    if (!prepare(it.value(), r, p)) return false;
    constant = constant && p.kind == Part::Kind::kText;
  }
  if (constant) {
    part.keys.clear();
    part.key_sizes.clear();
    part.items.clear();
    return asText();
  }
  return true;
}

Error overLimit(const FillOptions& options) {
  return Error("a filled value is larger than the limit of " + std::to_string(options.limit) +
               " bytes (args_limit)");
}

// Text being written, and a serializer that appends to it.
struct Sink {
  explicit Sink(std::string& text)
      : text(text),
        json(nlohmann::detail::output_adapter<char>(text), ' ', Json::error_handler_t::replace) {}
  void dump(const Json& value) { json.dump(value, false, false, 0); }
  std::string& text;
  Serializer json;
};

// One call's writing: fill()'s walk of the template, in its order and with its count of
// bytes, written as it goes.
struct Writer {
  const Scope& scope;
  const FillOptions& options;
  const std::string* name;
  const Json& inputs;
  std::size_t budget;

  bool spend(std::size_t bytes) {
    if (bytes > budget) return false;
    budget -= bytes;
    return true;
  }

  Status write(const Part& p, Sink& to) {
    switch (p.kind) {
      case Part::Kind::kText:
        if (!spend(p.counted)) return overLimit(options);
        to.text += p.text;
        return Status::Ok();
      case Part::Kind::kTag: {
        auto v = fillText(p.text, scope, options);
        if (!v) return v.error();
        if (!spend(v->is_string() ? v->get_ref<const std::string&>().size()
                                  : expression::toJsonText(*v).size())) {
          return overLimit(options);
        }
        to.dump(*v);
        return Status::Ok();
      }
      case Part::Kind::kArray: {
        to.text += '[';
        for (std::size_t i = 0; i < p.items.size(); ++i) {
          if (i > 0) to.text += ',';
          if (Status st = write(p.items[i], to); !st) return st;
        }
        to.text += ']';
        return Status::Ok();
      }
      case Part::Kind::kObject:
        return writeObject(p, to);
    }
    return Status::Ok();
  }

  Status writeObject(const Part& p, Sink& to) {
    // The value the call sets, if any.
    Json named;
    const Json* set = nullptr;
    std::string_view set_key;
    if (p.sets == Part::Sets::kName && name != nullptr) {
      named = *name;
      set = &named;
      set_key = R"("name":)";
    } else if (p.sets == Part::Sets::kValue) {
      if (auto it = inputs.find(p.input); it != inputs.end()) set = &*it;
      set_key = R"("value":)";
    }
    to.text += '{';
    const std::size_t open = to.text.size();
    const auto member = [&](std::string_view key) {
      if (to.text.size() > open) to.text += ',';
      to.text += key;
    };
    for (std::size_t i = 0; i <= p.keys.size(); ++i) {
      if (set != nullptr && i == p.at && !p.has_set) {
        member(set_key);
        to.dump(*set);
      }
      if (i == p.keys.size()) break;
      if (!spend(p.key_sizes[i])) return overLimit(options);
      if (set != nullptr && i == p.at && p.has_set) {  // filled as written (errors count), then set
        std::string unused;
        Sink scratch(unused);
        if (Status st = write(p.items[i], scratch); !st) return st;
        member(p.keys[i]);
        to.dump(*set);
        continue;
      }
      member(p.keys[i]);
      if (Status st = write(p.items[i], to); !st) return st;
    }
    to.text += '}';
    return Status::Ok();
  }
};

}  // namespace template_text_parts

TemplateText::TemplateText(Json tmpl) : tmpl_(std::move(tmpl)) {
  if (!tmpl_.is_object()) return;
  auto root = std::make_unique<Part>();
  if (!template_text_parts::prepare(tmpl_, template_text_parts::Role::kRoot, *root)) return;
  root_ = std::move(root);
  root_->size_hint = tmpl_.dump(-1, ' ', false, Json::error_handler_t::replace).size() + 64;
  tmpl_ = nullptr;  // the parts say it all
}

TemplateText::~TemplateText() = default;
TemplateText::TemplateText(TemplateText&&) noexcept = default;
TemplateText& TemplateText::operator=(TemplateText&&) noexcept = default;

Expected<std::string> TemplateText::write(const Scope& scope, const FillOptions& options,
                                          const std::string* name, const Json& inputs) const {
  std::string out;
  if (root_) {
    out.reserve(root_->size_hint);
    template_text_parts::Sink sink(out);
    template_text_parts::Writer w{scope, options, name, inputs, options.limit};
    if (Status st = w.write(*root_, sink); !st) return st.error();
    return out;
  }
  auto filled = fill(tmpl_, scope, options);
  if (!filled) return filled.error();
  Json& t = *filled;
  if (name != nullptr && t.is_object()) t["name"] = *name;
  if (t.is_object() && t.contains("inputs") && t["inputs"].is_object() &&
      t["inputs"].contains("parameters") && t["inputs"]["parameters"].is_array()) {
    for (Json& p : t["inputs"]["parameters"]) {
      if (!p.is_object() || !p.contains("name") || !p["name"].is_string()) continue;
      if (auto it = inputs.find(p["name"].get<std::string>()); it != inputs.end())
        p["value"] = *it;
    }
  }
  template_text_parts::dump(t, out);
  return out;
}

}  // namespace plugboard::core
