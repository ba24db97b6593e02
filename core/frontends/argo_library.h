// core/frontends/argo_library.h: the WorkflowTemplates (and ClusterWorkflowTemplates) of a
// directory, which `templateRef` and `spec.workflowTemplateRef` name. Internal to
// core/frontends. Not thread-safe: one library per file read.
#ifndef PLUGBOARD_CORE_FRONTENDS_ARGO_LIBRARY_H_
#define PLUGBOARD_CORE_FRONTENDS_ARGO_LIBRARY_H_

#include <deque>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/frontends/argo_yaml.h"
#include "core/workflows/model.h"

namespace plugboard::core::argo {

// Reads every *.yaml and *.yml in the directory and below the first time it is asked,
// indexing WorkflowTemplates and ClusterWorkflowTemplates by name. A file it cannot
// read is a problem; a name defined twice is one only where it is asked for.
class TemplateLibrary {
 public:
  TemplateLibrary(std::filesystem::path dir, std::vector<ModelProblem>* problems)
      : dir_(std::move(dir)), problems_(problems) {}

  struct Found {
    ArgoYaml* yaml;    // the file's reader; belongs to the library
    yaml::Node node;   // the document, or the template
    std::string path;  // the template's place in it ("spec.templates[2]")
  };
  // The WorkflowTemplate (`cluster`: ClusterWorkflowTemplate) named `wft`; nullopt with
  // `why` set when there is none or more than one.
  std::optional<Found> findDocument(const std::string& wft, bool cluster, std::string& why);
  // Template `name` of workflow template `wft` (a namespaced one before a cluster one,
  // as a templateRef without clusterScope names it); nullopt with `why` set.
  std::optional<Found> find(const std::string& wft, const std::string& name, std::string& why);

 private:
  void load();

  struct Defined {
    ArgoYaml* yaml;
    yaml::Node doc;
    bool cluster;
  };
  std::filesystem::path dir_;
  std::vector<ModelProblem>* problems_;
  bool loaded_ = false;
  std::deque<ArgoYaml> files_;  // a deque: Defined and Found point into it (and their nodes)
  std::map<std::string, std::vector<Defined>> wfts_;
};

}  // namespace plugboard::core::argo

#endif  // PLUGBOARD_CORE_FRONTENDS_ARGO_LIBRARY_H_
