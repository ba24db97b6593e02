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
    takeLogs(data, events);
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
    const std::string text = textOf(data.value("error", Json("no message")));
    if (flag(data, "server_fatal")) return host::Error("reported a fatal error: " + text);
    if (!flag(data, "step_fatal")) {
      events.push_back(
          log("warn", "error" + (run_id.empty() ? "" : " in run '" + run_id + "'") + ": " + text));
      return host::Status::Ok();
    }
    auto call = callOf(run_id);
    if (!call) return broke(call.error().message());
    WireEvent done;
    done.kind = WireEvent::Kind::kResult;
    done.id = *call;
    done.result = Json::parse(
        Result::Error(spec_.who + ": step '" + stepName(*call) + "' failed: " + text).toText());
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
    if (spec_.manifest.success_ids.contains(output_id)) {
      Json parameters = output.is_object() ? output : Json{{"output", output}};
      parameters["output_id"] = output_id;
      return Json::parse(Result::Succeeded(std::move(parameters)).toText());
    }
    std::string why =
        output.is_object() && output.contains("error") ? textOf(output["error"]) : textOf(output);
    return Json::parse(Result::Failed("output '" + output_id + "': " + why).toText());
  }

  // The part of the cumulative debug_logs not seen before, as log lines. Runs in flight at
  // once finish in any order: a run's copy may be older than one already seen (a prefix of
  // it: nothing new). A copy that neither extends nor precedes what was seen is a new log
  // (the plugin started it again): all of it is new.
  void takeLogs(const Json& data, std::vector<WireEvent>& events) {
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
      if (!line.empty()) events.push_back(log("info", line));
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
