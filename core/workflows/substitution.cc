#include "core/workflows/substitution.h"

#include <array>

namespace plugboard::core {
namespace {

// The parts of `s` between dots, without copies; more than kMaxParts parts make it
// malformed (no reference has that many).
constexpr std::size_t kMaxParts = 5;
struct Parts {
  std::array<std::string_view, kMaxParts> part;
  std::size_t size = 0;  // kMaxParts + 1: too many
};

Parts splitDots(std::string_view s) {
  Parts parts;
  std::size_t start = 0;
  for (;;) {
    auto dot = s.find('.', start);
    if (parts.size == kMaxParts) {
      ++parts.size;
      return parts;
    }
    parts.part[parts.size++] = s.substr(start, dot - start);
    if (dot == std::string_view::npos) return parts;
    start = dot + 1;
  }
}

Expected<Reference> parseReference(std::string_view inner, std::string text) {
  const Parts p = splitDots(inner);
  const auto& parts = p.part;
  Reference r{Reference::Kind::kInput, {}, {}, {}, std::move(text)};
  if (p.size == 2 && parts[0] == "inputs" && !parts[1].empty()) {
    r.input = parts[1];
    return r;
  }
  if (p.size == 2 && parts[0] == "workflow" && parts[1] == "name") {
    r.kind = Reference::Kind::kWorkflowName;
    return r;
  }
  if (p.size == 2 && parts[0] == "workflow" && parts[1] == "status") {
    r.kind = Reference::Kind::kWorkflowStatus;
    return r;
  }
  if (p.size == 1 && parts[0] == "item") {
    r.kind = Reference::Kind::kItem;
    return r;
  }
  if (p.size == 2 && parts[0] == "item" && !parts[1].empty()) {
    r.kind = Reference::Kind::kItem;
    r.output = parts[1];
    return r;
  }
  if (p.size == 5 && parts[0] == "steps" && parts[2] == "outputs" && parts[3] == "parameters" &&
      !parts[1].empty() && !parts[4].empty()) {
    r.kind = Reference::Kind::kStepOutput;
    r.step = parts[1];
    r.output = parts[4];
    return r;
  }
  return Error("bad reference '" + r.text +
               "': use ${inputs.NAME}, ${workflow.name}, ${workflow.status}, ${item}, "
               "${item.KEY} or ${steps.ID.outputs.parameters.NAME}");
}

// Calls `on(reference)` for each reference and `literal(text)` for the text between them.
template <class OnRef, class OnText>
Status scan(std::string_view s, OnRef on, OnText literal) {
  std::size_t i = 0;
  while (i < s.size()) {
    auto pos = s.find('$', i);
    if (pos == std::string_view::npos) {
      literal(s.substr(i));
      break;
    }
    literal(s.substr(i, pos - i));
    if (s.substr(pos, 3) == "$${") {
      literal("${");
      i = pos + 3;
    } else if (s.substr(pos, 2) == "${") {
      auto end = s.find('}', pos + 2);
      if (end == std::string_view::npos) {
        return Error("unterminated reference in \"" + std::string(s) + "\": '${' without '}'");
      }
      auto ref = parseReference(s.substr(pos + 2, end - pos - 2),
                                std::string(s.substr(pos, end - pos + 1)));
      if (!ref) return ref.error();
      if (Status st = on(*ref); !st) return st;
      i = end + 1;
    } else {
      literal("$");
      i = pos + 1;
    }
  }
  return Status::Ok();
}

Status collect(const Json& v, std::vector<Reference>& out) {
  if (v.is_string()) {
    return scan(
        v.get_ref<const std::string&>(),
        [&](const Reference& r) {
          out.push_back(r);
          return Status::Ok();
        },
        [](std::string_view) {});
  }
  if (v.is_structured()) {
    for (const auto& item : v) {
      if (Status st = collect(item, out); !st) return st;
    }
  }
  return Status::Ok();
}

Expected<Json> resolve(const Reference& r, const SubstitutionContext& ctx) {
  switch (r.kind) {
    case Reference::Kind::kInput:
      if (!ctx.inputs.contains(r.input)) return Error(r.text + ": no input '" + r.input + "'");
      return ctx.inputs[r.input];
    case Reference::Kind::kWorkflowName:
      return Json(ctx.workflow_name);
    case Reference::Kind::kStepOutput: {
      auto step = ctx.step_parameters.find(r.step);
      if (step == ctx.step_parameters.end()) {
        return Error(r.text + ": step '" + r.step + "' has not succeeded");
      }
      if (!step->second.contains(r.output)) {
        return Error(r.text + ": step '" + r.step + "' did not output parameter '" + r.output + "'");
      }
      return step->second[r.output];
    }
    case Reference::Kind::kItem:
    case Reference::Kind::kWorkflowStatus:
      return Error(r.text + ": known only while the workflow runs");
  }
  return Error(r.text + ": cannot resolve");
}

std::string asText(const Json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

}  // namespace

Expected<std::vector<Reference>> findReferences(const Json& value) {
  std::vector<Reference> refs;
  if (Status st = collect(value, refs); !st) return st.error();
  return refs;
}

bool knownOnlyWhileRunning(const Json& value) {
  if (!value.is_string()) return false;
  auto refs = findReferences(value);
  if (!refs) return false;
  for (const auto& r : *refs) {
    if (r.kind != Reference::Kind::kInput && r.kind != Reference::Kind::kWorkflowName)
      return true;
  }
  return false;
}

Expected<std::string> rewriteReferences(
    std::string_view text, const std::function<std::string(const Reference&)>& reference,
    const std::function<std::string(std::string_view)>& literal) {
  std::string out;
  Status st = scan(
      text,
      [&](const Reference& r) {
        out += reference(r);
        return Status::Ok();
      },
      [&](std::string_view t) { out += literal(t); });
  if (!st) return st.error();
  return out;
}

namespace {

Error tooLarge(std::size_t limit) {
  return Error("the value is larger than " + std::to_string(limit) +
               " bytes once substituted (args_limit)");
}

// `value` substituted, taking the bytes it holds from `left`: each string and name its
// length, any other value one byte (a lower bound of its text).
Expected<Json> substituteWithin(const Json& value, const SubstitutionContext& ctx,
                                std::size_t& left) {
  const auto take = [&left](std::size_t n) {
    if (n > left) return false;
    left -= n;
    return true;
  };
  if (value.is_string()) {
    const auto& s = value.get_ref<const std::string&>();
    auto refs = findReferences(value);
    if (!refs) return refs.error();
    if (refs->empty() && s.find("$${") == std::string::npos) {
      if (!take(s.size())) return tooLarge(ctx.limit);
      return value;
    }
    if (refs->size() == 1 && (*refs)[0].text == s && (*refs)[0].kind == Reference::Kind::kInput) {
      auto v = resolve((*refs)[0], ctx);
      if (v && !take(v->is_string() ? v->get_ref<const std::string&>().size() : v->dump().size())) {
        return tooLarge(ctx.limit);
      }
      return v;
    }
    std::string out;
    bool over = false;  // a literal part did not fit
    Status st = scan(
        s,
        [&](const Reference& r) -> Status {
          auto v = resolve(r, ctx);
          if (!v) return v.error();
          const std::string text = asText(*v);
          if (over || !take(text.size())) return tooLarge(ctx.limit);
          out += text;
          return Status::Ok();
        },
        [&](std::string_view text) {
          over = over || !take(text.size());
          if (!over) out += text;
        });
    if (!st) return st.error();
    if (over) return tooLarge(ctx.limit);
    return Json(std::move(out));
  }
  if (value.is_object()) {
    Json out = Json::object();
    for (const auto& [k, v] : value.items()) {
      if (!take(k.size())) return tooLarge(ctx.limit);
      auto r = substituteWithin(v, ctx, left);
      if (!r) return r.error();
      out[k] = std::move(*r);
    }
    return out;
  }
  if (value.is_array()) {
    Json out = Json::array();
    for (const auto& v : value) {
      auto r = substituteWithin(v, ctx, left);
      if (!r) return r.error();
      out.push_back(std::move(*r));
    }
    return out;
  }
  if (!take(1)) return tooLarge(ctx.limit);
  return value;
}

}  // namespace

Expected<Json> substitute(const Json& value, const SubstitutionContext& ctx) {
  std::size_t left = ctx.limit;
  return substituteWithin(value, ctx, left);
}

}  // namespace plugboard::core
