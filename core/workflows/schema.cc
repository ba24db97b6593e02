#include "core/workflows/schema.h"

#include <cmath>

#include <re2/re2.h>

#include "core/base/text.h"

namespace plugboard::core {
namespace {

std::string typeOf(const Json& v) {
  switch (v.type()) {
    case Json::value_t::object: return "object";
    case Json::value_t::array: return "array";
    case Json::value_t::string: return "string";
    case Json::value_t::boolean: return "boolean";
    case Json::value_t::null: return "null";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned: return "integer";
    default: return "number";
  }
}

bool hasType(const Json& v, const std::string& type) {
  const std::string actual = typeOf(v);
  if (type == "number") return actual == "number" || actual == "integer";
  if (type == "integer" && actual == "number") {
    // A whole number, however large (1e300 is one; converting it to an integer type is
    // not defined).
    const double d = v.get<double>();
    return std::isfinite(d) && std::trunc(d) == d;
  }
  return actual == type;
}

class Checker {
 public:
  explicit Checker(const std::function<bool(const Json&)>& unknown) : unknown_(unknown) {}

  void check(const Json& v, const Json& s, const std::string& where) {
    if (!s.is_object()) return;
    if (unknown_ && unknown_(v)) {
      saw_unknown_ = true;
      return;
    }
    if (auto t = s.find("type"); t != s.end()) {
      std::vector<std::string> types;
      if (t->is_string()) types.push_back(t->get<std::string>());
      if (t->is_array()) {
        for (const auto& x : *t) {
          if (x.is_string()) types.push_back(x.get<std::string>());
        }
      }
      bool ok = types.empty();
      for (const auto& type : types) ok = ok || hasType(v, type);
      if (!ok) {
        fail(where, "expected " + join(types, " or ") + ", got " + typeOf(v));
        return;
      }
    }
    if (auto e = s.find("enum"); e != s.end() && e->is_array()) {
      bool found = false;
      for (const auto& x : *e) found = found || x == v;
      if (!found) fail(where, "must be one of " + e->dump() + ", got " + v.dump());
    }
    if (auto c = s.find("const"); c != s.end() && *c != v) {
      fail(where, "must be " + c->dump() + ", got " + v.dump());
    }
    if (v.is_number()) checkNumber(v, s, where);
    if (v.is_string()) checkString(v.get<std::string>(), s, where);
    if (v.is_array()) checkArray(v, s, where);
    if (v.is_object()) checkObject(v, s, where);
    // allOf, and if/then/else: how a schema says that one member chooses the shape of the
    // others (a tagged union, such as an Arcaflow plugin's one_of types).
    if (auto all = s.find("allOf"); all != s.end() && all->is_array()) {
      for (const auto& sub : *all) check(v, sub, where);
    }
    if (auto cond = s.find("if"); cond != s.end() && cond->is_object()) {
      Checker probe(unknown_);
      probe.check(v, *cond, where);
      // A condition on a value not known yet chooses neither branch.
      const char* branch = probe.saw_unknown_ ? nullptr : probe.problems.empty() ? "then" : "else";
      if (auto b = branch ? s.find(branch) : s.end(); b != s.end()) check(v, *b, where);
    }
  }

  std::vector<std::string> problems;

 private:
  void fail(const std::string& where, const std::string& what) {
    problems.push_back(where + ": " + what);
  }

  void checkNumber(const Json& v, const Json& s, const std::string& where) {
    const double d = v.get<double>();
    auto bound = [&](const char* key, auto violates, const char* text) {
      if (auto b = s.find(key); b != s.end() && b->is_number() && violates(d, b->get<double>())) {
        fail(where, std::string(text) + " " + b->dump() + ", got " + v.dump());
      }
    };
    bound("minimum", [](double x, double b) { return x < b; }, "must be at least");
    bound("maximum", [](double x, double b) { return x > b; }, "must be at most");
    bound("exclusiveMinimum", [](double x, double b) { return x <= b; }, "must be more than");
    bound("exclusiveMaximum", [](double x, double b) { return x >= b; }, "must be less than");
  }

  void checkString(const std::string& str, const Json& s, const std::string& where) {
    if (auto m = s.find("minLength"); m != s.end() && m->is_number_unsigned() &&
                                      str.size() < m->get<std::size_t>()) {
      fail(where, "must be at least " + m->dump() + " characters long");
    }
    if (auto m = s.find("maxLength"); m != s.end() && m->is_number_unsigned() &&
                                      str.size() > m->get<std::size_t>()) {
      fail(where, "must be at most " + m->dump() + " characters long");
    }
    if (auto p = s.find("pattern"); p != s.end() && p->is_string()) {
      // RE2, not std::regex: its time is linear in the value's length whatever the pattern,
      // and it does not recurse per character (std::regex took 11 s for "(a|b|(c|(d|e)))*x"
      // on 4 KiB and broke the stack on some tens of KiB).
      RE2::Options options;
      options.set_log_errors(false);
      const RE2 re(p->get_ref<const std::string&>(), options);
      // A pattern RE2 cannot compile (lookaround, back references) is the plugin's problem,
      // not the args'.
      if (re.ok() && !RE2::PartialMatch(str, re)) {
        fail(where, "does not match the pattern " + p->dump());
      }
    }
  }

  void checkArray(const Json& v, const Json& s, const std::string& where) {
    if (auto m = s.find("minItems"); m != s.end() && m->is_number_unsigned() &&
                                     v.size() < m->get<std::size_t>()) {
      fail(where, "must have at least " + m->dump() + " items");
    }
    if (auto m = s.find("maxItems"); m != s.end() && m->is_number_unsigned() &&
                                     v.size() > m->get<std::size_t>()) {
      fail(where, "must have at most " + m->dump() + " items");
    }
    if (auto items = s.find("items"); items != s.end() && items->is_object()) {
      for (std::size_t i = 0; i < v.size(); ++i) {
        check(v[i], *items, where + "[" + std::to_string(i) + "]");
      }
    }
  }

  void checkObject(const Json& v, const Json& s, const std::string& where) {
    if (auto r = s.find("required"); r != s.end() && r->is_array()) {
      for (const auto& name : *r) {
        if (name.is_string() && !v.contains(name.get<std::string>())) {
          fail(where, "missing required member '" + name.get<std::string>() + "'");
        }
      }
    }
    const auto props = s.find("properties");
    const auto extra = s.find("additionalProperties");
    for (const auto& [name, value] : v.items()) {
      if (props != s.end() && props->is_object() && props->contains(name)) {
        check(value, (*props)[name], where + "." + name);
      } else if (extra != s.end()) {
        if (extra->is_boolean() && !extra->get<bool>()) {
          fail(where, "unknown member '" + name + "'");
        } else if (extra->is_object()) {
          check(value, *extra, where + "." + name);
        }
      }
    }
  }

  const std::function<bool(const Json&)>& unknown_;
  bool saw_unknown_ = false;  // a value was passed as not known yet
};

}  // namespace

std::vector<std::string> checkSchema(const Json& value, const Json& schema,
                                     const std::string& where,
                                     const std::function<bool(const Json&)>& unknown) {
  Checker checker(unknown);
  checker.check(value, schema, where);
  return checker.problems;
}

}  // namespace plugboard::core
