// core/frontends/argo_templates.h: one Argo template (and the steps and tasks that call
// other templates) read into a model Template. Internal to core/frontends. Not
// thread-safe: one reader per file being read.
#ifndef PLUGBOARD_CORE_FRONTENDS_ARGO_TEMPLATES_H_
#define PLUGBOARD_CORE_FRONTENDS_ARGO_TEMPLATES_H_

#include <optional>
#include <string>
#include <vector>

#include <plugboard/host/containment.h>

#include "core/frontends/argo_yaml.h"
#include "core/workflows/model.h"

namespace plugboard::core::argo {

// A template some call names, which must end up in the model.
struct WantedTemplate {
  std::string name;    // as the model names it: "x", or "<workflow-template>/x"
  std::string by_ref;  // set for a templateRef: "<workflow-template>.<template>"
  SourceRef where;
  std::string subject;
};

// validate.go isValidWorkflowFieldName, the rule of template and dag task names (and of
// step names, validate.go isValidStepName, with each `{{...}}` taken as one letter): ""
// when `name` keeps it, else the rule.
std::string fieldNameRule(const std::string& name, bool tags_allowed = false);
// Kubernetes' rule of an object's metadata.name, a DNS-1123 subdomain, with Argo's 63
// characters at most (validate.go maxCharsInObjectName): "" when `name` keeps it, else the
// rule. `prefix`: a metadata.generateName, which may end in '-' (the suffix follows).
std::string objectNameRule(const std::string& name, bool prefix);

class TemplateReader {
 public:
  // `prefix`: "" for a Workflow's own templates, "<workflow-template>/" for those of a
  // WorkflowTemplate reached through templateRef (their calls of `template: x` mean
  // "<workflow-template>/x"). Names the templates called go to `wanted`.
  // `ceiling`: the most a container or script template's securityContext may ask for.
  TemplateReader(ArgoYaml& yaml, std::string prefix, std::vector<WantedTemplate>* wanted,
                 host::PodSecurity ceiling = host::PodSecurity::kBaseline)
      : yaml_(yaml), prefix_(std::move(prefix)), wanted_(wanted), ceiling_(ceiling) {}

  // `path` names the node in messages ("spec.templates[2]"). nullopt: not even a name, or
  // a kind refused. `name`: the name of an inline template (which has none of its own).
  std::optional<Template> read(const yaml::Node& node, const std::string& path,
                               const std::string& name = "");
  // The inline templates of steps and tasks read since the last call, each named
  // "<template>.<step>" (Argo's names have no dots, so these are nobody else's).
  std::vector<Template> takeInlined() { return std::move(inlined_); }

  // Parameters as inputs.parameters (`fixed_value`: `value` is the input's fixed value)
  // or as spec.arguments.parameters (`value` is a default that --param overrides).
  std::vector<ParameterDecl> parameters(const yaml::Node& list, const std::string& path,
                                        const std::string& subject, bool fixed_value);
  // The template a call or hook names (`template` or `templateRef`) in the model's terms;
  // "" after a problem.
  std::string calledTemplate(const yaml::Node& node, const std::string& path,
                             const std::string& subject);

 private:
  bool readKind(const yaml::Node& node, Template& t, const std::string& path,
                const std::string& subject);
  void readPlugin(const yaml::Node& node, Template& t, const std::string& path,
                  const std::string& subject);
  // `tmpl`: the template's node, whose securityContext is its pod's.
  void readContainer(const yaml::Node& node, const yaml::Node& tmpl, Template& t, bool script,
                     const std::string& path, const std::string& subject);
  void readOutputs(const yaml::Node& node, Template& t, const std::string& path,
                   const std::string& subject);
  void readRetry(const yaml::Node& node, Template& t, const std::string& path,
                 const std::string& subject);
  void readLimits(const yaml::Node& node, Template& t, const std::string& path,
                  const std::string& subject);
  void readSteps(const yaml::Node& node, Template& t, const std::string& path,
                 const std::string& subject);
  void readDag(const yaml::Node& node, Template& t, const std::string& path,
               const std::string& subject);
  // A step or a task; `dag` selects the DAGTask fields.
  std::optional<TemplateCall> readCall(const yaml::Node& node, bool dag, const std::string& path,
                                       const std::string& owner);
  void readLoop(const yaml::Node& node, TemplateCall& call, const std::string& path,
                const std::string& subject);
  void readHooks(const yaml::Node& node, TemplateCall& call, const std::string& path,
                 const std::string& subject);
  void want(const std::string& name, const std::string& by_ref, const yaml::Node& at,
            const std::string& subject);

  ArgoYaml& yaml_;
  std::string prefix_;
  std::vector<WantedTemplate>* wanted_;
  host::PodSecurity ceiling_;
  std::string owner_;  // the template being read
  std::vector<Template> inlined_;
};

}  // namespace plugboard::core::argo

#endif  // PLUGBOARD_CORE_FRONTENDS_ARGO_TEMPLATES_H_
