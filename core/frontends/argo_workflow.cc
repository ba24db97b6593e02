// An Argo Workflow or WorkflowTemplate file into the model: the document, metadata, spec,
// and the templateRefs resolved against a directory of WorkflowTemplates. Field names are
// pkg/apis/workflow/v1alpha1/workflow_types.go's; the rules argo lint applies are
// workflow/validate/validate.go's (docs/decisions.md, "Argo Workflow YAML front end").
#include "core/frontends/argo_workflow.h"

#include <algorithm>
#include <map>
#include <set>

#include "core/base/read_file.h"
#include "core/frontends/argo_library.h"
#include "core/frontends/argo_templates.h"
#include "core/frontends/argo_yaml.h"

namespace plugboard::core {

namespace {

using argo::ArgoYaml;
using argo::FieldRules;
using argo::member;
using argo::quote;
using argo::TemplateLibrary;
using argo::TemplateReader;
using argo::WantedTemplate;

constexpr const char* kApiVersion = "argoproj.io/v1alpha1";

// spec fields read, and those that only place pods, label them or clean up after them on
// a cluster (accepted, no effect on one machine).
const FieldRules kSpecFields{
    {"templates", "entrypoint", "arguments", "onExit", "hooks", "parallelism",
     "activeDeadlineSeconds", "executorPlugins", "workflowTemplateRef"},
    {"serviceAccountName",
     "automountServiceAccountToken",
     "executor",
     "nodeSelector",
     "affinity",
     "tolerations",
     "imagePullSecrets",
     "dnsPolicy",
     "dnsConfig",
     "ttlStrategy",
     "priority",
     "schedulerName",
     "podGC",
     "podPriorityClassName",
     "securityContext",
     "podDisruptionBudget",
     "podMetadata",
     "workflowMetadata",
     "archiveLogs",
     "volumeClaimGC",
     "podResources"}};
const FieldRules kMetadataFields{
    {"name", "generateName", "labels", "annotations"},
    {"namespace", "uid", "resourceVersion", "generation", "creationTimestamp", "finalizers",
     "ownerReferences", "managedFields"}};

// Reads one Argo document (a mapping whose apiVersion and kind were checked).
class DocumentReader {
 public:
  DocumentReader(ArgoYaml& yaml, const ArgoReadOptions& options, WorkflowModel& model,
                 std::vector<ModelProblem>* problems)
      : yaml_(yaml),
        options_(options),
        model_(model),
        problems_(problems),
        templates_(yaml, "", &wanted_, options.containment.templates) {}

  void read(const yaml::Node& doc, bool workflow_template) {
    yaml_.checkFields(doc, "", "", {{"apiVersion", "kind", "metadata", "spec"}, {}});
    readMetadata(member(doc, "metadata"), workflow_template);
    const yaml::Node spec = member(doc, "spec");
    if (!spec.isDefined() || spec.isNull()) {
      yaml_.problem(doc, "", "spec is missing");
      return;
    }
    if (!yaml_.checkFields(spec, "spec", "", kSpecFields)) return;
    const yaml::Node ref = member(spec, "workflowTemplateRef");
    bool referenced = ref.isDefined() && !ref.isNull();
    if (referenced && !readReferencedSpec(ref, spec)) return;
    readSpec(yaml_, templates_, spec, !referenced);
    std::string& entry = model_.entrypoint;
    if (!options_.entrypoint.empty()) entry = options_.entrypoint;
    if (entry.empty()) {
      yaml_.problem(spec, "",
                    workflow_template ? "a WorkflowTemplate needs an entry point: give one "
                                        "(--entrypoint) or set spec.entrypoint"
                                      : "spec.entrypoint is required");
    } else {
      const yaml::Node at = member(spec, "entrypoint");
      wanted_.push_back(
          WantedTemplate{entry, "", yaml_.at(at.isDefined() ? at : spec), "spec.entrypoint"});
    }
    resolve();
  }

 private:
  void readMetadata(const yaml::Node& meta, bool workflow_template) {
    if (!meta.isDefined() || !yaml_.checkFields(meta, "metadata", "", kMetadataFields)) {
      yaml_.problem(meta.isDefined() ? meta : yaml::Node(), "",
                    "metadata.name or metadata.generateName is required");
      return;
    }
    model_.name = yaml_.text(meta, "name", "metadata", "");
    std::string generate = yaml_.text(meta, "generateName", "metadata", "");
    if (model_.name.empty() && !generate.empty() && !workflow_template) {
      model_.name = generate;
      model_.generate_name = true;
    }
    if (model_.name.empty()) {
      yaml_.problem(meta, "",
                    workflow_template ? "metadata.name is required"
                                      : "metadata.name or metadata.generateName is required");
    }
    for (const char* key : {"name", "generateName"}) {
      const yaml::Node given = member(meta, key);
      if (!given.isScalar() || given.text().empty()) continue;
      const bool prefix = std::string_view(key) == "generateName";
      if (const std::string rule = argo::objectNameRule(given.text(), prefix); !rule.empty()) {
        yaml_.problem(
            given, "",
            std::string("metadata.") + key + " " + quote(given.text()) + " is invalid: " + rule);
      }
    }
    const yaml::Node labels = member(meta, "labels");
    if (labels.isDefined() && !labels.isNull()) {
      model_.labels = argo::toJson(labels);
      if (!model_.labels.is_object()) {
        yaml_.problem(labels, "", "metadata.labels must be a mapping");
        model_.labels = Json::object();
      }
    }
    const yaml::Node annotations = member(meta, "annotations");
    if (annotations.isMap()) {
      const yaml::Node d = member(annotations, "workflows.argoproj.io/description");
      if (d.isScalar()) model_.description = d.text();
    }
  }

  // Reads `spec` of `yaml`'s file over what the model holds: a Workflow's spec over the
  // WorkflowTemplate its workflowTemplateRef names (Argo joins them so: the workflow's
  // fields win, arguments by name; workflow/util/merge.go JoinWorkflowSpec).
  void readSpec(ArgoYaml& yaml, TemplateReader& reader, const yaml::Node& spec,
                bool templates_required) {
    const yaml::Node list = yaml.list(spec, "templates", "spec", "");
    std::set<std::string> names;
    for (const auto& t : model_.templates) names.insert(t.name);
    for (size_t i = 0; i < list.size(); ++i) {
      auto t = reader.read(list[i], "spec.templates[" + std::to_string(i) + "]");
      std::vector<Template> inlined = reader.takeInlined();
      if (!t) {  // refused, with a problem: its callers are not told it is undefined too
        const yaml::Node name = member(list[i], "name");
        if (name.isDefined() && name.isScalar()) refused_.insert(name.text());
        continue;
      }
      if (!names.insert(t->name).second) {  // validate.go validateTemplates
        yaml.problem(list[i], "template " + quote(t->name), "template name is not unique");
        continue;
      }
      model_.templates.push_back(std::move(*t));
      for (auto& one : inlined) model_.templates.push_back(std::move(one));
    }
    if (list.size() == 0 && templates_required) yaml.problem(spec, "", "spec.templates is empty");

    std::string entry = yaml.text(spec, "entrypoint", "spec", "");
    if (!entry.empty()) model_.entrypoint = entry;

    const yaml::Node args = member(spec, "arguments");
    if (args.isDefined() && !args.isNull() &&
        yaml.checkFields(args, "spec.arguments", "", {{"parameters"}, {}})) {
      for (auto& p :
           reader.parameters(member(args, "parameters"), "spec.arguments.parameters", "", false)) {
        auto same = std::find_if(model_.parameters.begin(), model_.parameters.end(),
                                 [&](const ParameterDecl& d) { return d.name == p.name; });
        if (same == model_.parameters.end()) {
          model_.parameters.push_back(std::move(p));
        } else if (p.default_value) {
          same->default_value = p.default_value;
          same->where = p.where;
        }
      }
    }

    std::string on_exit = yaml.text(spec, "onExit", "spec", "");
    if (!on_exit.empty()) {
      model_.on_exit = on_exit;
      wanted_.push_back(
          WantedTemplate{on_exit, "", yaml.at(member(spec, "onExit")), "spec.onExit"});
    }
    const yaml::Node hooks = member(spec, "hooks");
    if (argo::exitHook(yaml_, hooks, "spec.hooks", "")) {
      const yaml::Node exit = member(hooks, "exit");
      if (yaml.checkFields(exit, "spec.hooks.exit", "", {{"template", "templateRef"}, {}})) {
        // Argo runs spec.hooks.exit as spec.onExit (workflow_types.go GetExitHook).
        if (!on_exit.empty()) {
          yaml.problem(exit, "", "spec.onExit and spec.hooks.exit are exclusive; choose one");
        } else {
          model_.on_exit = reader.calledTemplate(exit, "spec.hooks.exit", "");
        }
      }
    }

    if (auto p = yaml.integer(spec, "parallelism", "spec", "")) {
      if (*p < 0) {
        yaml.problem(member(spec, "parallelism"), "", "spec.parallelism must not be negative");
      } else {
        model_.parallelism = static_cast<int>(*p);
      }
    }
    if (auto d = yaml.integer(spec, "activeDeadlineSeconds", "spec", "")) {
      auto deadline = durationFromSeconds(*d);
      if (*d <= 0 || !deadline) {
        yaml.problem(member(spec, "activeDeadlineSeconds"), "",
                     "spec.activeDeadlineSeconds must be a positive integer > 0");
      } else {
        model_.active_deadline = *deadline;
      }
    }
    readExecutorPlugins(yaml, member(spec, "executorPlugins"));
  }

  // spec.executorPlugins (Argo v4.1, workflow_types.go ExecutorPlugin): each becomes the
  // ExecutorPlugin manifest `argo executor-plugin build` reads, for the argo deployer.
  void readExecutorPlugins(ArgoYaml& yaml, const yaml::Node& list) {
    if (!list.isDefined() || list.isNull()) return;
    if (!list.isSequence()) {
      yaml.problem(list, "", "spec.executorPlugins must be a list");
      return;
    }
    for (size_t i = 0; i < list.size(); ++i) {
      const yaml::Node p = list[i];
      std::string at = "spec.executorPlugins[" + std::to_string(i) + "]";
      if (!yaml.checkFields(p, at, "", {{"metadata", "spec"}, {}})) continue;
      const yaml::Node name = member(member(p, "metadata"), "name");
      const yaml::Node container = member(member(member(p, "spec"), "sidecar"), "container");
      if (!name.isScalar() || name.text().empty()) {
        yaml.problem(p, "", at + ".metadata.name is required");
        continue;
      }
      if (!container.isMap() || !member(container, "image").isScalar()) {
        yaml.problem(p, "", at + ".spec.sidecar.container with an image is required");
        continue;
      }
      const std::string cat = at + ".spec.sidecar.container";
      if (Status st = host::checkImageReference(member(container, "image").text()); !st) {
        yaml.problem(member(container, "image"), "", cat + ".image: " + st.error().message());
        continue;
      }
      if (const yaml::Node security = member(container, "securityContext"); security.isDefined()) {
        const Json security_json = argo::toJson(security);
        if (auto read = host::readSecurityContext(
                &security_json, nullptr, options_.containment.plugins, cat,
                "the configuration's [containment] executor_plugins allows more");
            !read) {
          yaml.problem(security, "", read.error().message());
          continue;
        }
      }
      model_.executor_plugins.push_back(Json{{"apiVersion", kApiVersion},
                                             {"kind", "ExecutorPlugin"},
                                             {"metadata", argo::toJson(member(p, "metadata"))},
                                             {"spec", argo::toJson(member(p, "spec"))}});
    }
  }

  // spec.workflowTemplateRef: the WorkflowTemplate's spec, read from its own file, under
  // the workflow's. validate.go: a workflow that references one has no templates.
  bool readReferencedSpec(const yaml::Node& ref, const yaml::Node& spec) {
    if (!yaml_.checkFields(ref, "spec.workflowTemplateRef", "", {{"name", "clusterScope"}, {}}))
      return false;
    if (member(spec, "templates").isDefined()) {
      yaml_.problem(member(spec, "templates"), "",
                    "spec.templates is invalid when the workflow refers to a WorkflowTemplate "
                    "(spec.workflowTemplateRef)");
      return false;
    }
    std::string name = yaml_.text(ref, "name", "spec.workflowTemplateRef", "");
    bool cluster =
        yaml_.boolean(ref, "clusterScope", "spec.workflowTemplateRef", "").value_or(false);
    std::string why = "no templates directory was given (--templates DIR)";
    auto found = library() ? library()->findDocument(name, cluster, why) : std::nullopt;
    if (!found) {
      yaml_.problem(ref, "", "spec.workflowTemplateRef " + quote(name) + " not found: " + why);
      return false;
    }
    ArgoYaml& yaml = *found->yaml;
    const yaml::Node wft_spec = member(found->node, "spec");
    if (!yaml.checkFields(wft_spec, "spec", "", kSpecFields)) return false;
    TemplateReader reader(yaml, "", &wanted_, options_.containment.templates);
    readSpec(yaml, reader, wft_spec, true);
    return true;
  }

  TemplateLibrary* library() {
    if (options_.templates_dir.empty()) return nullptr;
    if (!library_) library_.emplace(options_.templates_dir, problems_);
    return &*library_;
  }

  // Every template named by a call must be in the model: the workflow's own, or one a
  // templateRef (or a call inside such a template) brings from the templates directory.
  void resolve() {
    std::set<std::string> have = refused_;
    for (const auto& t : model_.templates) have.insert(t.name);
    for (size_t i = 0; i < wanted_.size(); ++i) {
      WantedTemplate w = wanted_[i];  // a copy: reading a template may add to wanted_
      if (have.count(w.name) != 0) continue;
      auto slash = w.name.find('/');
      if (slash == std::string::npos) {  // validate.go: "template name '%s' undefined"
        yaml_.problem(w.where, w.subject, "template name " + quote(w.name) + " undefined");
        continue;
      }
      std::string what = w.by_ref.empty()
                             ? "template name " + quote(w.name.substr(slash + 1)) +
                                   " (of WorkflowTemplate " + quote(w.name.substr(0, slash)) + ")"
                             : "template reference " + w.by_ref;
      if (library() == nullptr) {
        yaml_.problem(w.where, w.subject,
                      what + " not found: no templates directory was given (--templates DIR)");
        continue;
      }
      std::string why;
      auto found = library()->find(w.name.substr(0, slash), w.name.substr(slash + 1), why);
      have.insert(w.name);  // one problem or one template, however often it is called
      if (!found) {
        yaml_.problem(w.where, w.subject, what + " not found: " + why);
        continue;
      }
      TemplateReader reader(*found->yaml, w.name.substr(0, slash + 1), &wanted_,
                            options_.containment.templates);
      if (auto t = reader.read(found->node, found->path)) model_.templates.push_back(std::move(*t));
      for (auto& inlined : reader.takeInlined()) model_.templates.push_back(std::move(inlined));
    }
  }

  ArgoYaml& yaml_;
  const ArgoReadOptions& options_;
  WorkflowModel& model_;
  std::vector<ModelProblem>* problems_;
  std::vector<WantedTemplate> wanted_;
  std::set<std::string> refused_;  // templates read with a problem, left out of the model
  std::optional<TemplateLibrary> library_;
  TemplateReader templates_;
};

}  // namespace

ArgoWorkflowLoad readArgoWorkflow(std::string_view text, const std::string& file_label,
                                  const ArgoReadOptions& options) {
  ArgoWorkflowLoad load;
  ArgoYaml yaml(file_label, &load.problems);
  std::vector<yaml::Document> docs = yaml.documents(text);
  if (docs.empty()) {
    if (load.problems.empty()) {
      yaml.problem(
          SourceRef{file_label, 0, 0}, "",
          "the file is empty; expected an Argo Workflow (apiVersion: argoproj.io/v1alpha1)");
    }
    return load;
  }
  if (docs[0].refused) {
    yaml.problem(*docs[0].refused);
    return load;
  }
  const yaml::Node doc = docs[0].root;
  if (docs.size() > 1) {
    yaml.problem(docs[1].refused ? yaml.at(docs[1].refused->mark) : yaml.at(docs[1].root), "",
                 "a second YAML document: plugboard runs one workflow per file");
  }
  const yaml::Node api = member(doc, "apiVersion");
  if (!api.isScalar() || api.text() != kApiVersion) {
    yaml.problem(api.isDefined() ? api : doc, "",
                 "not an Argo workflow: apiVersion is " +
                     (api.isScalar() ? quote(api.text()) : std::string("missing")) +
                     ", expected argoproj.io/v1alpha1");
    return load;
  }
  const yaml::Node kind = member(doc, "kind");
  std::string k = kind.isScalar() ? kind.text() : "";
  bool workflow_template = k == "WorkflowTemplate" || k == "ClusterWorkflowTemplate";
  if (k != "Workflow" && !workflow_template) {
    yaml.problem(kind.isDefined() ? kind : doc, "",
                 "kind " + (k.empty() ? std::string("is missing") : quote(k) + " is not run") +
                     ": plugboard runs a Workflow, or a WorkflowTemplate from an entry point");
    return load;
  }
  WorkflowModel model;
  model.file = file_label;
  model.front_end = "argo";
  try {
    DocumentReader reader(yaml, options, model, &load.problems);
    reader.read(doc, workflow_template);
  } catch (const yaml::TreeLimit& e) {  // a value too deep or too large to take
    yaml.problem(yaml.at(e.mark), "", "cannot read the workflow here: " + e.message);
  }
  load.model = std::move(model);
  return load;
}

ArgoWorkflowLoad loadArgoWorkflow(const std::filesystem::path& path,
                                  const ArgoReadOptions& options) {
  auto text = readTextFile(path, "workflow file");
  if (!text) {
    ArgoWorkflowLoad load;
    // The message names the file already ("<file>: cannot read the workflow file: ...").
    load.problems.push_back(ModelProblem{SourceRef{}, "", text.error().message()});
    return load;
  }
  return readArgoWorkflow(*text, path.string(), options);
}

bool looksLikeArgo(std::string_view text) {
  yaml::Tree tree;
  // A document refused (a key given twice) is still Argo's if it says so.
  for (const yaml::Document& doc : tree.parse(text).documents) {  // none after a YAML error
    if (!doc.root.isDefined() || doc.root.isNull()) continue;
    if (!doc.root.isMap()) return false;
    return doc.root.member("apiVersion").scalar().starts_with("argoproj.io/");
  }
  return false;
}

}  // namespace plugboard::core
