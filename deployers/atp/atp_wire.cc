// deployers/atp/atp_wire.cc: see atp_wire.h. Message shapes as the Arcaflow Python SDK's
// atp.py (ATPServer) and the Go SDK's atp/ client speak them.
#include "deployers/atp/atp_wire.h"

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <plugboard/host/json_text.h>

#include "deployers/atp/cbor_reader.h"

namespace plugboard::atp_deployer {
namespace {

using deployer_common::WireEvent;

enum MessageId : int { kWorkStart = 1, kWorkDone = 2, kSignal = 3, kClientDone = 4, kError = 5 };
constexpr const char* kRunPrefix = "pb-";

std::string cbor(const Json& value) {
  std::vector<std::uint8_t> bytes = Json::to_cbor(value);
  return std::string(bytes.begin(), bytes.end());
}

// `object[key]` when it is true; false when it is missing or not a boolean.
bool flag(const Json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_boolean() && it->get<bool>();
}

std::string textOf(const Json& value) {
  return value.is_string() ? value.get<std::string>()
                           : value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// An ERROR's text as one line for a step's message, and the rest for the log. The Python
// SDK sends "Error while calling step RUN/STEP:<exception> Traceback (most recent call
// last):" and the traceback's lines (atp.py, ATPServer.start_step): the line is the
// exception's text, without the SDK's preamble (plugboard's message names the step), or
// the traceback's last line when that text is empty; the rest is every line of the text.
struct Headline {
  std::string line;
  std::vector<std::string> rest;
};

std::string trimmed(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r\n");
  return std::string(text.substr(first, last - first + 1));
}

Headline headline(const std::string& text) {
  static constexpr std::string_view kTraceback = "Traceback (most recent call last):";
  static constexpr std::string_view kPreamble = "Error while calling step ";
  std::vector<std::string> lines;
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t nl = text.find('\n', start);
    const std::size_t end = nl == std::string::npos ? text.size() : nl;
    if (std::string line = trimmed(std::string_view(text).substr(start, end - start)); !line.empty())
      lines.push_back(std::move(line));
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  if (lines.size() <= 1) return {lines.empty() ? std::string("no message") : lines[0], {}};
  std::string_view first = text;
  if (const auto at = first.find(kTraceback); at != std::string_view::npos) first = first.substr(0, at);
  std::string line = trimmed(first.substr(0, first.find('\n')));
  if (line.starts_with(kPreamble)) {
    const auto colon = line.find(':');
    if (colon != std::string::npos) line = trimmed(std::string_view(line).substr(colon + 1));
  }
  if (line.empty()) line = lines.back();  // the exception, as the traceback ends with it
  return {std::move(line), std::move(lines)};
}

class AtpWire : public deployer_common::Wire {
 public:
  explicit AtpWire(WireSpec spec)
      : spec_(std::move(spec)), reader_(spec_.frame_limit, host::kMaxJsonDepth, true) {}

  std::string greeting() override { return cbor(Json(nullptr)); }  // the start output

  host::Status feed(std::string_view bytes, std::vector<WireEvent>& events) override {
    items_.clear();
    host::Status fed = reader_.feed(bytes, items_);
    for (auto& item : items_) {
      if (host::Status st = handle(item, events); !st) return st;
    }
    if (!fed) return host::Error(fed.error().message());
    return host::Status::Ok();
  }

  host::Expected<std::string> execute(std::uint64_t id, std::string_view request) override {
    Json r = Json::parse(request, nullptr, false);
    if (!r.is_object()) return host::Error("the request is not a JSON object");
    const auto rpc_it = r.find("rpc");
    const std::string rpc =
        rpc_it != r.end() && rpc_it->is_string() ? rpc_it->get<std::string>() : "template.execute";
    std::lock_guard lock(mu_);
    const std::string step = stepOf(manifest_, rpc);
    if (step.empty()) {
      return host::Error("it does not provide '" + rpc + "' (its RPCs are arcaflow.<step>" +
                         (manifest_["arcaflow"].value("default_step", "").empty()
                              ? std::string()
                              : " and template.execute") +
                         ")");
    }
    Json config = r.contains("args") ? r["args"] : Json::object();
    std::string bytes = cbor({{"id", kWorkStart},
                              {"run_id", kRunPrefix + std::to_string(id)},
                              {"data", {{"id", step}, {"config", std::move(config)}}}});
    if (bytes.size() > spec_.frame_limit) {
      return host::Error("the request of " + std::to_string(bytes.size()) +
                         " bytes is more than the limit of " + std::to_string(spec_.frame_limit) +
                         " bytes (option 'frame_limit'); it was not sent");
    }
    runs_[id] = step;
    return bytes;
  }

  std::string cancel(std::uint64_t id) override {
    std::lock_guard lock(mu_);
    auto it = runs_.find(id);
    if (it == runs_.end() || !cancellable(manifest_, it->second)) return {};
    return cbor({{"id", kSignal},
                 {"run_id", kRunPrefix + std::to_string(id)},
                 {"data", {{"signal_id", "cancel"}, {"data", Json::object()}}}});
  }

  std::string shutdown() override {
    return cbor({{"id", kClientDone}, {"run_id", ""}, {"data", Json::object()}});
  }

 private:
  static host::Status broke(const std::string& why) {
    return host::Error("broke the Arcaflow Transport Protocol: " + why);
  }

  host::Status handle(Json& m, std::vector<WireEvent>& events) {
    if (!greeted_) return hello(m, events);
    const auto id = m.find("id");
    if (id == m.end() || !id->is_number_integer())
      return broke("a message without a numeric 'id': " + CborReader::quote(textOf(m)));
    const auto run = m.find("run_id");
    const std::string run_id = run != m.end() && run->is_string() ? run->get<std::string>() : "";
    Json data = m.contains("data") && m["data"].is_object() ? m["data"] : Json::object();
    const int kind = id->get<int>();
    if (kind == kError) return error(run_id, data, events);
    if (kind == kSignal) {
      events.push_back(log("debug", "signal '" + textOf(data.value("signal_id", Json(""))) +
                                        "' from run '" + run_id + "' ignored"));
      return host::Status::Ok();
    }
    if (kind != kWorkDone) return broke("a message of unknown id " + id->dump());
    auto call = callOf(run_id);
    if (!call) return broke(call.error().message());
    takeLogs(data, events, *call);
    WireEvent done;
    done.kind = WireEvent::Kind::kResult;
    done.id = *call;
    done.result = result(data);
    forget(*call);
    events.push_back(std::move(done));
    return host::Status::Ok();
  }

  host::Status hello(Json& m, std::vector<WireEvent>& events) {
    const auto version = m.find("version");
    if (version == m.end() || !m.contains("schema"))
      return broke("its first message is not a hello {version, schema}: " +
                   CborReader::quote(textOf(m)));
    if (*version != kAtpVersion) {
      return broke("its hello says version " + version->dump() + "; plugboard speaks version " +
                   std::to_string(kAtpVersion) + " (Arcaflow plugin SDK 0.12 or later)");
    }
    auto manifest = manifestOf(m["schema"], spec_.manifest);
    if (!manifest)
      return host::Error("sent a schema plugboard cannot use: " + manifest.error().message());
    if (spec_.on_schema) spec_.on_schema(m["schema"]);
    {
      std::lock_guard lock(mu_);
      manifest_ = *manifest;
    }
    greeted_ = true;
    WireEvent event;
    event.kind = WireEvent::Kind::kHello;
    event.manifest = std::move(*manifest);
    events.push_back(std::move(event));
    return host::Status::Ok();
  }

  host::Status error(const std::string& run_id, const Json& data, std::vector<WireEvent>& events) {
    const Headline said = headline(textOf(data.value("error", Json("no message"))));
    const std::string where = run_id.empty() ? "" : " in run '" + run_id + "'";
    const auto logRest = [&] {
      for (const auto& line : said.rest) events.push_back(log("info", "error" + where + ": " + line));
    };
    const std::string more = said.rest.empty() ? "" : " (the traceback is in the log)";
    if (flag(data, "server_fatal")) {
      logRest();
      return host::Error("reported a fatal error: " + said.line + more);
    }
    if (!flag(data, "step_fatal")) {
      events.push_back(log("warn", "error" + where + ": " + said.line + more));
      logRest();
      return host::Status::Ok();
    }
    auto call = callOf(run_id);
    if (!call) return broke(call.error().message());
    for (const auto& line : said.rest)
      events.push_back(log("info", "error" + where + ": " + line, *call));
    WireEvent done;
    done.kind = WireEvent::Kind::kResult;
    done.id = *call;
    done.result = Json::parse(
        Result::Error(spec_.who + ": step '" + stepName(*call) + "' failed: " + said.line + more)
            .toText());
    forget(*call);
    events.push_back(std::move(done));
    return host::Status::Ok();
  }

  // The call of `run_id`, which must be in flight.
  host::Expected<std::uint64_t> callOf(const std::string& run_id) {
    std::lock_guard lock(mu_);
    if (run_id.starts_with(kRunPrefix)) {
      try {
        std::size_t used = 0;
        const std::string digits = run_id.substr(3);
        const std::uint64_t id = std::stoull(digits, &used);
        if (used == digits.size() && runs_.contains(id)) return id;
      } catch (const std::exception&) {
        // not a run id of ours
      }
    }
    return host::Error("it answered run id '" + run_id + "', which no call in flight has");
  }

  std::string stepName(std::uint64_t id) {
    std::lock_guard lock(mu_);
    auto it = runs_.find(id);
    return it == runs_.end() ? "?" : it->second;
  }

  void forget(std::uint64_t id) {
    std::lock_guard lock(mu_);
    runs_.erase(id);
  }

  Json result(const Json& data) {
    const std::string output_id = textOf(data.value("output_id", Json("")));
    Json output = data.value("output_data", Json(nullptr));
    // The answer's fields keep their types in outputs.values; outputs.parameters renders
    // them as workflow parameters (text), which is what Argo's edge needs.
    Json values = output.is_object() ? output : Json{{"output", output}};
    values["output_id"] = output_id;
    Json parameters = values;
    for (auto& [name, value] : parameters.items()) {
      if (!value.is_string()) value = value.dump(-1, ' ', false, Json::error_handler_t::replace);
    }
    Json outputs = {{"parameters", std::move(parameters)}, {"values", std::move(values)}};
    if (spec_.manifest.success_ids.contains(output_id)) {
      return Json::parse(Result::Succeeded().withOutputs(std::move(outputs)).toText());
    }
    // The plugin's answer stays the step's outputs, as the engine completes a step with
    // whatever output it gave (a "cancelled" output after a cancel, an "error" output).
    std::string why =
        output.is_object() && output.contains("error") ? textOf(output["error"]) : textOf(output);
    return Json::parse(
        Result::Failed("output '" + output_id + "': " + why).withOutputs(std::move(outputs)).toText());
  }

  // The part of the cumulative debug_logs not seen before, as log lines. Runs in flight at
  // once finish in any order: a run's copy may be older than one already seen (a prefix of
  // it: nothing new). A copy that neither extends nor precedes what was seen is a new log
  // (the plugin started it again): all of it is new. The new lines belong to `call`, whose
  // answer brought them (a line another run in flight wrote meanwhile is among them: the
  // protocol does not say).
  void takeLogs(const Json& data, std::vector<WireEvent>& events, std::uint64_t call) {
    const auto logs = data.find("debug_logs");
    if (logs == data.end() || !logs->is_string()) return;
    const std::string& all = logs->get_ref<const std::string&>();
    std::string fresh;
    if (all.starts_with(logs_)) {
      fresh = all.substr(logs_.size());
      logs_ = all;
    } else if (!logs_.starts_with(all)) {
      fresh = all;
      logs_ = all;
    }
    std::size_t start = 0;
    while (start < fresh.size()) {
      const std::size_t nl = fresh.find('\n', start);
      const std::string line = fresh.substr(start, nl == std::string::npos ? nl : nl - start);
      if (!line.empty()) events.push_back(log("info", line, call));
      if (nl == std::string::npos) break;
      start = nl + 1;
    }
  }

  static WireEvent log(const char* level, std::string text) {
    WireEvent event;
    event.kind = WireEvent::Kind::kLog;
    event.level = level;
    event.text = std::move(text);
    return event;
  }
  static WireEvent log(const char* level, std::string text, std::uint64_t call) {
    WireEvent event = log(level, std::move(text));
    event.for_call = true;
    event.id = call;
    return event;
  }

  const WireSpec spec_;
  CborReader reader_;
  std::vector<Json> items_;
  bool greeted_ = false;
  std::string logs_;  // the longest debug_logs seen
  std::mutex mu_;
  Json manifest_ = Json::object();
  std::map<std::uint64_t, std::string> runs_;  // calls in flight: their steps
};

}  // namespace

std::unique_ptr<deployer_common::Wire> makeAtpWire(const WireSpec& spec) {
  return std::make_unique<AtpWire>(spec);
}

}  // namespace plugboard::atp_deployer
