#include "core/frontends/front_end.h"

#include <fstream>

#include "core/base/read_file.h"
#include "core/base/text.h"
#include "core/frontends/arcaflow_workflow.h"
#include "core/frontends/argo_workflow.h"
#include "core/frontends/argo_yaml.h"
#include "core/frontends/yaml_tree.h"

namespace plugboard::core {
namespace {

constexpr std::string_view kPluginSuffix = "-executor-plugin";

std::string lineOf(const std::filesystem::path& file, const yaml::Mark& mark) {
  return file.string() + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

// The first document of a YAML (or JSON) file, its nodes in `tree`; an undefined node for
// an empty file. `what` names the file in errors ("not YAML: ...").
Expected<yaml::Node> firstDocument(yaml::Tree& tree, const std::filesystem::path& file,
                                   const std::string& text, std::string_view what) {
  yaml::Tree::Parsed parsed = tree.parse(text);
  if (parsed.error) {
    return Error(lineOf(file, parsed.error->mark) + ": " + std::string(what) + ": " +
                 parsed.error->message);
  }
  if (parsed.documents.empty()) return yaml::Node();
  const yaml::Document& doc = parsed.documents[0];
  if (doc.refused) return Error(lineOf(file, doc.refused->mark) + ": " + doc.refused->message);
  return doc.root;
}

// An executor plugin's name and sidecar, from its manifest (kind ExecutorPlugin) or the
// ConfigMap `argo executor-plugin build` writes; nullopt for other documents.
struct PluginDoc {
  std::string name;
};

Expected<std::optional<PluginDoc>> readPluginDoc(const std::filesystem::path& file) {
  auto text = readTextFile(file, "executor plugin file");
  if (!text) return text.error();
  yaml::Tree tree;
  auto doc = firstDocument(tree, file, *text, "not YAML");
  if (!doc) return doc.error();
  if (!doc->isMap()) return std::optional<PluginDoc>();
  const yaml::Node metadata = doc->member("metadata");
  const std::string kind = doc->member("kind").text();
  std::string name = metadata.member("name").text();
  if (kind == "ConfigMap") {
    if (metadata.member("labels").member("workflows.argoproj.io/configmap-type").scalar() !=
        "ExecutorPlugin") {
      return std::optional<PluginDoc>();
    }
    // Argo names the ConfigMap "<plugin>-executor-plugin" (cmd/argo/commands/executorplugin).
    if (name.ends_with(kPluginSuffix)) name.resize(name.size() - kPluginSuffix.size());
  } else if (kind != "ExecutorPlugin") {
    return std::optional<PluginDoc>();
  }
  if (name.empty()) return Error(file.string() + ": an executor plugin without metadata.name");
  return std::optional<PluginDoc>(PluginDoc{name});
}

RegistryEntry pluginEntry(const std::string& name, const std::filesystem::path& file) {
  return RegistryEntry{name, *Version::parse("0.0.0"),
                       {{"argo", Json{{"path", file.string()}, {"polled", true}}}}};
}

}  // namespace

bool isTomlWorkflow(const std::filesystem::path& file) { return file.extension() == ".toml"; }

bool isArcaflowWorkflow(const std::filesystem::path& file) {
  if (isTomlWorkflow(file)) return false;
  auto text = readTextFile(file, "workflow");
  return text && looksLikeArcaflow(*text);
}

LoadedModel loadModel(const std::filesystem::path& file, const ModelSource& source) {
  // By content: an Arcaflow workflow is a mapping with `version` and without apiVersion
  // and kind; everything else is read as Argo's (docs/decisions.md).
  if (isArcaflowWorkflow(file)) {
    ArcaflowLoad arcaflow = loadArcaflowWorkflow(file);
    LoadedModel loaded;
    if (arcaflow.workflow) loaded.model = arcaflowModel(*arcaflow.workflow);
    loaded.problems = std::move(arcaflow.problems);
    return loaded;
  }
  ArgoWorkflowLoad argo = loadArgoWorkflow(
      file, ArgoReadOptions{source.entrypoint, source.templates_dir, source.containment});
  return LoadedModel{std::move(argo.model), std::move(argo.problems)};
}

Expected<Json> readParameterFile(const std::filesystem::path& file) {
  auto text = readTextFile(file, "parameter file");
  if (!text) return Error(file.string() + ": cannot read the parameter file");
  yaml::Tree tree;
  auto doc = firstDocument(tree, file, *text, "not YAML or JSON");
  if (!doc) return doc.error();
  if (!doc->isMap()) {
    return Error(file.string() + ": a parameter file is a mapping of parameter name to value");
  }
  Json out = Json::object();
  try {
    for (const auto& kv : doc->pairs()) {
      if (!kv.key.isScalar()) {
        return Error(lineOf(file, kv.key.mark()) + ": a parameter's name must be a string");
      }
      // Argo's parameters are strings; a list or a mapping is passed as its JSON text.
      out[kv.key.text()] =
          kv.value.isScalar() ? Json(kv.value.text()) : Json(argo::toJson(kv.value).dump());
    }
  } catch (const yaml::TreeLimit& e) {
    return Error(lineOf(file, e.mark) + ": " + e.message);
  }
  return out;
}

Expected<std::vector<RegistryEntry>> executorPlugins(const WorkflowModel& model,
                                                     const std::filesystem::path& dir,
                                                     const std::filesystem::path& scratch) {
  std::vector<RegistryEntry> entries;
  if (!model.executor_plugins.empty()) {
    // spec.executorPlugins: written as ExecutorPlugin manifests (JSON is YAML) for the
    // deployer that reads manifests from files.
    std::error_code ec;
    std::filesystem::create_directories(scratch, ec);
    for (const auto& plugin : model.executor_plugins) {
      const std::string name = plugin["metadata"].value("name", std::string());
      Json manifest = {{"apiVersion", "argoproj.io/v1alpha1"},
                       {"kind", "ExecutorPlugin"},
                       {"metadata", plugin["metadata"]},
                       {"spec", plugin["spec"]}};
      const auto file = scratch / (name + ".yaml");
      std::ofstream out(file);
      out << manifest.dump(2) << "\n";
      if (!out) return Error(file.string() + ": cannot write the workflow's executor plugin '" + name + "'");
      entries.push_back(pluginEntry(name, file));
    }
    return entries;
  }
  if (dir.empty()) return entries;
  std::error_code ec;
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const auto ext = e.path().extension();
    if (ext == ".yaml" || ext == ".yml") files.push_back(e.path());
  }
  if (ec) return Error(dir.string() + ": cannot read the executor plugin directory: " + ec.message());
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    auto doc = readPluginDoc(file);
    if (!doc) return doc.error();
    if (*doc) entries.push_back(pluginEntry((*doc)->name, file));
  }
  return entries;
}

}  // namespace plugboard::core
