// fuzz/http.cc: what `plugboard serve` does with the bytes a client sends, in-process and
// without sockets: Beast's request parser with the server's limits, then the router
// (core/serving/http_router.h) and the response as it is written back, for every request
// on the connection while it is kept alive (pipelined requests included).
//
// The router serves the example plugins hello, echo, fail, multi and legacy, in-process
// through the `native` deployer, from a directory of links made at the first input and
// removed at exit. Every response must be one the server can write.
#include <stdlib.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>

#include <spdlog/spdlog.h>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include "core/runtime/runtime.h"
#include "core/serving/http_router.h"
#include "fuzz/support.h"

namespace {

namespace core = plugboard::core;
namespace http = boost::beast::http;

// A connection carries at most this many requests here (the server has no such limit):
// enough for pipelining, few enough to keep each input quick.
constexpr int kRequestsPerInput = 8;

std::filesystem::path& pluginDir() {
  static std::filesystem::path dir;
  return dir;
}

void removePluginDir() {
  std::error_code ec;
  std::filesystem::remove_all(pluginDir(), ec);
}

core::HttpRouter& router() {
  static core::HttpRouter* const made = [] {
    spdlog::set_level(spdlog::level::off);
    char dir[] = "/tmp/plugboard-fuzz-http-XXXXXX";
    FUZZ_CHECK(::mkdtemp(dir) != nullptr);
    pluginDir() = dir;
    std::atexit(removePluginDir);
    for (const char* name : {"hello", "echo", "fail", "multi", "legacy"}) {
      const std::string file = std::string(name) + ".so";
      std::filesystem::create_symlink(std::filesystem::path(PLUGBOARD_FUZZ_PLUGIN_DIR) / file,
                                      pluginDir() / file);
    }
    core::Config config;
    config.plugin_dirs = {pluginDir()};
    config.deployer_dirs = {PLUGBOARD_FUZZ_DEPLOYER_DIR};
    auto runtime = core::openLiveRuntime(config);
    FUZZ_CHECK(runtime.ok());
    FUZZ_CHECK((*runtime)->start(false).ok());
    FUZZ_CHECK((*runtime)->current()->catalog().entries().size() == 5);
    // Kept for the whole process, as `serve` keeps them: never destroyed.
    return new core::HttpRouter(*runtime->release(), core::ServerOptions{});
  }();
  return *made;
}

// The response as the server sends it: prepared, counted and serialised.
void send(core::HttpResponse res, bool keep_alive) {
  res.set(http::field::server, "plugboard");
  res.keep_alive(keep_alive);
  res.prepare_payload();
  router().countResponse(res);
  FUZZ_CHECK(res.result_int() >= 200 && res.result_int() < 600);
  http::response_serializer<http::string_body> serializer(res);
  boost::system::error_code ec;
  std::size_t written = 0;
  while (!ec && !serializer.is_done()) {
    serializer.next(ec, [&](boost::system::error_code&, const auto& buffers) {
      const std::size_t n = boost::asio::buffer_size(buffers);
      written += n;
      serializer.consume(n);
    });
  }
  FUZZ_CHECK(!ec);
  FUZZ_CHECK(written > res.body().size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  core::HttpRouter& r = router();
  boost::beast::flat_buffer buffer;
  if (size > 0) {
    std::memcpy(buffer.prepare(size).data(), data, size);
    buffer.commit(size);
  }
  for (int i = 0; i < kRequestsPerInput; ++i) {
    core::HttpParser parser;
    r.limit(parser);
    parser.eager(true);  // as http::async_read sets it
    boost::system::error_code ec;
    // What http::async_read does: hand the parser what is buffered; when it needs more,
    // there is no more (the peer closed its side).
    while (!parser.is_done()) {
      std::size_t used = 0;
      if (buffer.size() > 0) {
        used = parser.put(buffer.data(), ec);
        buffer.consume(used);
        if (ec && ec != http::error::need_more) break;
        ec = {};
        if (used > 0) continue;
      }
      if (parser.got_some()) {
        parser.put_eof(ec);
        FUZZ_CHECK(ec || parser.is_done());
      } else {
        ec = http::error::end_of_stream;
      }
      break;
    }
    if (ec) {
      if (auto answer = r.readFailed(ec)) send(std::move(*answer), false);
      return 0;
    }
    core::HttpRequest req = parser.release();
    const bool keep_alive = req.keep_alive();
    send(r.handle(req), keep_alive);
    if (!keep_alive) return 0;
  }
  return 0;
}
