// core/workflows/model.h: the one workflow model every front end parses into.
//
// plugboard's TOML, Argo's Workflow YAML and Arcaflow's workflow.yaml are front ends
// (core/frontends/) that build a WorkflowModel; the engine (core/workflows/engine.h) runs
// it and knows no front end. The model is Argo's template model, because it is the most
// general of the three: a workflow is a set of named templates and an entry point; a
// template is a leaf (a plugin call, a container, a script, a suspend) or a composite
// (`steps`: groups run one after the other, the calls of a group in parallel; `dag`: tasks
// with dependencies). A composite's children are TemplateCalls: a template, its arguments,
// a condition, a loop, what to do when it fails, an exit handler.
//
// Text that the engine fills in at run time is kept as written, in the model's one tag
// syntax: `{{name.path}}` (a variable) and `{{=expression}}` (an expression,
// core/workflows/expression.h). A string that is exactly one tag takes the value's type;
// otherwise values are spliced in as text. A front end with another syntax (TOML's
// `${...}`) rewrites its references into tags; a literal "{{" becomes `{{="{{"}}`.
//
// Every element keeps the SourcePos of its text, so that the engine's and the checks'
// messages name file:line. Value types; thread-compatible.
#ifndef PLUGBOARD_CORE_WORKFLOWS_MODEL_H_
#define PLUGBOARD_CORE_WORKFLOWS_MODEL_H_

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/base/duration.h"
#include "core/base/expected.h"

namespace plugboard::core {

using Json = nlohmann::json;

// A file's name as the model's elements keep it: one shared copy of each name for the
// whole process (names are interned and never freed; a process reads few files), so that
// the SourceRef of every element costs a pointer, not a string. Converts to and from
// std::string; compares and prints as its text.
class SourceFile {
 public:
  SourceFile() = default;  // ""
  SourceFile(std::string_view name);  // NOLINT: a name is a file
  SourceFile(const std::string& name) : SourceFile(std::string_view(name)) {}  // NOLINT
  SourceFile(const char* name) : SourceFile(std::string_view(name)) {}         // NOLINT
  const std::string& str() const { return *text_; }
  operator const std::string&() const { return *text_; }  // NOLINT
  bool empty() const { return text_->empty(); }

  friend bool operator==(const SourceFile& a, const SourceFile& b) { return a.text_ == b.text_; }
  friend bool operator==(const SourceFile& a, const std::string& b) { return *a.text_ == b; }
  friend bool operator==(const SourceFile& a, const char* b) { return *a.text_ == b; }
  friend std::string operator+(const SourceFile& a, std::string_view b) {
    return *a.text_ + std::string(b);
  }
  friend std::string operator+(std::string_view a, const SourceFile& b) {
    return std::string(a) + *b.text_;
  }
  friend std::ostream& operator<<(std::ostream& out, const SourceFile& f) { return out << *f.text_; }

 private:
  static const std::string kEmpty;
  const std::string* text_ = &kEmpty;
};

// A part of a value that most values leave out (a template's container, its retryStrategy;
// a call's loop; a node's result), held out of line so that it costs a pointer until set.
// An optional whose reads never fail: an unset part reads as T's defaults. A write
// through a non-const `->` or `*` sets it (to T's defaults first), so a front end fills
// one as it would a member; has_value() / `if (part)` tell whether it was set. Copies
// are deep (a model is a value type).
template <class T>
class Part {
 public:
  Part() = default;
  Part(T value) : p_(std::make_unique<T>(std::move(value))) {}  // NOLINT: as std::optional
  Part(const Part& o) : p_(o.p_ ? std::make_unique<T>(*o.p_) : nullptr) {}
  Part(Part&&) noexcept = default;
  Part& operator=(const Part& o) {
    if (this != &o) p_ = o.p_ ? std::make_unique<T>(*o.p_) : nullptr;
    return *this;
  }
  Part& operator=(Part&&) noexcept = default;
  Part& operator=(T value) {
    p_ = std::make_unique<T>(std::move(value));
    return *this;
  }

  bool has_value() const { return p_ != nullptr; }
  explicit operator bool() const { return has_value(); }
  void reset() { p_.reset(); }

  const T& operator*() const { return p_ ? *p_ : defaults(); }
  const T* operator->() const { return &**this; }
  T& operator*() {
    if (!p_) p_ = std::make_unique<T>();
    return *p_;
  }
  T* operator->() { return &**this; }

 private:
  static const T& defaults() {
    static const T kDefaults{};
    return kDefaults;
  }
  std::unique_ptr<T> p_;
};

// Where a model element was written: the file (as given to the front end) and 1-based
// line and column (0: unknown).
struct SourceRef {
  SourceFile file;
  int line = 0;
  int column = 0;
  std::string text() const;  // "file:line:column", "file:line" or "file"
};

// An input parameter of a template (Argo's inputs.parameters) or of the workflow
// (spec.arguments.parameters, TOML's [inputs]).
struct ParameterDecl {
  std::string name;
  std::optional<Json> value;          // fixed value; wins over arguments (Argo's `value`)
  std::optional<Json> default_value;  // used when no argument gives one
  std::vector<std::string> enum_values;  // when set, the value must be one of these
  std::string description;
  SourceRef where;
};

// Where an output parameter's value comes from once the template's node ended.
struct OutputParameterDecl {
  std::string name;
  enum class From {
    kSupplied,    // the plugin's outputs.parameters (valueFrom.supplied; plugin templates)
    kPath,        // a file in the container after it exited (valueFrom.path)
    kParameter,   // a tag over the children's outputs (valueFrom.parameter)
    kExpression,  // an expression over the children's outputs (valueFrom.expression)
    kValue,       // a value given in place (`value`), may hold tags
  };
  From from = From::kSupplied;
  std::string source;                 // the path, tag text or expression
  std::optional<Json> default_value;  // when the source yields nothing
  std::string global_name;            // also a workflow output under this name
  SourceRef where;
};

struct RetryStrategy {
  std::optional<std::string> limit;  // a number or a tag; none: retry without limit
  // Which failures are retried: Argo's retryPolicy.
  enum class Policy { kOnFailure, kOnError, kOnTransientError, kAlways };
  Policy policy = Policy::kOnFailure;
  std::optional<Millis> backoff;      // backoff.duration; none: retry at once
  double factor = 1.0;                // backoff.factor
  std::optional<Millis> max_backoff;  // backoff.cap (Argo's maxDuration is max_total)
  std::optional<Millis> max_total;    // backoff.maxDuration: no retry starts after this
  std::string expression;             // retry only while this is true ({{=}} syntax)
  SourceRef where;
};

// A loop over a TemplateCall: one child per item, `{{item}}` (and `{{item.key}}`) bound.
struct Loop {
  enum class Kind { kNone, kItems, kSequence, kParam };
  Kind kind = Kind::kNone;
  Json items = Json::array();  // kItems: the list as written (values may hold tags)
  // kSequence: count or end, start, format (each may hold tags); Argo's withSequence.
  std::string count, start, end, format;
  std::string param;  // kParam: a tag or text that yields a JSON list
  SourceRef where;
};

// A call of a template from a `steps` group or a `dag` (Argo's WorkflowStep / DAGTask).
struct TemplateCall {
  std::string name;
  std::string template_name;  // a template of this workflow (templateRef: resolved by the
                              // front end into one, named "<wft>/<template>")
  std::vector<std::pair<std::string, Json>> arguments;  // parameter -> value (may hold tags)
  std::string when;                                      // a condition; empty: always
  Part<Loop> loop;  // unset: no loop
  // dag only: `dependencies` (all must succeed) or `depends` (an expression over
  // TASK, TASK.Succeeded, .Failed, .Errored, .Skipped, .Omitted, .Daemoned,
  // .AnySucceeded, .AllFailed with &&, ||, !). The front end writes `dependencies` as
  // the depends expression "A && B"; `depends_on` lists every task named in it.
  std::string depends;
  std::vector<std::string> depends_on;
  bool continue_on_failed = false;
  bool continue_on_error = false;
  std::string on_exit;  // a template run after this call ended (Argo's onExit / hooks.exit)
  // hooks.exit's arguments: parameter -> value, filled where the call's own arguments are
  // (so they may name this call's outputs: `{{steps.NAME.outputs.parameters.x}}`).
  std::vector<std::pair<std::string, Json>> on_exit_arguments;
  // A front end may share one plugin template among calls that differ only in the plugin's
  // args and the template's name (TOML: one template per plugin and settings, not per
  // step): `plugin_args`, when not null, are this call's args, filled in the called
  // template's scope as its own would be; with `names_leaf`, the template the plugin
  // receives is named as this call.
  Json plugin_args;
  bool names_leaf = false;
  SourceRef where;
};

// What a leaf does.
struct PluginCall {  // an executor-plugin template: routed like serve's calls
  std::string key;      // the plugin's key as written (Argo: the one key under `plugin`)
  std::string version;  // empty: the highest installed
  std::string rpc = "template.execute";
  Json args = Json::object();  // the body under the key (may hold tags)
  std::string deployer;        // empty: the default order
  Json deploy_options;  // null: none (an empty object would cost an allocation per template)
  // deploy_options are the operator's (an Arcaflow engine configuration file), not the
  // workflow's: a workflow may set only what a deployer allows a step.
  bool deploy_options_configured = false;
  bool poll = false;  // poll the plugins that provide `rpc` when `key` names none
};

struct ContainerRun {  // container and script templates: run once, to the end, with podman
  std::string image;
  std::vector<std::string> command;
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;  // values may hold tags
  std::string working_dir;
  std::optional<std::string> source;  // script templates: written to a file and run
};

struct Template {
  enum class Kind { kPlugin, kContainer, kScript, kSuspend, kSteps, kDag };
  std::string name;
  Kind kind = Kind::kPlugin;
  std::vector<ParameterDecl> inputs;
  std::vector<OutputParameterDecl> outputs;

  PluginCall plugin;        // kPlugin
  Part<ContainerRun> container;  // kContainer, kScript
  std::string suspend_for;  // kSuspend: a duration or a tag; empty: until resumed
  std::vector<std::vector<TemplateCall>> steps;  // kSteps: groups in order
  std::vector<TemplateCall> tasks;               // kDag
  std::string dag_target;  // kDag: run only these tasks (and what they need); empty: all
  // Stop starting children after one failed: kDag dag.failFast (default true), kSteps the
  // template's failFast (Argo's default false; the front end says).
  bool fail_fast = true;

  Part<RetryStrategy> retry;
  std::string timeout;  // a leaf's deadline per attempt (duration or tag); empty: default
  std::optional<Millis> active_deadline;  // the node's whole deadline, retries included
  std::optional<int> parallelism;         // children running at once
  std::string hooks_exit;                 // template run when this template's node ended
  // The whole template as the peer wrote it, as JSON: what an Argo sidecar receives
  // (substituted) for a plugin template; null for front ends without one.
  Json original;
  SourceRef where;
};

class Scope;  // core/workflows/expression.h

// A front end's own language for the values of its plugin calls (Arcaflow's `!expr`,
// `!oneof`, ...: marked JSON in PluginCall::args), when the model's `{{...}}` tags cannot say
// them. The engine asks it once per call, when the call would start (after its `when` and
// dependencies), with a Scope of the run's values: `workflow.parameters` (typed when the
// model's parameters are), `tasks.NAME.status`, `tasks.NAME.message` and
// `tasks.NAME.outputs.values` (the typed values a plugin answered) of the calls beside it.
// Immutable; called on the scheduling thread only.
class ValueLanguage {
 public:
  struct Decision {
    bool run = true;  // false: the call is Skipped with `message`, nothing is called
    Json args;        // run: the plugin's args, every marked value filled
    std::string message;
    // A dag call: its children running at once, in place of the template's parallelism.
    std::optional<int> parallelism;
  };
  virtual ~ValueLanguage() = default;
  // An error ends the call's node in Error with its message. Asked for calls of plugin
  // and dag templates; for a dag, `args` (an object, may be empty) sets the named input
  // parameters of the call (each JSON value given as its text), over its arguments.
  virtual Expected<Decision> decide(const TemplateCall& call, const Template& tmpl,
                                    const Scope& scope) const = 0;
  // Asked when a dag node ended, whatever its phase, with the dag's scope (its tasks, its
  // inputs; a loop task's `tasks.NAME.outputs.values` is the list of its items' values,
  // null where an item has none): the node's outputs.values (what its caller reads as
  // `tasks.NAME.outputs.values`), or nullopt for none.
  virtual std::optional<Json> outputs(const Template& tmpl, const Scope& scope) const {
    (void)tmpl, (void)scope;
    return std::nullopt;
  }
  // Asked for a dag when it starts and each time one of its tasks ended, with the dag's
  // scope: its outputs.values when its outcome is decided now (an Arcaflow workflow ends
  // once one of its outputs resolves), else nullopt. The dag then stops: each call
  // running under it is cancelled (its plugin's answer to the cancel stays its outcome),
  // whatever would start under it ends Omitted, and once all of them ended the dag ends
  // with this value (outputs() is not asked): Succeeded, or Error with failure()'s message.
  virtual std::optional<Json> ends(const Template& tmpl, const Scope& scope) const {
    (void)tmpl, (void)scope;
    return std::nullopt;
  }
  // What ends() gave, when it says the dag's value could not be made (an expression of an
  // output that failed): why, and the dag ends in Error with it; empty when it is a value.
  virtual std::string failure(const Json& value) const {
    (void)value;
    return {};
  }
  // Asked for each call still running when a call beside it ended: true to cancel it now
  // (its plugin's answer to the cancel stays its outcome), with why in `message`.
  virtual bool stops(const TemplateCall& call, const Scope& scope, std::string* message) const {
    (void)call, (void)scope, (void)message;
    return false;
  }
};

struct WorkflowModel {
  std::string name;  // Argo: metadata.name, or generateName with a suffix the engine adds
  bool generate_name = false;
  std::string description;
  std::filesystem::path file;
  std::string front_end;  // "toml", "argo", "arcaflow": for messages only

  std::vector<ParameterDecl> parameters;  // the workflow's parameters (arguments/inputs)
  // A tag that is a whole string and names a workflow parameter takes the parameter's JSON
  // type (TOML's inputs: `n = 3` stays a number); false: parameters are text, as Argo's.
  bool typed_parameters = false;
  std::vector<Template> templates;
  std::string entrypoint;
  std::string on_exit;  // spec.onExit: a template run when the workflow ended
  std::optional<int> parallelism;         // spec.parallelism: leaves running at once
  std::optional<Millis> active_deadline;  // spec.activeDeadlineSeconds
  Json labels = Json::object();           // metadata.labels
  // Executor plugins the workflow brings (Argo's spec.executorPlugins): artifacts for
  // the registry, as the front end read them.
  Json executor_plugins = Json::array();
  // Set by a front end whose plugin args are in a language of its own; null: the args'
  // `{{...}}` tags are filled as everywhere else.
  std::shared_ptr<const ValueLanguage> values;

  const Template* find(const std::string& template_name) const;
};

// A problem in a workflow file: where, what, and the step or template it is about.
struct ModelProblem {
  SourceRef where;
  std::string subject;  // e.g. "template 'main'", "step 'greet'"; may be empty
  std::string message;
  // "file:line:column: subject: message"
  std::string oneLine() const;
};

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_WORKFLOWS_MODEL_H_
