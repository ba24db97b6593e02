// plugboard exec: one Argo ExecuteTemplateArgs on stdin, its ExecuteTemplateReply on stdout.
#include <cstdio>
#include <iostream>
#include <iterator>

#include "core/runtime/exports.h"
#include "tools/plugboard/cli.h"
#include "tools/plugboard/commands.h"
#include "tools/plugboard/signals.h"

namespace plugboard::cli {
namespace po = boost::program_options;

CommandOptions execOptions() {
  CommandOptions command{po::options_description("exec options")};
  auto& options = command.options;
  addPluginDirsOption(options);
  addPriorityOption(options);
  options.add_options()(
      "timeout", po::value<std::string>(),
      configHelp("deadline of the call", "default_timeout", defaultText(core::defaults::kTimeout))
          .c_str())("poll-interval", po::value<std::string>(),
                    configHelp("requeue delay to reply for a Running result that asks for none",
                               "poll_interval", defaultText(core::defaults::kPollInterval))
                        .c_str());
  return command;
}

int cmdExec(const Args& args) {
  po::variables_map vm;
  int exit_code = kExitOk;
  if (!parseCommandArgs(args, "exec", vm, exit_code)) return exit_code;
  auto config = settings(vm);
  if (!config) return kExitUsage;

  // The request serve would take: at most body_limit bytes (a larger one is refused
  // without reading the rest, however much there is).
  std::string body;
  char chunk[1 << 16];
  while (std::cin.read(chunk, sizeof chunk) || std::cin.gcount() > 0) {
    body.append(chunk, static_cast<std::size_t>(std::cin.gcount()));
    if (body.size() > config->server.body_limit) {
      std::cerr << "plugboard: the ExecuteTemplateArgs on stdin are larger than "
                << config->server.body_limit << " bytes (body_limit)\n";
      return kExitUsage;
    }
  }
  auto request = core::parseExecuteTemplateArgs(body);
  if (!request) {
    std::cout << core::Json{{"error", request.error().message()}}.dump() << "\n";
    std::cerr << "plugboard: bad ExecuteTemplateArgs on stdin: " << request.error().message()
              << "\n";
    return kExitUsage;
  }
  // One call, answered as serve would: a signal stops at once, after the deployers removed
  // what the call's start left (a container, a token directory).
  const auto cancel_target = handleSignals("the call", /*stop_at_once=*/true);
  auto runtime = openRuntime(*config, /*isolate_polls=*/true);
  if (!runtime) return kExitUsage;
  cancel_target->setDeployers(runtime->launcher().deployers());
  auto result = core::dispatchWithDeadline(runtime->dispatcher(), std::move(*request),
                                           config->server.default_timeout);
  cancel_target->release();
  const auto& outcome = result.dispatch.outcome;
  std::cout << core::executeTemplateReply(outcome, config->server.poll_interval) << "\n";
  std::cout.flush();
  const bool ok =
      outcome.phase == core::Phase::kSucceeded || outcome.phase == core::Phase::kRunning;
  const int status = ok ? kExitOk : kExitFailed;
  if (result.abandoned) {  // the abandoned call still uses the runtime: leave it be
    runtime->launcher().deployers().abandon();
    std::_Exit(status);
  }
  return status;
}

}  // namespace plugboard::cli
