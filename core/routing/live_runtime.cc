#include "core/routing/live_runtime.h"

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <set>
#include <utility>

#include <spdlog/spdlog.h>

namespace plugboard::core {
namespace {
constexpr uint32_t kFileEvents = IN_CLOSE_WRITE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM | IN_CREATE |
                                 IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF;

// Logs the refused files and conflicting keys of `next` that `before` did not have, so
// that each is logged once, when it appears.
void logNews(const Catalog& next, const Catalog* before) {
  auto isNew = [](const auto& item, const auto& old) {
    return std::find(old.begin(), old.end(), item) == old.end();
  };
  for (const auto& p : next.problems()) {
    if (before == nullptr || isNew(p, before->problems())) spdlog::error("{}", p.oneLine());
  }
  for (const auto& c : next.conflicts()) {
    if (before == nullptr || isNew(c, before->conflicts())) spdlog::warn("{}", c.oneLine());
  }
}

}  // namespace

// The debounce timer's state. Each batch of changes arms a new timer (a new `armed`
// number); a timer that fires with an older number, or after stop(), does nothing.
struct LiveRuntime::Debounce {
  std::mutex mu;                  // guards everything below
  std::uint64_t armed = 0;        // the number of the timer that counts
  AlarmClock::TimerId timer = 0;  // that timer, while it may fire
  bool due = false;               // the timer fired: apply them
  int fd = -1;                    // eventfd written when it fires; -1 after stop()
};

LiveRuntime::LiveRuntime(std::vector<std::filesystem::path> dirs, TrustPolicy trust, DispatcherOptions options)
    : dirs_(std::move(dirs)), trust_(std::move(trust)), options_(std::move(options)) {}

LiveRuntime::~LiveRuntime() { stop(); }

Status LiveRuntime::start() {
  auto catalog = std::make_shared<const Catalog>(Catalog::scan(dirs_, trust_));
  logNews(*catalog, nullptr);
  std::lock_guard lock(mu_);
  current_ = std::make_shared<Dispatcher>(catalog, nullptr, options_, nullptr);
  return Status::Ok();
}

Status LiveRuntime::start(AlarmClock& clock, Millis debounce) {
  auto mirror = PluginMirror::create();
  if (!mirror) return mirror.error();
  mirror_ = std::move(*mirror);
  inotify_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  due_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  epoll_ = ::epoll_create1(EPOLL_CLOEXEC);
  bool ok = inotify_ >= 0 && due_ >= 0 && epoll_ >= 0;
  for (int fd : {inotify_, due_}) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    ok = ok && ::epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &ev) == 0;
  }
  if (!ok) {
    const std::string why = std::strerror(errno);
    stop();
    return Error("cannot watch the plugin directories: " + why);
  }
  clock_ = &clock;
  debounce_ = debounce;
  debounce_state_ = std::make_shared<Debounce>();
  debounce_state_->fd = due_;
  addWatches();
  reload();
  return Status::Ok();
}

void LiveRuntime::stop() {
  if (debounce_state_) {
    AlarmClock::TimerId timer;
    {
      std::lock_guard lock(debounce_state_->mu);
      ++debounce_state_->armed;  // a timer firing now does nothing
      debounce_state_->fd = -1;
      timer = std::exchange(debounce_state_->timer, 0);
    }
    if (timer != 0) clock_->cancel(timer);
    debounce_state_.reset();
  }
  for (int fd : {epoll_, inotify_, due_}) {
    if (fd >= 0) ::close(fd);
  }
  epoll_ = inotify_ = due_ = -1;
  clock_ = nullptr;
}

bool LiveRuntime::takeChanges() {
  if (inotify_ < 0) return false;
  bool changed = false;
  alignas(inotify_event) char buf[16384];
  while (::read(inotify_, buf, sizeof buf) > 0) changed = true;
  std::uint64_t fired;
  ssize_t ignored = ::read(due_, &fired, sizeof fired);  // resets it
  (void)ignored;
  Debounce& d = *debounce_state_;
  AlarmClock::TimerId stale = 0;
  bool apply = false;
  {
    std::lock_guard lock(d.mu);
    if (changed) {  // quiet for `debounce` from now on before they are applied
      stale = std::exchange(d.timer, 0);
      const std::uint64_t number = ++d.armed;
      d.due = false;
      d.timer = clock_->after(debounce_, [state = debounce_state_, number] {
        std::lock_guard lock(state->mu);
        if (state->armed != number || state->fd < 0) return;
        state->timer = 0;
        state->due = true;
        const std::uint64_t one = 1;
        ssize_t ignored = ::write(state->fd, &one, sizeof one);
        (void)ignored;
      });
    } else if (d.due) {
      d.due = false;
      apply = true;
    }
  }
  if (stale != 0) clock_->cancel(stale);
  if (!apply) return false;
  addWatches();  // a directory may have appeared
  reload();
  return true;
}

std::shared_ptr<Dispatcher> LiveRuntime::current() const {
  std::lock_guard lock(mu_);
  return current_;
}

std::vector<std::string> LiveRuntime::draining() const {
  std::lock_guard lock(mu_);
  std::set<std::string> current_files;
  if (current_) {
    for (const auto& e : current_->catalog().entries())
      current_files.insert(current_->sourceOf(e).identity(e));
  }
  // An older generation is alive only while a call holds it: what it hosts that the
  // current one does not is draining.
  std::set<std::string> out;
  for (const auto& weak : old_) {
    if (auto d = weak.lock()) {
      for (const auto& e : d->catalog().entries()) {
        if (!current_files.count(d->sourceOf(e).identity(e))) out.insert(e.label);
      }
    }
  }
  return {out.begin(), out.end()};
}

void LiveRuntime::watchAlso(std::function<std::vector<std::filesystem::path>()> dirs,
                            std::function<bool()> changed) {
  other_dirs_.push_back(std::move(dirs));
  others_changed_.push_back(std::move(changed));
}

void LiveRuntime::addWatches() {
  // Watch each plugin directory, and its parent so that a directory created (or
  // replaced) later is noticed.
  std::vector<std::filesystem::path> all = dirs_;
  for (const auto& dirs : other_dirs_) {
    const auto more = dirs();
    all.insert(all.end(), more.begin(), more.end());
  }
  for (const auto& dir : all) {
    ::inotify_add_watch(inotify_, dir.c_str(), kFileEvents | IN_ONLYDIR);
    const auto parent = dir.has_parent_path() ? dir.parent_path() : std::filesystem::path(".");
    ::inotify_add_watch(inotify_, parent.c_str(), IN_CREATE | IN_MOVED_TO | IN_ONLYDIR);
  }
}

void LiveRuntime::reload() {
  std::lock_guard serial(reload_mu_);
  const auto start = std::chrono::steady_clock::now();
  MirrorState state = mirror_->sync(dirs_, trust_);
  // Ask every source (no short cut: each brings its own state up to date).
  bool others = false;
  for (const auto& changed : others_changed_) others = changed() || others;
  // The catalog gets the manifests; the sources (the private copies, the started
  // plugins) go to the dispatcher, which holds them while this generation lives.
  auto sources = std::make_shared<PluginSources>();
  std::vector<CatalogEntry> entries;
  entries.reserve(state.entries.size());
  for (auto& mirrored : state.entries) {
    sources->add(mirrored.entry, PluginSource::file(std::move(mirrored.copy)));
    entries.push_back(std::move(mirrored.entry));
  }
  if (extra_) extra_(entries, *sources, state.problems);
  std::shared_ptr<Dispatcher> previous = current();
  // What served until now keeps its claims: a newcomer with the same name and version, or
  // claiming a name or alias already held, is refused (core/manifests/claims.h).
  const Catalog* incumbent = previous ? &previous->catalog() : nullptr;
  auto catalog = std::make_shared<const Catalog>(
      Catalog::fromEntries(std::move(entries), std::move(state.problems), incumbent));
  if (previous && state.changes.empty() && !others &&
      catalog->problems() == incumbent->problems() &&
      catalog->conflicts() == incumbent->conflicts()) {
    return;  // nothing to apply
  }
  logNews(*catalog, incumbent);
  auto next = std::make_shared<Dispatcher>(catalog, std::move(sources), options_, previous.get());
  {
    std::lock_guard lock(mu_);
    if (previous) old_.push_back(previous);
    current_ = next;
    std::erase_if(old_, [](const std::weak_ptr<Dispatcher>& w) { return w.expired(); });
  }
  const auto took = std::chrono::duration_cast<Millis>(std::chrono::steady_clock::now() - start);
  if (previous) ++reloads_;
  std::set<std::filesystem::path> refused;
  for (const auto& p : catalog->problems()) refused.insert(p.file);
  const auto now = std::chrono::system_clock::now();
  // A file the previous generation refused was never served: its version is no "from".
  const auto served = [incumbent](const std::filesystem::path& file) {
    if (incumbent == nullptr) return false;
    const auto& entries = incumbent->entries();
    return std::any_of(entries.begin(), entries.end(),
                       [&file](const CatalogEntry& e) { return e.file == file; });
  };
  for (const auto& c : state.changes) {
    if (!c.new_version.empty() && refused.count(c.file)) continue;  // logged as refused
    const std::string old_version = served(c.file) ? c.old_version : std::string();
    if (c.new_version.empty() && old_version.empty()) continue;  // refused, now gone
    spdlog::info("{}: plugin '{}' {} -> {} in {}", c.file.string(), c.name,
                 old_version.empty() ? "(new)" : old_version,
                 c.new_version.empty() ? "(removed)" : c.new_version, formatElapsed(took));
    if (!previous) continue;  // the start, not a reload
    std::lock_guard lock(recent_mu_);
    recent_.push_front({now, c.file, c.name, old_version, c.new_version, took});
    if (recent_.size() > defaults::kRecentReloads) recent_.pop_back();
  }
}

std::vector<ReloadRecord> LiveRuntime::recentReloads() const {
  std::lock_guard lock(recent_mu_);
  return {recent_.begin(), recent_.end()};
}

}  // namespace plugboard::core
