// tools/plugboard/arcaflow_cli.h: `validate` of an Arcaflow workflow file (workflow.yaml,
// core/frontends/arcaflow_workflow.h) with the Arcaflow engine's command line and exit
// codes (cmd/arcaflow/main.go): --input FILE, --context DIR (the workflow and input files
// are taken from it when relative), --config FILE (the engine's config.yaml, or plugboard's
// own TOML); 0 ok, 1 an invalid workflow or an unreadable input (each problem with
// file:line:column), 2 the workflow produced its output "error", 3 it failed (no output
// could be produced) or, in `run`, its input fails the input scope (the bad field's path).
#ifndef PLUGBOARD_TOOLS_ARCAFLOW_CLI_H_
#define PLUGBOARD_TOOLS_ARCAFLOW_CLI_H_

#include <filesystem>

#include <boost/program_options.hpp>

namespace plugboard::cli {

// The engine's exit codes (cmd/arcaflow/main.go).
inline constexpr int kArcaflowOk = 0;
inline constexpr int kArcaflowInvalid = 1;
inline constexpr int kArcaflowErrorOutput = 2;
inline constexpr int kArcaflowFailed = 3;
// Input that fails the workflow's input scope, in `run`: the engine checks it in Execute
// (workflow.go) and main.go's runWorkflow exits with ExitCodeWorkflowFailed for it, not
// with ExitCodeInvalidData. plugboard checks it before anything starts, with the same code.
inline constexpr int kArcaflowInputRefused = kArcaflowFailed;

// The workflow file the command line names, taken from --context when relative.
std::filesystem::path arcaflowWorkflowFile(const boost::program_options::variables_map& vm);

// `validate FILE` for an Arcaflow workflow.
int validateArcaflow(const boost::program_options::variables_map& vm);

// `run FILE` for an Arcaflow workflow, on the one engine: prints the output as the engine
// does (YAML: output_id, output_data) or, with `json`, plugboard's status with them.
int runArcaflow(const boost::program_options::variables_map& vm, bool json);

}  // namespace plugboard::cli

#endif  // PLUGBOARD_TOOLS_ARCAFLOW_CLI_H_
