// tools/plugboard/run_model.h: `run` and `validate` for workflow files of a peer's format
// (Argo Workflow YAML), which run on the one model's engine (core/workflows/engine.h).
#ifndef PLUGBOARD_TOOLS_RUN_MODEL_H_
#define PLUGBOARD_TOOLS_RUN_MODEL_H_

#include <memory>
#include <optional>

#include <boost/program_options.hpp>

#include "core/runtime/config.h"
#include "core/runtime/exports.h"
#include "core/runtime/runtime.h"

namespace plugboard::cli {

struct CancelTarget;

// A runtime opened for a model workflow of any front end, every template's plugin found
// and the parameters prepared (Runtime::prepareModel) before anything runs.
struct PreparedModel {
  std::unique_ptr<core::Runtime> runtime;
  core::Json parameters;
};
// The runtime for `model` with `given` parameters; `cancel` (may be null) is told of its
// deployers, and released when the model cannot be prepared. Prints why and returns none
// when the runtime cannot be opened or the model prepared.
std::optional<PreparedModel> prepareModelRun(const core::Config& config,
                                             const core::WorkflowModel& model,
                                             const core::Json& given, CancelTarget* cancel);

// The options only model workflows take: --entrypoint, --templates, --parameter-file,
// --executor-plugins.
void addModelOptions(boost::program_options::options_description& options);

// `run FILE` for a model workflow; `config` as the flags and config file made it.
int runModel(const boost::program_options::variables_map& vm, core::Config config,
             const core::EngineOptions& options, bool json);
// `validate FILE` for a model workflow.
int validateModel(const boost::program_options::variables_map& vm, core::Config config);

}  // namespace plugboard::cli

#endif  // PLUGBOARD_TOOLS_RUN_MODEL_H_
