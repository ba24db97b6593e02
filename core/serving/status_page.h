// core/serving/status_page.h: the HTML page `plugboard serve` answers GET / and /ui with.
//
// One self-contained page (its CSS and script inline, nothing fetched from elsewhere): it
// reads GET /api/v1/plugins every few seconds, sending the bearer token its user typed
// (kept in the browser tab's session storage), and shows each plugin, refused files,
// registry problems, conflicts and the latest reloads. The page itself holds no data, so
// it needs no token. Its source is core/serving/status_page.html, embedded at build time.
// kStatusPagePolicy is the Content-Security-Policy it is served with: nothing but itself
// and requests to the same server.
//
// Thread-safety: immutable data.
#ifndef PLUGBOARD_CORE_SERVING_STATUS_PAGE_H_
#define PLUGBOARD_CORE_SERVING_STATUS_PAGE_H_

#include <string_view>

namespace plugboard::core {

std::string_view statusPage();

inline constexpr const char* kStatusPagePolicy =
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'";

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_SERVING_STATUS_PAGE_H_
