#include "core/workflows/tags.h"

#include "core/base/text.h"
#include "core/workflows/expression_tree.h"

namespace plugboard::core {
namespace {

std::string_view trimmed(std::string_view s) {
  constexpr std::string_view kSpace = " \t\r\n";
  const auto b = s.find_first_not_of(kSpace);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(kSpace) - b + 1);
}

// Calls `each(tag, end)` for the tags of `text`, `end` being one past its "}}".
template <class Each>
Status scanTags(std::string_view text, Each each) {
  std::size_t from = 0;
  while (true) {
    const auto open = text.find("{{", from);
    if (open == std::string_view::npos) return Status::Ok();
    const auto close = text.find("}}", open + 2);
    if (close == std::string_view::npos) {
      return Error("'{{' without '}}' at " + std::to_string(open + 1) + " in \"" +
                   std::string(text) + "\"");
    }
    std::string_view inside = text.substr(open + 2, close - open - 2);
    Tag tag;
    tag.offset = open;
    // As Argo's util/template/kind.go: an expression's '=' comes right after the braces.
    tag.expression = !inside.empty() && inside[0] == '=';
    tag.text = std::string(trimmed(tag.expression ? inside.substr(1) : inside));
    if (Status st = each(tag, close + 2); !st) return st;
    from = close + 2;
  }
}

// The value of one tag, or nullopt to leave it as written.
Expected<std::optional<Json>> resolve(const Tag& tag, std::string_view written, const Scope& scope,
                                      const FillOptions& options) {
  if (!tag.expression) {
    if (std::optional<Json> v = scope.lookup(tag.text)) return std::optional<Json>(std::move(*v));
    if (options.keep_unknown) return std::optional<Json>();
    return Error("unknown variable in " + excerpt(written), Error::Code::kNotFound);
  }
  auto v = evaluate(tag.text, Dialect::kExpr, scope);
  if (!v) {
    if (options.keep_unknown && v.error().code() == Error::Code::kNotFound) return std::optional<Json>();
    return Error(excerpt(written) + ": " + v.error().message(), v.error().code());
  }
  if (v->is_null()) {  // Argo's util/template refuses an expression that gives nil
    if (options.keep_unknown) return std::optional<Json>();
    return Error(excerpt(written) + ": the expression gives nil", Error::Code::kNotFound);
  }
  return std::optional<Json>(std::move(*v));
}

Error tooLarge(const FillOptions& options) {
  return Error("a filled value is larger than the limit of " + std::to_string(options.limit) +
               " bytes (args_limit)");
}

Expected<Json> fillWithin(const Json& value, const Scope& scope, const FillOptions& options,
                          std::size_t& budget) {
  auto spend = [&](std::size_t bytes) {
    if (bytes > budget) return false;
    budget -= bytes;
    return true;
  };
  if (value.is_string()) {
    auto out = fillText(value.get_ref<const std::string&>(), scope, options);
    if (!out) return out;
    if (!spend(out->is_string() ? out->get_ref<const std::string&>().size()
                                : expression::toJsonText(*out).size())) {
      return tooLarge(options);
    }
    return out;
  }
  if (value.is_array()) {
    Json out = Json::array();
    for (const auto& item : value) {
      auto v = fillWithin(item, scope, options, budget);
      if (!v) return v;
      out.push_back(std::move(*v));
    }
    return out;
  }
  if (value.is_object()) {
    Json out = Json::object();
    for (auto it = value.begin(); it != value.end(); ++it) {
      auto key = fillText(it.key(), scope, options);
      if (!key) return key;
      std::string name = expression::toText(*key);
      if (!spend(name.size())) return tooLarge(options);
      auto v = fillWithin(it.value(), scope, options, budget);
      if (!v) return v;
      out[std::move(name)] = std::move(*v);
    }
    return out;
  }
  return value;
}

}  // namespace

Expected<std::vector<Tag>> findTags(std::string_view text) {
  std::vector<Tag> tags;
  Status st = scanTags(text, [&](const Tag& tag, std::size_t) {
    tags.push_back(tag);
    return Status::Ok();
  });
  if (!st) return st.error();
  return tags;
}

Status forEachTag(const Json& value, const std::function<Status(const Tag&)>& each) {
  auto inText = [&](std::string_view text) {
    return scanTags(text, [&](const Tag& tag, std::size_t) { return each(tag); });
  };
  if (value.is_string()) return inText(value.get_ref<const std::string&>());
  if (value.is_array()) {
    for (const auto& item : value) {
      if (Status st = forEachTag(item, each); !st) return st;
    }
  } else if (value.is_object()) {
    for (auto it = value.begin(); it != value.end(); ++it) {
      if (Status st = inText(it.key()); !st) return st;
      if (Status st = forEachTag(it.value(), each); !st) return st;
    }
  }
  return Status::Ok();
}

Expected<Json> fillText(std::string_view text, const Scope& scope, const FillOptions& options) {
  std::string out;
  std::optional<Json> whole;
  std::size_t copied = 0;
  Status st = scanTags(text, [&](const Tag& tag, std::size_t end) -> Status {
    const std::string_view written = text.substr(tag.offset, end - tag.offset);
    auto value = resolve(tag, written, scope, options);
    if (!value) return value.error();
    out.append(text.substr(copied, tag.offset - copied));
    copied = end;
    if (!*value) {
      out.append(written);
    } else if (tag.offset == 0 && end == text.size()) {
      whole = std::move(**value);  // the string is this one tag: the value keeps its type
    } else {
      out += expression::toText(**value);
    }
    if (out.size() > options.limit) return tooLarge(options);
    return Status::Ok();
  });
  if (!st) return st.error();
  if (whole) {
    if (expression::toText(*whole).size() > options.limit) return tooLarge(options);
    return std::move(*whole);
  }
  out.append(text.substr(copied));
  if (out.size() > options.limit) return tooLarge(options);
  return Json(std::move(out));
}

Expected<Json> fill(const Json& value, const Scope& scope, const FillOptions& options) {
  std::size_t budget = options.limit;
  return fillWithin(value, scope, options, budget);
}

}  // namespace plugboard::core
