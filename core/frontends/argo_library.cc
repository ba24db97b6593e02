// The WorkflowTemplates of a directory, for templateRef and workflowTemplateRef.
#include "core/frontends/argo_library.h"

#include <algorithm>

#include "core/base/read_file.h"

namespace plugboard::core::argo {

std::optional<TemplateLibrary::Found> TemplateLibrary::findDocument(const std::string& wft,
                                                                    bool cluster,
                                                                    std::string& why) {
  load();
  auto it = wfts_.find(wft);
  std::vector<const Defined*> defs;
  if (it != wfts_.end()) {
    for (const auto& d : it->second) {
      if (d.cluster == cluster) defs.push_back(&d);
    }
  }
  std::string kind = cluster ? "ClusterWorkflowTemplate " : "WorkflowTemplate ";
  if (defs.size() != 1) {
    why = defs.empty() ? "no " + kind + "named " + quote(wft) + " in " + dir_.string()
                       : kind + quote(wft) + " is defined twice, in " + defs[0]->yaml->file() +
                             " and " + defs[1]->yaml->file();
    return std::nullopt;
  }
  return Found{defs[0]->yaml, defs[0]->doc, ""};
}

std::optional<TemplateLibrary::Found> TemplateLibrary::find(const std::string& wft,
                                                            const std::string& name,
                                                            std::string& why) {
  load();
  auto it = wfts_.find(wft);
  if (it == wfts_.end()) {
    why = "no WorkflowTemplate named " + quote(wft) + " in " + dir_.string();
    return std::nullopt;
  }
  // A WorkflowTemplate and a ClusterWorkflowTemplate may share a name (Argo keeps them
  // apart by clusterScope); the namespaced one is taken first, as the file names both.
  std::vector<const Defined*> defs;
  for (bool cluster : {false, true}) {
    for (const auto& d : it->second) {
      if (d.cluster == cluster) defs.push_back(&d);
    }
    if (!defs.empty()) break;
  }
  if (defs.size() > 1) {
    why = "WorkflowTemplate " + quote(wft) + " is defined twice, in " + defs[0]->yaml->file() +
          " and " + defs[1]->yaml->file();
    return std::nullopt;
  }
  const yaml::Node templates = member(member(defs[0]->doc, "spec"), "templates");
  for (size_t i = 0; templates.isSequence() && i < templates.size(); ++i) {
    const yaml::Node t = templates[i];
    const yaml::Node n = member(t, "name");
    if (n.isScalar() && n.scalar() == name) {
      return Found{defs[0]->yaml, t, "spec.templates[" + std::to_string(i) + "]"};
    }
  }
  why = "WorkflowTemplate " + quote(wft) + " (" + defs[0]->yaml->file() + ") has no template " +
        quote(name);
  return std::nullopt;
}

void TemplateLibrary::load() {
  if (loaded_) return;
  loaded_ = true;
  std::error_code ec;
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir_, ec)) {
    auto ext = entry.path().extension();
    if (entry.is_regular_file() && (ext == ".yaml" || ext == ".yml")) files.push_back(entry.path());
  }
  if (ec) {
    problems_->push_back(ModelProblem{SourceRef{dir_.string(), 0, 0}, "",
                                      "cannot read the templates directory: " + ec.message()});
  }
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    files_.emplace_back(file.string(), problems_);
    ArgoYaml& yaml = files_.back();
    auto text = readTextFile(file, "workflow template file");
    if (!text) {
      yaml.problem(SourceRef{file.string(), 0, 0}, "", text.error().message());
      continue;
    }
    for (const yaml::Document& doc : yaml.documents(*text)) {
      const yaml::Node kind = member(doc.root, "kind");
      const yaml::Node name = member(member(doc.root, "metadata"), "name");
      if (!kind.isScalar() || !name.isScalar()) continue;
      if (kind.scalar() != "WorkflowTemplate" && kind.scalar() != "ClusterWorkflowTemplate")
        continue;
      // A refused document counts only if it is a template the library would hold (a
      // workflow beside them is not read from here).
      if (doc.refused) {
        yaml.problem(*doc.refused);
        continue;
      }
      wfts_[name.text()].push_back(Defined{&yaml, doc.root, kind.scalar() != "WorkflowTemplate"});
    }
  }
}

}  // namespace plugboard::core::argo
