// core/workflows/template_text.h: the text of a leaf's template as its call sends it.
//
// What a plugin (and an Argo sidecar) receives as `template`: the template as written
// (Template::original) with its `{{...}}` tags filled, tags the scope does not know left
// as written, its name set to the call's when the call names the leaf, and each input
// parameter's `value` set to what the node resolved (Argo's controller writes these
// before the template reaches the TaskSet: workflow/common/util.go, ProcessArgs); as
// compact JSON, members in name order, invalid UTF-8 replaced.
//
// Prepared once per template: the parts without tags are written to text once, and each
// call fills only the strings that hold a tag, writing the result straight into the
// text, without copying the template as a JSON value. A template this cannot prepare
// (not an object, a tag in a name of a member, a tag where the structure the call
// rewrites must be: `inputs`, `inputs.parameters`, a parameter or its name) is filled as
// a whole and written, with the same result.
//
// Immutable once made; write() is const and thread-safe.
#ifndef PLUGBOARD_CORE_WORKFLOWS_TEMPLATE_TEXT_H_
#define PLUGBOARD_CORE_WORKFLOWS_TEMPLATE_TEXT_H_

#include <memory>
#include <string>

#include "core/workflows/tags.h"

namespace plugboard::core {

class TemplateText {
 public:
  explicit TemplateText(Json tmpl);
  ~TemplateText();
  TemplateText(TemplateText&&) noexcept;
  TemplateText& operator=(TemplateText&&) noexcept;

  // The filled template's text. `name`: the call's name, set as the template's (null:
  // the template's own); `inputs`: the node's input parameters, name -> value. Errors:
  // as fill() with FillOptions::keep_unknown (a malformed tag, an expression that fails,
  // a value over options.limit), counted over the template as written.
  Expected<std::string> write(const Scope& scope, const FillOptions& options,
                              const std::string* name, const Json& inputs) const;

  // True when calls write it from prepared parts (for tests).
  bool prepared() const { return root_ != nullptr; }

 struct Part;  // a prepared value (template_text.cc)

 private:
  Json tmpl_;                    // as written (for a template that cannot be prepared)
  std::unique_ptr<Part> root_;  // null: not prepared
};

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_WORKFLOWS_TEMPLATE_TEXT_H_
