// Nodes, leaves, retries and exit handlers: operator.go's node lifecycle
// (initializeNode, executeTemplate, processNodeRetries, runOnExitNode; docs/decisions.md,
// "Argo's node rules").
#include <algorithm>
#include <cmath>
#include <ctime>
#include <random>

#include "core/workflows/engine_state.h"
#include "core/workflows/tags.h"

namespace plugboard::core {
namespace {

// A leaf Argo runs as a pod (a plugin call runs in the agent's pod, a suspend nowhere).
bool isPod(const Template& t) {
  return t.kind == Template::Kind::kContainer || t.kind == Template::Kind::kScript;
}

NodeType leafType(const Template& t) {
  switch (t.kind) {
    case Template::Kind::kPlugin: return NodeType::kPlugin;
    case Template::Kind::kSuspend: return NodeType::kSuspend;
    case Template::Kind::kSteps: return NodeType::kSteps;
    case Template::Kind::kDag: return NodeType::kDAG;
    default: return NodeType::kPod;
  }
}


std::string randomSuffix(std::mt19937_64& rng, std::size_t n) {
  static constexpr char kChars[] = "bcdfghjklmnpqrstvwxz2456789";  // as Kubernetes' names
  std::string out;
  for (std::size_t i = 0; i < n; ++i) out += kChars[rng() % (sizeof kChars - 1)];
  return out;
}

std::string randomUid(std::mt19937_64& rng) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < 32; ++i) {
    if (i == 8 || i == 12 || i == 16 || i == 20) out += '-';
    char c = kHex[rng() % 16];
    if (i == 12) c = '4';
    if (i == 16) c = kHex[8 + rng() % 4];
    out += c;
  }
  return out;
}

// The model's fields of a leaf as JSON, for front ends that keep no original text.
Json leafJson(const Template& t) {
  Json j = {{"name", t.name}};
  if (t.kind == Template::Kind::kPlugin) {
    j["plugin"] = {{t.plugin.key, t.plugin.args}};
  } else if (t.kind == Template::Kind::kContainer || t.kind == Template::Kind::kScript) {
    Json c = {{"image", t.container->image}, {"command", t.container->command},
              {"args", t.container->args}};
    if (t.container->source) c["source"] = *t.container->source;
    j[t.kind == Template::Kind::kScript ? "script" : "container"] = c;
  }
  return j;
}

}  // namespace

bool isTransientMessage(const std::string& message, const std::optional<std::regex>& pattern) {
  // The messages Argo's util/errors/errors.go recognises by their text (a node's message
  // reaches it as an internal error, so only the text counts, not the error's type).
  static constexpr std::string_view kTransient[] = {
      "etcdserver: leader changed",
      "etcdserver: request timed out",
      "etcdserver: too many requests",
      "client rate limiter Wait returned an error",
      "unexpected error when reading response body",
      "stream error when reading response body",
      "Connection closed by foreign host",
      "net/http: TLS handshake timeout",
      "i/o timeout",
      "connection timed out",
      "connection reset by peer",
      "http2: client connection lost",
      "http2: server sent GOAWAY and closed the connection",
      "request did not complete within requested timeout",
      "connect: connection refused",
      "invalid connection",
      "upper: no more rows in",
  };
  for (std::string_view text : kTransient) {
    if (message.find(text) != std::string::npos) return true;
  }
  return pattern && std::regex_search(message, *pattern);
}

EngineRun::EngineRun(const WorkflowModel& model, const Json& parameters, LeafCalls& calls,
                     const EngineOptions& options, EngineObserver* observer, RunEnv& env)
    : model_(model), calls_(calls), options_(options), observer_(observer), env_(env) {
  std::mt19937_64 rng(std::random_device{}());
  workflow_name_ = model.generate_name ? model.name + randomSuffix(rng, 5) : model.name;
  uid_ = randomUid(rng);
  for (const auto& t : model.templates) by_name_.emplace(t.name, &t);
  globals_["workflow.name"] = workflow_name_;
  globals_["workflow.uid"] = uid_;
  globals_["workflow.namespace"] = "default";
  globals_["workflow.serviceAccountName"] = "default";
  globals_["workflow.mainEntrypoint"] = model.entrypoint;
  {
    const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    globals_["workflow.creationTimestamp"] = std::string(buf);
  }
  Json all = Json::object();  // name -> value, for `workflow.parameters['a-b']`
  for (const auto& [name, value] : parameters.items()) {
    const Json v = model.typed_parameters ? value : Json(parameterText(value));
    globals_["workflow.parameters." + name] = v;
    all[name] = v;
  }
  globals_["workflow.parameters"] = std::move(all);
  // workflow.parameters.json: every parameter as Argo's list of {name, value}, JSON text
  // (workflow/common/common.go, GlobalVarWorkflowParametersJSON).
  if (!globals_.contains("workflow.parameters.json")) {
    Json list = Json::array();
    for (const ParameterDecl& p : model.parameters) {
      if (parameters.contains(p.name))
        list.push_back({{"name", p.name}, {"value", parameterText(parameters[p.name])}});
    }
    globals_["workflow.parameters.json"] = list.dump();
  }
  for (const auto& [name, value] : model.labels.items())
    globals_["workflow.labels." + name] = parameterText(value);
  // spec.parallelism limits the pods (container and script leaves) that run at once, as
  // Argo's controller counts them (node_counters.go getActivePodsCounter); every leaf,
  // plugin calls included, shares the run's own places (--parallel), as Argo's agent
  // shares its task workers.
  leaf_limit_ = std::max(1, options.parallel);
  pod_limit_ = model.parallelism ? std::max(1, *model.parallelism) : leaf_limit_;
}

std::uint32_t EngineRun::newNode(std::string name, NodeType type, const Template* tmpl,
                                 std::uint32_t boundary, std::uint32_t parent, std::uint32_t slot,
                                 std::uint32_t reuse) {
  const auto n = reuse != kNoNode ? reuse : static_cast<std::uint32_t>(nodes_.size());
  if (reuse == kNoNode && nodes_.size() >= options_.max_nodes && fatal_.empty()) {
    fail("Maximum number of nodes exceeded: the run has made " +
         std::to_string(options_.max_nodes) + " nodes (the limit is " +
         std::to_string(options_.max_nodes) + ") and was to start " +
         (tmpl != nullptr ? "template '" + tmpl->name + "'" : "'" + name + "'"));
  }
  NodeStatus s;
  s.id = argoNodeId(workflow_name_, name);
  // Argo's display name: the name after the boundary's, without a leading "[i]." or ".".
  s.display_name = name;
  if (boundary != kNoNode) {
    const std::string& b = status_[boundary].name;
    if (name.compare(0, b.size(), b) == 0) {
      std::string_view rest = std::string_view(name).substr(b.size());
      std::size_t skip = 0;
      if (!rest.empty() && rest[0] == '[') {
        std::size_t close = rest.find(']');
        if (close != std::string_view::npos && close + 1 < rest.size() && rest[close + 1] == '.')
          skip = close + 2;
      } else if (!rest.empty() && rest[0] == '.') {
        skip = 1;
      }
      s.display_name = std::string(rest.substr(skip));
    }
    s.boundary_id = status_[boundary].id;
  }
  s.name = std::move(name);
  s.type = type;
  if (tmpl != nullptr) s.template_name = tmpl->name;
  s.started = now_;
  s.phase = NodePhase::kRunning;
  Node node;
  if (reuse != kNoNode) {
    // What still names the old node: a timer of its own (a deadline), its place in a
    // queue of leaves. Its call's token goes on counting (an answer to it no longer counts).
    node.token = nodes_[n].token;
    if (nodes_[n].queued) {
      std::erase(ready_, n);
      std::erase(ready_pods_, n);
    }
    const std::size_t timers = timers_.size();
    std::erase_if(timers_,
                  [n](const Timer& t) { return t.node == n && t.what != Timer::What::kWorkflow; });
    if (timers_.size() != timers) std::make_heap(timers_.begin(), timers_.end(), std::greater<>());
    status_[n] = std::move(s);
  } else {
    status_.push_back(std::move(s));
  }
  node.tmpl = tmpl;
  node.boundary = boundary;
  node.parent = parent;
  node.slot = slot;
  node.frame = n;
  node.deadline = parent != kNoNode ? nodes_[parent].deadline : workflow_deadline_;
  node.depth = parent != kNoNode ? nodes_[parent].depth : 0;
  // Exit handlers run past the deadlines of what they handle (Argo's IsPartOfExitHandler).
  if (slot == kExitSlot || (parent == kNoNode && entry_ != kNoNode)) node.deadline = TimePoint::max();
  if (reuse != kNoNode) {
    nodes_[n] = std::move(node);
  } else {
    nodes_.push_back(std::move(node));
  }
  return n;
}

const TemplateInfo& EngineRun::info(const Template* t) {
  auto& slot = infos_[t];
  if (!slot) {
    // A target given by a tag ("{{workflow.parameters.target}}", dag-targets.yaml) is
    // filled from the workflow's variables, the only ones a dag's own field can name.
    std::string target = t->dag_target;
    if (target.find("{{") != std::string::npos) {
      struct Globals final : Scope {
        const Json& flat;  // "workflow.parameters.x" -> value
        explicit Globals(const Json& f) : flat(f) {}
        std::optional<Json> lookup(std::string_view dotted) const override {
          auto it = flat.find(std::string(dotted));
          return it == flat.end() ? std::nullopt : std::optional<Json>(*it);
        }
      } globals(globals_);
      if (auto filled = fillText(target, globals); filled && filled->is_string())
        target = filled->get<std::string>();
    }
    slot = std::make_unique<TemplateInfo>(makeTemplateInfo(*t, &target));
  }
  return *slot;
}

void EngineRun::addChild(std::uint32_t parent, std::uint32_t child) {
  status_[parent].children.push_back(status_[child].id);
}

void EngineRun::notify(std::uint32_t n) {
  if (observer_ != nullptr) observer_->nodeChanged(status_[n]);
}

std::uint32_t EngineRun::startCall(std::string name, const Template* tmpl,
                                   const TemplateCall* call, std::uint32_t parent,
                                   std::uint32_t slot, std::uint32_t boundary,
                                   std::uint32_t caller, Json item, const Json& args,
                                   TimePoint now) {
  const bool retried = tmpl->retry.has_value();
  const std::uint32_t n =
      newNode(std::move(name), retried ? NodeType::kRetry : leafType(*tmpl), tmpl, boundary,
              parent, slot);
  Node& node = nodes_[n];
  node.call = call;
  node.caller = caller;
  node.item = std::move(item);
  if (pending_args_) node.args = std::move(pending_args_);
  pending_args_.reset();
  if (tmpl->active_deadline) node.deadline = std::min(node.deadline, now + *tmpl->active_deadline);
  ++node.depth;
  notify(n);
  if (!fatal_.empty()) {  // the run ends in Error (fail()): nothing more starts
    end(n, NodePhase::kError, "not started: " + fatal_, now);
    return n;
  }
  // Argo's executeTemplate counts its nesting (currentStackDepth) and stops a call as deep
  // as maxStackDepth with ErrMaxDepthExceeded, which ends the workflow in Error. Nothing
  // is started below such a call, so the calls nested on the stack here (startCall,
  // startBody, startSteps / startDag, expandCall) are at most max_depth deep.
  if (node.depth >= options_.max_depth) {
    const std::string message = "Maximum recursion depth exceeded: template '" + tmpl->name +
                                "' called " + std::to_string(node.depth) +
                                " templates deep (the limit is " +
                                std::to_string(options_.max_depth) + ")";
    fail("error in entry template execution: " + message);
    end(n, NodePhase::kError, message, now);
    return n;
  }
  if (auto bound = bindInputs(n, args); !bound) {
    end(n, NodePhase::kError, bound.error().message(), now);
    return n;
  }
  if (!retried) {
    startBody(n, now);
    return n;
  }
  node.kind = NodeKind::kRetry;
  node.first_started = now;
  if (tmpl->retry->limit) {
    auto limit = fillIn(caller != kNoNode ? caller : n, &nodes_[n].item, n,
                        Json(*tmpl->retry->limit));
    long long value = -1;
    if (limit && limit->is_number_integer()) {
      value = limit->get<long long>();
    } else if (limit && limit->is_string()) {
      try {
        std::size_t used = 0;
        value = std::stoll(limit->get<std::string>(), &used);
        if (used != limit->get<std::string>().size()) value = -2;
      } catch (...) {
        value = -2;
      }
    }
    if (!limit || value < 0) {
      end(n, NodePhase::kError,
          "retryStrategy.limit: " +
              (limit ? "'" + parameterText(*limit) + "' is not a number" : limit.error().message()),
          now);
      return n;
    }
    nodes_[n].limit = static_cast<int>(std::min<long long>(value, 1 << 30));
  }
  startAttempt(n, now);
  return n;
}

void EngineRun::startAttempt(std::uint32_t r, TimePoint now) {
  if (!fatal_.empty()) {
    end(r, NodePhase::kError, "not started: " + fatal_, now);
    return;
  }
  const int i = nodes_[r].retry_index;
  // The latest kept_attempts attempts are kept: past them, the oldest one's status goes,
  // the others' move down a place (they stay in the order they were made) and the last
  // place (its node ended, its parent told) is made this attempt, so that a
  // retryStrategy.limit of any size holds no more nodes than these.
  std::uint32_t reuse = kNoNode;
  if (std::vector<std::uint32_t>& kept = nodes_[r].c().attempts;
      kept.size() >= static_cast<std::size_t>(std::max(1, options_.kept_attempts))) {
    auto& children = status_[r].children;
    children.erase(children.begin());  // the oldest attempt's id: they are made in order
    status_[r].calls += status_[kept.front()].calls;  // the calls of the attempts dropped
    for (std::size_t j = 0; j + 1 < kept.size(); ++j)
      status_[kept[j]] = std::move(status_[kept[j + 1]]);
    reuse = kept.back();
  }
  const std::uint32_t a =
      newNode(status_[r].name + "(" + std::to_string(i) + ")", leafType(*nodes_[r].tmpl),
              nodes_[r].tmpl, nodes_[r].boundary, r, 0, reuse);
  if (reuse == kNoNode) nodes_[r].c().attempts.push_back(a);
  status_[r].attempts = i + 1;
  Node& attempt = nodes_[a];
  Node& rn = nodes_[r];
  attempt.attempt = true;
  attempt.caller = rn.caller;
  attempt.item = rn.item;
  attempt.retry_index = i;
  status_[a].inputs = status_[r].inputs;
  ++rn.retry_index;
  status_[r].message.clear();
  addChild(r, a);
  notify(r);
  notify(a);
  startBody(a, now);
}

void EngineRun::startBody(std::uint32_t n, TimePoint now) {
  const Template& t = *nodes_[n].tmpl;
  if (any_stopped_ && stoppedAbove(n)) {  // a dag above it was decided (stopDag)
    end(n, NodePhase::kOmitted, ed::kDecidedFirst, now);
    return;
  }
  switch (t.kind) {
    case Template::Kind::kSteps:
      startSteps(n, now);
      return;
    case Template::Kind::kDag:
      startDag(n, now);
      return;
    default:
      nodes_[n].kind = NodeKind::kLeaf;
      queueLeaf(n, now);
  }
}

void EngineRun::queueLeaf(std::uint32_t n, TimePoint now) {
  Node& node = nodes_[n];
  if (now >= node.deadline) {
    end(n, NodePhase::kFailed, "Step exceeded its deadline", now);
    return;
  }
  if (node.tmpl->kind == Template::Kind::kSuspend) {
    if (node.tmpl->suspend_for.empty()) return;  // until resumed, cancelled or out of time
    auto text = fillIn(n, nullptr, n, Json(node.tmpl->suspend_for));
    auto d = text ? parseDuration(parameterText(*text)) : Expected<Millis>(text.error());
    if (!d) {
      end(n, NodePhase::kError, "suspend.duration: " + d.error().message(), now);
      return;
    }
    addTimer(now + *d, n, Timer::What::kSuspend);
    if (node.deadline != TimePoint::max()) addTimer(node.deadline, n, Timer::What::kDeadline);
    return;
  }
  node.queued = true;
  (isPod(*node.tmpl) ? ready_pods_ : ready_).push_back(n);
}

Expected<LeafCall> EngineRun::leafCall(std::uint32_t n) {
  const Node& node = nodes_[n];
  const Template& t = *node.tmpl;
  LeafCall c;
  c.tmpl = &t;
  c.node_id = status_[n].id;
  c.workflow_name = workflow_name_;
  c.workflow_uid = uid_;
  c.inputs = Json::object();
  for (const auto& [name, value] : status_[n].inputs.parameters) c.inputs[name] = value;
  // The call that made the leaf (a retry's attempt: the retry's), for what a shared
  // template leaves to its calls.
  const TemplateCall* call = node.call != nullptr || !node.attempt ? node.call
                                                                   : nodes_[node.parent].call;
  // The whole template: tags of fields the engine does not read (e.g. of outputs) stay as
  // written, as Argo leaves tags it does not own.
  std::unique_ptr<TemplateText>& text = texts_[&t];
  if (!text) text = std::make_unique<TemplateText>(t.original.is_object() ? t.original : leafJson(t));
  NodeScope scope(*this, n, nullptr, n);
  FillOptions options;
  options.keep_unknown = true;
  options.limit = options_.args_limit;
  auto filled = text->write(scope, options,
                            call != nullptr && call->names_leaf ? &call->name : nullptr, c.inputs);
  if (!filled) return filled.error();
  c.template_text = std::move(*filled);
  if (t.kind == Template::Kind::kPlugin) {
    c.plugin = t.plugin;
    // Args a value language filled when the call started (on the call's node, or on the
    // retry node above an attempt); else the call's own args (steps sharing a template),
    // else the template's.
    const Node& owner = node.attempt && node.parent != kNoNode ? nodes_[node.parent] : node;
    if (owner.args) {
      c.plugin.args = *owner.args;
    } else {
      auto args = fillIn(n, nullptr, n,
                         call != nullptr && !call->plugin_args.is_null() ? call->plugin_args
                                                                         : t.plugin.args);
      if (!args) return args.error();
      c.plugin.args = std::move(*args);
    }
  } else {
    const ContainerRun& r = *t.container;
    Json env = Json::object();
    for (const auto& [k, v] : r.env) env[k] = v;
    Json j = {{"image", r.image}, {"command", r.command}, {"args", r.args}, {"env", env},
              {"workingDir", r.working_dir}, {"source", r.source.value_or("")}};
    auto f = fillIn(n, nullptr, n, j);
    if (!f) return f.error();
    c.container.image = parameterText((*f)["image"]);
    for (const auto& v : (*f)["command"]) c.container.command.push_back(parameterText(v));
    for (const auto& v : (*f)["args"]) c.container.args.push_back(parameterText(v));
    for (const auto& [k, v] : r.env) c.container.env.emplace_back(k, parameterText((*f)["env"][k]));
    c.container.working_dir = parameterText((*f)["workingDir"]);
    if (r.source) c.container.source = parameterText((*f)["source"]);
  }
  return c;
}

std::optional<EngineRun::Launch> EngineRun::nextLaunch(TimePoint now) {
  now_ = now;
  for (;;) {
    drain(now);
    if (cancelling_ || in_flight_ >= leaf_limit_) return std::nullopt;
    // A pod first when one may start (pods have the scarcer places), else a plugin call.
    auto& queue = !ready_pods_.empty() && pods_in_flight_ < pod_limit_ ? ready_pods_ : ready_;
    if (queue.empty()) return std::nullopt;
    const std::uint32_t n = queue.front();
    queue.pop_front();
    Node& node = nodes_[n];
    node.queued = false;
    if (isEnded(status_[n].phase) || node.in_flight) continue;
    const bool first = status_[n].calls == 0;  // (a call made again is no new attempt)
    if (first && now >= node.deadline) {
      end(n, NodePhase::kFailed, "Step exceeded its deadline", now);
      continue;
    }
    auto call = leafCall(n);
    if (!call) {
      end(n, NodePhase::kError, call.error().message(), now);
      continue;
    }
    if (auto refused = first ? calls_.check(*call) : std::nullopt) {  // once per attempt
      end(n, refused->phase == Phase::kFailed ? NodePhase::kFailed : NodePhase::kError,
          std::move(refused->message), now);
      continue;
    }
    if (first) {
      std::optional<Millis> timeout = options_.default_timeout;
      if (!node.tmpl->timeout.empty()) {
        auto text = fillIn(n, nullptr, n, Json(node.tmpl->timeout));
        auto d = text ? parseDuration(parameterText(*text)) : Expected<Millis>(text.error());
        if (!d) {
          end(n, NodePhase::kError, "timeout: " + d.error().message(), now);
          continue;
        }
        timeout = *d;
      }
      node.attempt_deadline = timeout ? std::min(node.deadline, now + *timeout) : node.deadline;
      if (node.attempt_deadline != TimePoint::max())
        addTimer(node.attempt_deadline, n, Timer::What::kDeadline);
    }
    node.control = std::make_shared<CallControl>();
    node.control->log().setLabel("step " + status_[n].display_name);
    node.in_flight = true;
    ++in_flight_;
    pods_in_flight_ += isPod(*node.tmpl);
    ++status_[n].calls;
    return Launch{n, ++node.token, node.control, std::move(*call)};
  }
}

void EngineRun::leafReturned(std::uint32_t n, std::uint64_t token, Dispatch dispatch,
                             TimePoint now) {
  now_ = now;
  Node& node = nodes_[n];
  if (token != node.token || !node.in_flight) {
    --unanswered_;  // a call given up on came back; its result no longer counts
    return;
  }
  node.in_flight = false;
  node.control.reset();
  --in_flight_;
  pods_in_flight_ -= isPod(*node.tmpl);
  status_[n].plugin = std::move(dispatch.plugin);
  if (!dispatch.deployer.empty()) status_[n].deployer = std::move(dispatch.deployer);
  if (!dispatch.logs.empty()) status_[n].logs.append(dispatch.logs);
  if (isEnded(status_[n].phase)) return;
  Outcome& o = dispatch.outcome;
  switch (o.phase) {
    case Phase::kSucceeded:
      leafSucceeded(n, o, now);
      break;
    case Phase::kRunning:
    case Phase::kPending: {
      const Millis delay = o.requeue.value_or(options_.poll_interval);
      status_[n].message = o.message;
      notify(n);
      addTimer(now + delay, n, Timer::What::kCallAgain);
      break;
    }
    case Phase::kFailed:
    case Phase::kNotHandled:
      if (auto set = setOutputs(n, &o); !set) {}  // exit code and result of a failed leaf
      end(n, NodePhase::kFailed, std::move(o.message), now);
      break;
    case Phase::kError:
      end(n, NodePhase::kError, std::move(o.message), now);
      break;
  }
  drain(now);
}

void EngineRun::leafSucceeded(std::uint32_t n, Outcome& o, TimePoint now) {
  if (auto set = setOutputs(n, &o); !set) {
    end(n, NodePhase::kError, set.error().message(), now);
    return;
  }
  end(n, NodePhase::kSucceeded, std::move(o.message), now);
}

// Argo's processNodeRetries: the checks in its order, then a new attempt (after the
// backoff) or the end of the retry node with the last attempt's phase.
void EngineRun::retryDecide(std::uint32_t r, std::uint32_t a, TimePoint now) {
  const NodeStatus& last = status_[a];
  const NodePhase phase = last.phase;
  if (phase == NodePhase::kSucceeded || !ed::failedOrError(phase)) {
    status_[r].outputs = last.outputs;
    end(r, phase, "", now);
    return;
  }
  Node& retry = nodes_[r];
  const RetryStrategy& rs = *retry.tmpl->retry;
  if (cancelling_ || now >= retry.deadline) {
    end(r, phase, now >= retry.deadline ? "Step exceeded its deadline" : last.message, now);
    return;
  }
  TimePoint max_deadline = TimePoint::max();
  if (rs.max_total) {
    max_deadline = retry.first_started + *rs.max_total;
    if (now > max_deadline) {
      end(r, phase, "Max duration limit exceeded", now);
      return;
    }
  }
  const bool transient = rs.policy == RetryStrategy::Policy::kOnTransientError &&
                         isTransientMessage(last.message, options_.transient_error_pattern);
  const bool on_failed = rs.policy == RetryStrategy::Policy::kAlways ||
                         rs.policy == RetryStrategy::Policy::kOnFailure || transient;
  const bool on_error = rs.policy == RetryStrategy::Policy::kAlways ||
                        rs.policy == RetryStrategy::Policy::kOnError || transient;
  if ((phase == NodePhase::kFailed && !on_failed) || (phase == NodePhase::kError && !on_error)) {
    end(r, phase, last.message, now);
    return;
  }
  const int attempts = retry.retry_index;
  if (retry.limit >= 0 && attempts > retry.limit) {
    end(r, phase, "No more retries left", now);
    return;
  }
  if (!rs.expression.empty()) {
    const auto took = std::chrono::duration_cast<std::chrono::seconds>(
        last.finished.value_or(now) - last.started.value_or(now));
    std::string exit_code = "-1";
    if (last.outputs.exit_code) exit_code = *last.outputs.exit_code;
    const Json extra = {{"lastRetry.exitCode", exit_code},
                        {"lastRetry.status", std::string(nodePhaseName(phase))},
                        {"lastRetry.duration", std::to_string(took.count())},
                        {"lastRetry.message", last.message}};
    NodeScope scope(*this, r, nullptr, r, &extra);
    // The template's tags are filled before the expression is read, as Argo substitutes
    // the whole template (retry-conditional.yaml names an input parameter there).
    std::string expression = rs.expression;
    if (expression.find("{{") != std::string::npos) {
      auto filled = fillText(expression, scope);
      if (!filled) {
        end(r, NodePhase::kError, "retryStrategy.expression: " + filled.error().message(), now);
        return;
      }
      expression = filled->is_string() ? filled->get<std::string>() : filled->dump();
    }
    auto go = evaluateCondition(expression, Dialect::kExpr, scope);
    if (!go) {
      end(r, NodePhase::kError, "retryStrategy.expression: " + go.error().message(), now);
      return;
    }
    if (!*go) {
      end(r, phase, "retryStrategy.expression evaluated to false", now);
      return;
    }
  }
  Millis wait{0};
  if (rs.backoff) {
    double ms = static_cast<double>(rs.backoff->count()) * std::pow(rs.factor, attempts - 1);
    if (std::isnan(ms)) ms = 0;
    ms = std::min(ms, static_cast<double>(kMaxDuration.count()));
    wait = Millis(static_cast<long long>(ms));
    if (rs.max_backoff) wait = std::min(wait, *rs.max_backoff);
  }
  if (max_deadline != TimePoint::max() && now + wait > max_deadline) {
    end(r, phase, "Backoff would exceed max duration limit", now);
    return;
  }
  if (wait.count() > 0) {
    status_[r].message = "Backoff for " + formatElapsed(wait);
    notify(r);
    addTimer(now + wait, r, Timer::What::kRetry);
    return;
  }
  startAttempt(r, now);
}

void EngineRun::end(std::uint32_t n, NodePhase phase, std::string message, TimePoint now) {
  NodeStatus& s = status_[n];
  if (isEnded(s.phase)) return;
  Node& node = nodes_[n];
  s.phase = phase;
  s.message = std::move(message);
  s.finished = now;
  if (!s.started) s.started = now;
  if (node.in_flight) {  // ended from outside its call (cancel): its answer no longer counts
    node.control->cancel();
    node.control.reset();
    node.in_flight = false;
    ++node.token;
    --in_flight_;
    pods_in_flight_ -= isPod(*node.tmpl);
    ++unanswered_;
  }
  if (node.composite) {  // children that waited for a place will not start
    node.composite->gated.clear();
    node.composite->gated_head = 0;
  }
  notify(n);
  // Argo's runOnExitNode: a call's exit handler runs once the call completed.
  std::string exit_template;
  if (node.kind != NodeKind::kDone && !node.attempt && !cancelling_ && fatal_.empty() &&
      ed::completed(phase)) {
    if (node.call != nullptr && !node.call->on_exit.empty()) {
      exit_template = node.call->on_exit;
    } else if (node.tmpl != nullptr && !node.tmpl->hooks_exit.empty()) {
      exit_template = node.tmpl->hooks_exit;
    }
  }
  if (!exit_template.empty()) {
    auto it = by_name_.find(exit_template);
    if (it != by_name_.end()) {
      // Its arguments are filled where the call's were: they may name the call's outputs.
      Json args = Json::object();
      std::string problem;
      if (node.call != nullptr && exit_template == node.call->on_exit) {
        for (const auto& [k, v] : node.call->on_exit_arguments) {
          auto filled = fillIn(node.caller, &node.item, node.caller, v);
          if (filled) {
            args[k] = parameterText(*filled);
          } else if (problem.empty()) {
            problem = "hooks.exit arguments.parameters." + k + ": " + filled.error().message();
          }
        }
      }
      const std::uint32_t e =
          startCall(s.name + ".onExit", it->second, nullptr, n, kExitSlot, nodes_[n].boundary,
                    nodes_[n].caller, nodes_[n].item, args, now);
      if (!problem.empty()) end(e, NodePhase::kError, problem, now);
      nodes_[n].exit_node = e;
      addChild(n, e);
      return;
    }
  }
  fulfilled_.push_back(n);
}

void EngineRun::drain(TimePoint now) {
  if (draining_) return;
  draining_ = true;
  while (!fulfilled_.empty()) {
    const std::uint32_t n = fulfilled_.front();
    fulfilled_.pop_front();
    if (nodes_[n].fulfilled) continue;
    nodes_[n].fulfilled = true;
    const std::uint32_t p = nodes_[n].parent;
    const std::uint32_t slot = nodes_[n].slot;
    releaseGate(n);  // may start nodes: no reference into nodes_ is held across it
    if (p == kNoNode) {
      rootFulfilled(n, now);
    } else if (slot == kExitSlot) {
      fulfilled_.push_back(p);  // the node whose exit handler this was
    } else if (!isEnded(status_[p].phase)) {
      childFulfilled(p, n, now);
    }
  }
  draining_ = false;
  if (!fatal_.empty() && !cancelling_) cancel(now, "stopped: " + fatal_, false);
}

void EngineRun::fail(std::string message) {
  if (fatal_.empty()) fatal_ = std::move(message);
}

void EngineRun::childFulfilled(std::uint32_t p, std::uint32_t child, TimePoint now) {
  switch (nodes_[p].kind) {
    case NodeKind::kRetry:
      retryDecide(p, child, now);
      break;
    case NodeKind::kSteps:
      stepsGroupFulfilled(p, nodes_[child].slot, now);
      break;
    case NodeKind::kGroup:
      groupChildFulfilled(p, child, now);
      break;
    case NodeKind::kDag:
      dagTaskFulfilled(p, nodes_[child].slot, now);
      break;
    case NodeKind::kTaskGroup:
      taskGroupChildFulfilled(p, now);
      break;
    default:
      break;
  }
}

// The entry node ended: the workflow's exit handler runs (with workflow.status and
// workflow.failures, as operator.go sets them), then the workflow ends.
void EngineRun::rootFulfilled(std::uint32_t n, TimePoint now) {
  if (n != entry_) {
    if (n == exit_) finish(now);
    return;
  }
  const NodePhase phase = status_[n].phase;
  if (model_.on_exit.empty() || cancelling_) {
    finish(now);
    return;
  }
  auto it = by_name_.find(model_.on_exit);
  if (it == by_name_.end()) {
    finish(now);
    return;
  }
  globals_["workflow.status"] = std::string(
      phase == NodePhase::kSucceeded || phase == NodePhase::kSkipped || phase == NodePhase::kOmitted
          ? "Succeeded"
          : nodePhaseName(phase));
  Json failures = Json::array();
  for (const auto& s : status_) {
    if (!ed::failedOrError(s.phase)) continue;
    failures.push_back({{"displayName", s.display_name}, {"message", s.message},
                        {"templateName", s.template_name},
                        {"phase", std::string(nodePhaseName(s.phase))}, {"podName", s.id}});
  }
  globals_["workflow.failures"] = failures.dump();
  globals_["workflow.duration"] = std::to_string(
      std::chrono::duration<double>(now - started_).count());
  exit_ = startCall(workflow_name_ + ".onExit", it->second, nullptr, kNoNode, 0, kNoNode,
                    kNoNode, Json(), Json::object(), now);
}

void EngineRun::finish(TimePoint now) {
  (void)now;
  finished_ = true;
  const NodeStatus& entry = status_[entry_];
  NodePhase phase = entry.phase;
  if (phase == NodePhase::kSkipped || phase == NodePhase::kOmitted) phase = NodePhase::kSucceeded;
  phase_ = phase;
  message_ = entry.message;
  if (phase == NodePhase::kSucceeded && exit_ != kNoNode && ed::failedOrError(status_[exit_].phase)) {
    phase_ = status_[exit_].phase;
    message_ = status_[exit_].message;
  }
  if (!fatal_.empty()) {  // Argo's markWorkflowError
    phase_ = NodePhase::kError;
    message_ = fatal_;
  }
  ready_.clear();
  ready_pods_.clear();
}

void EngineRun::addTimer(TimePoint when, std::uint32_t n, Timer::What what) {
  std::uint32_t gen = 0;
  if (what == Timer::What::kCallAgain) gen = ++nodes_[n].timer_gen;
  // Before the heap grows: drop the timers of nodes that ended (each leaf's deadline stays
  // until its time otherwise, so a long run would hold one per leaf it ever ran);
  // timersDue() passes over them anyway.
  if (timers_.size() == timers_.capacity() && timers_.size() >= 64) {
    std::erase_if(timers_, [&](const Timer& t) {
      return t.what != Timer::What::kWorkflow && isEnded(status_[t.node].phase);
    });
    std::make_heap(timers_.begin(), timers_.end(), std::greater<>());
  }
  timers_.push_back({when, n, gen, what});
  std::push_heap(timers_.begin(), timers_.end(), std::greater<>());
}

std::optional<TimePoint> EngineRun::nextTimer() const {
  if (timers_.empty()) return std::nullopt;
  return timers_.front().when;
}

int EngineRun::timersDue(TimePoint now) {
  now_ = now;
  int abandoned = 0;
  while (!timers_.empty() && timers_.front().when <= now) {
    std::pop_heap(timers_.begin(), timers_.end(), std::greater<>());
    const Timer t = timers_.back();
    timers_.pop_back();
    if (t.what == Timer::What::kWorkflow) {
      // activeDeadlineSeconds: the leaves that run or wait fail, the nodes above them
      // end by their rules, and the exit handlers still run (operator.go's
      // failSuspendedAndPendingNodesAfterDeadlineOrShutdown).
      if (finished_ || cancelling_) continue;
      for (std::uint32_t n = 0; n < nodes_.size(); ++n) {
        if (isEnded(status_[n].phase) || nodes_[n].deadline == TimePoint::max()) continue;
        // (A retry waiting out its backoff ends when its next attempt would start.)
        if (nodes_[n].kind == NodeKind::kLeaf) end(n, NodePhase::kFailed, "Step exceeded its deadline", now);
      }
      continue;
    }
    Node& node = nodes_[t.node];
    if (isEnded(status_[t.node].phase) || cancelling_) continue;
    switch (t.what) {
      case Timer::What::kDeadline: {
        const bool whole = now >= node.deadline;
        if (node.in_flight) {
          node.control->cancel();
          node.control.reset();
          node.in_flight = false;
          ++node.token;
          --in_flight_;
          pods_in_flight_ -= isPod(*node.tmpl);
          ++unanswered_;
          ++abandoned;
        }
        ++node.timer_gen;  // a call due again is not made
        end(t.node, NodePhase::kFailed,
            whole ? "Step exceeded its deadline"
                  : "Pod was active on the node longer than the specified deadline",
            now);
        break;
      }
      case Timer::What::kCallAgain:
        if (t.gen == node.timer_gen && !node.in_flight && !node.queued) {
          node.queued = true;
          (isPod(*node.tmpl) ? ready_pods_ : ready_).push_front(t.node);
        }
        break;
      case Timer::What::kRetry:
        startAttempt(t.node, now);
        break;
      case Timer::What::kSuspend:
        end(t.node, NodePhase::kSucceeded, "", now);
        break;
      case Timer::What::kWorkflow:
        break;
    }
  }
  drain(now);
  return abandoned;
}

void EngineRun::resume(TimePoint now) {
  now_ = now;
  // Once per `argo resume`: a visit of every node is what it costs.
  for (std::uint32_t n = 0; n < nodes_.size(); ++n) {
    if (nodes_[n].tmpl != nullptr && nodes_[n].tmpl->kind == Template::Kind::kSuspend &&
        status_[n].phase == NodePhase::kRunning) {
      end(n, NodePhase::kSucceeded, "", now);
    }
  }
  drain(now);
}

void EngineRun::start(TimePoint now) {
  now_ = now;
  started_ = now;
  // Room for a node per call written (what a run of each template once makes), so that
  // the node arrays do not double past it: a 10,000-task dag holds 10,000 nodes, not 16,384.
  std::size_t written = 2;
  for (const auto& t : model_.templates) {
    written += t.tasks.size() + t.steps.size();
    for (const auto& g : t.steps) written += g.size();
  }
  nodes_.reserve(written);
  status_.reserve(written);
  if (model_.active_deadline) {
    workflow_deadline_ = now + *model_.active_deadline;
    timers_.push_back({workflow_deadline_, kNoNode, 0, Timer::What::kWorkflow});
    std::push_heap(timers_.begin(), timers_.end(), std::greater<>());
  }
  auto it = by_name_.find(model_.entrypoint);
  if (it == by_name_.end()) {
    entry_ = newNode(workflow_name_, NodeType::kSkipped, nullptr, kNoNode, kNoNode, 0);
    end(entry_, NodePhase::kError, "entrypoint template '" + model_.entrypoint + "' not found",
        now);
    drain(now);
    return;
  }
  Json args = Json::object();
  for (const auto& [k, v] : globals_.items()) {
    static constexpr std::string_view kPrefix = "workflow.parameters.";
    if (k.compare(0, kPrefix.size(), kPrefix) == 0) args[k.substr(kPrefix.size())] = v;
  }
  entry_ = startCall(workflow_name_, it->second, nullptr, kNoNode, 0, kNoNode, kNoNode, Json(),
                     args, now);
  drain(now);
}

void EngineRun::cancel(TimePoint now, const std::string& message, bool by_user) {
  now_ = now;
  cancelling_ = true;
  cancelled_ = by_user;
  for (std::uint32_t n = 0; n < nodes_.size(); ++n) {
    if (!isEnded(status_[n].phase)) end(n, NodePhase::kFailed, message, now);
  }
  ready_.clear();
  ready_pods_.clear();
  drain(now);
  if (!finished_) finish(now);
}

RunResult EngineRun::result(Millis duration) {
  RunResult r;
  r.workflow = workflow_name_;
  r.uid = uid_;
  r.phase = finished_ ? phase_ : NodePhase::kError;
  r.message = message_;
  r.cancelled = cancelled_;
  r.abandoned = in_flight_ + unanswered_;
  r.duration = duration;
  Json params = Json::array();
  for (const auto& [k, v] : global_outputs_.items())
    params.push_back({{"name", k}, {"value", parameterText(v)}});
  if (!params.empty()) r.outputs["parameters"] = std::move(params);
  r.nodes = std::move(status_);
  return r;
}

}  // namespace plugboard::core
