// fuzz/http.cc: what `plugboard serve` does with the bytes a client sends, in-process and
// without sockets: Beast's request parser with the server's limits, then the router
// (core/serving/http_router.h) and the response as it is written back, for every request
// on the connection while it is kept alive (pipelined requests included).
//
// With PLUGBOARD_FUZZ_HTTP_PIECES (the target http_pieces, fuzz/http_pieces.cc) the bytes
// arrive as a socket delivers them: the input's first two bytes seed the sizes of the
// pieces, and the parser is handed the next piece only when it has used what it holds and
// needs more, as http::async_read hands it what each read brought. A request read whole
// and the same request read in pieces of any sizes must get the same answer; a framing
// bug (a body waited for that has arrived, a request cut short) shows as a difference.
//
// The router serves the example plugins hello, echo, fail, multi and legacy, in-process
// through the `native` deployer, from a directory of links made at the first input and
// removed at exit. Every response must be one the server can write.
#include <future>
#include <stdlib.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

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
    FUZZ_CHECK((*runtime)->start().ok());
    FUZZ_CHECK((*runtime)->current()->catalog().entries().size() == 5);
    // The runtime and the router are kept for the whole process, as `serve` keeps them. The
    // pool is destroyed at exit, which joins its threads: a worker that ended idle and was
    // never joined is a leak to ThreadSanitizer.
    static core::WorkPool pool(2);
    return new core::HttpRouter(*runtime->release(), core::ServerOptions{}, pool, pool.clock());
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

// The bytes a connection brings, whole or in pieces.
class Connection {
 public:
  Connection(std::string_view bytes, unsigned seed, bool in_pieces)
      : rest_(bytes), rng_(seed), in_pieces_(in_pieces) {}
  // Moves the next piece into `buffer`; false when the peer sent nothing more.
  bool read(boost::beast::flat_buffer& buffer) {
    if (rest_.empty()) return false;
    std::size_t n = rest_.size();
    if (in_pieces_) {
      // Mostly small pieces, sometimes one byte, sometimes a socket buffer's worth.
      const unsigned pick = rng_() % 8;
      n = std::min(n, pick == 0 ? 1 : pick < 6 ? 1 + rng_() % 512 : 1 + rng_() % 65536);
    }
    std::memcpy(buffer.prepare(n).data(), rest_.data(), n);
    buffer.commit(n);
    rest_.remove_prefix(n);
    return true;
  }

 private:
  std::string_view rest_;
  std::minstd_rand rng_;
  bool in_pieces_;
};

// The status and body of each answer the connection gets, in order.
std::vector<std::string> serveConnection(std::string_view bytes, unsigned seed, bool in_pieces) {
  core::HttpRouter& r = router();
  Connection connection(bytes, seed, in_pieces);
  boost::beast::flat_buffer buffer;
  std::vector<std::string> answers;
  const auto answer = [&answers](const core::HttpResponse& res) {
    answers.push_back(std::to_string(res.result_int()) + " " + res.body());
  };
  for (int i = 0; i < kRequestsPerInput; ++i) {
    core::HttpParser parser;
    r.limit(parser);
    parser.eager(true);  // as http::async_read sets it
    boost::system::error_code ec;
    // What http::async_read does: hand the parser what is buffered; when it needs more,
    // read more; when there is no more, the peer closed its side.
    while (!parser.is_done()) {
      if (buffer.size() > 0) {
        const std::size_t used = parser.put(buffer.data(), ec);
        buffer.consume(used);
        if (ec && ec != http::error::need_more) break;
        ec = {};
        if (used > 0) continue;
      }
      if (connection.read(buffer)) continue;
      if (parser.got_some()) {
        parser.put_eof(ec);
        FUZZ_CHECK(ec || parser.is_done());
      } else {
        ec = http::error::end_of_stream;
      }
      break;
    }
    if (ec) {
      const auto unread = buffer.data();
      if (auto res =
              r.readFailed(ec, parser, {static_cast<const char*>(unread.data()), unread.size()})) {
        answer(*res);
        send(std::move(*res), false);
      }
      return answers;
    }
    core::HttpRequest req = parser.release();
    const bool keep_alive = req.keep_alive();
    std::promise<core::HttpResponse> answered;
    r.handle(req, [&answered](core::HttpResponse res) { answered.set_value(std::move(res)); });
    core::HttpResponse res = answered.get_future().get();
    answer(res);
    send(std::move(res), keep_alive);
    if (!keep_alive) return answers;
  }
  return answers;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
#ifdef PLUGBOARD_FUZZ_HTTP_PIECES
  if (bytes.size() < 2) return 0;
  const unsigned seed = static_cast<unsigned char>(bytes[0]) * 256u + static_cast<unsigned char>(bytes[1]) + 1;
  const std::string_view rest = bytes.substr(2);
  // Answers that name no call (anything but a plugin's) are the same whole and in pieces.
  // (A plugin's answers are too, but a call's outcome may be kept between the two
  // readings: the comparison is of what the reader made of the bytes.)
  const auto whole = serveConnection(rest, seed, false);
  const auto pieces = serveConnection(rest, seed, true);
  FUZZ_CHECK(whole.size() == pieces.size());
  for (std::size_t i = 0; i < whole.size(); ++i) {
    FUZZ_CHECK(whole[i].substr(0, 3) == pieces[i].substr(0, 3));
  }
#else
  serveConnection(bytes, 0, false);
#endif
  return 0;
}
