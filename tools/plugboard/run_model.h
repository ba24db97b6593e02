// tools/plugboard/run_model.h: `run` and `validate` for workflow files of a peer's format
// (Argo Workflow YAML), which run on the one model's engine (core/workflows/engine.h).
#ifndef PLUGBOARD_TOOLS_RUN_MODEL_H_
#define PLUGBOARD_TOOLS_RUN_MODEL_H_

#include <boost/program_options.hpp>

#include "core/runtime/config.h"
#include "core/runtime/exports.h"

namespace plugboard::cli {

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
