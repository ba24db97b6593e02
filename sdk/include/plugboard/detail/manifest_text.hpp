// plugboard/detail/manifest_text.hpp: compile-time rendering of a plugin's manifest.
//
// Part of the SDK's implementation; plugin authors do not include it directly. The
// registration macro hands the author's JSON object literal to these consteval functions,
// which strip insignificant whitespace, append the "kind" and "abi" members (and
// "polled":false to a plugin's object that does not say "polled"), and check
// the shape (one object; strings, brackets and braces balanced), so that a malformed
// manifest is a compile error rather than a plugin the runtime refuses later.
#ifndef PLUGBOARD_DETAIL_MANIFEST_TEXT_HPP_
#define PLUGBOARD_DETAIL_MANIFEST_TEXT_HPP_

#include <array>
#include <cstddef>

#include "plugboard/abi.h"

namespace plugboard::detail {

consteval bool isJsonSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Calls sink(c) for every character of `text` that is significant JSON, i.e. everything
// except whitespace outside strings. Returns false if the text is not one balanced object.
template <std::size_t N, class Sink>
consteval bool forEachSignificant(const char (&text)[N], Sink sink) {
  char stack[64] = {};
  std::size_t depth = 0;
  bool in_string = false;
  bool escaped = false;
  bool closed = false;  // the outer object has ended
  for (std::size_t i = 0; i + 1 < N; ++i) {
    const char c = text[i];
    if (in_string) {
      if (static_cast<unsigned char>(c) < 0x20) return false;
      sink(c);
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (isJsonSpace(c)) continue;
    if (closed) return false;
    if (depth == 0 && c != '{') return false;
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (depth == sizeof stack) return false;
      stack[depth++] = c == '{' ? '}' : ']';
    } else if (c == '}' || c == ']') {
      if (depth == 0 || stack[depth - 1] != c) return false;
      if (--depth == 0) closed = true;
    }
    sink(c);
  }
  return closed && !in_string;
}

template <std::size_t N>
consteval bool manifestShapeOk(const char (&text)[N]) {
  return forEachSignificant(text, [](char) {});
}

// Whether the author's object has a top-level member "polled".
template <std::size_t N>
consteval bool hasPolledMember(const char (&text)[N]) {
  constexpr char kMember[] = "\"polled\":";
  std::size_t depth = 0, matched = 0;
  bool found = false, in_string = false, escaped = false;
  forEachSignificant(text, [&](char c) {
    if (depth == 1 && !found) {
      matched = c == kMember[matched] ? matched + 1 : (c == kMember[0] ? 1 : 0);
      if (matched == sizeof kMember - 1) found = true;
    }
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      return;
    }
    if (c == '"') in_string = true;
    else if (c == '{' || c == '[') ++depth;
    else if (c == '}' || c == ']') --depth;
  });
  return found;
}

// Whether "polled":false is appended: to a plugin's (kind "executor") object that does not
// say whether polls reach it. The runtime then never polls it (docs/plugin-authoring.md).
template <std::size_t N, std::size_t K>
consteval bool appendsPolled(const char (&text)[N], const char (&kind)[K]) {
  return K > 1 && kind[0] == 'e' && !hasPolledMember(text);
}

// The members the SDK appends; the author's object never sets them but "polled".
template <std::size_t N, std::size_t K>
consteval std::size_t suffixSize(const char (&text)[N], const char (&kind)[K]) {
  // ,"kind":"<kind>","abi":<major>[,"polled":false]}
  std::size_t digits = 1;
  for (unsigned v = PLUGBOARD_ABI_MAJOR; v >= 10; v /= 10) ++digits;
  return 9 + (K - 1) + 8 + digits + (appendsPolled(text, kind) ? 15 : 0) + 1;
}

// Size of the rendered manifest including its terminating NUL.
template <std::size_t N, std::size_t K>
consteval std::size_t renderedSize(const char (&text)[N], const char (&kind)[K]) {
  std::size_t count = 0;
  forEachSignificant(text, [&count](char) { ++count; });
  const bool empty_object = count == 2;  // "{}"
  return count - 1 - (empty_object ? 1 : 0) + suffixSize(text, kind) + 1;
}

template <std::size_t Out, std::size_t N, std::size_t K>
consteval std::array<char, Out> renderManifest(const char (&text)[N], const char (&kind)[K]) {
  std::array<char, Out> out{};
  std::size_t n = 0;
  forEachSignificant(text, [&](char c) { out[n++] = c; });
  --n;  // drop the closing brace; the suffix closes the object
  auto put = [&](const char* s) {
    while (*s) out[n++] = *s++;
  };
  if (n > 1) put(",");
  put("\"kind\":\"");
  put(kind);
  put("\",\"abi\":");
  char digits[12] = {};
  std::size_t d = 0;
  for (unsigned v = PLUGBOARD_ABI_MAJOR;; v /= 10) {
    digits[d++] = static_cast<char>('0' + v % 10);
    if (v < 10) break;
  }
  while (d > 0) out[n++] = digits[--d];
  if (appendsPolled(text, kind)) put(",\"polled\":false");
  put("}");
  out[n] = '\0';
  return out;
}

}  // namespace plugboard::detail

#endif  // PLUGBOARD_DETAIL_MANIFEST_TEXT_HPP_
