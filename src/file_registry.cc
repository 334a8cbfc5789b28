// The file registry (file_registry.h): worker ids of one host as lock files.
//
// Files in <dir>/workers/, for the worker of region R and host H:
//   rR-hH.lock       held with flock(LOCK_EX) by the holder for the lease's
//                    life. Never removed: a removed lock file would let two
//                    processes lock two different files of the same name.
//                    Content: who holds it ("snowid-holder 1" then key=value
//                    lines token, host, pid, started, address, then "end").
//   rR-hH.mark       "snowid-mark 1 high_water=MS released_at=MS\n" (Unix
//                    milliseconds, "-" when absent), replaced atomically
//                    (temporary file, fsync, rename, fsync of the directory).
//   rR-hH.fence      "snowid-fenced 1 TOKEN MS\n": the holder with that token
//                    was revoked at MS. The holder stops when it sees it.
//   rR-hH.mark-lock  flock(LOCK_EX) held for a moment by whoever tries the
//                    lock or changes the mark, the fence marker or the holder
//                    text (an acquirer, the holder, fence(), list()), so that
//                    no read-modify-write of the mark is lost and fence()
//                    never finds the lock taken by a holder that has not yet
//                    written its holder text (it would fence the previous one).
// And outside the directory, unless options.host_lock_prefix is empty, so
// that registries on different directories of one host, in any network
// namespace, never hand out the same id at once nor forget its mark (issues:
// two state directories both gave out worker 0/0 and issued the same ids,
// also from two network namespaces; a pinned id released through one
// directory was taken through another while the clock was behind, and ids
// were issued again):
//   @PREFIX/rR-hH    an abstract Unix socket (host_lock.h) bound by the holder
//                    for the lease's life. Per network namespace.
// and in the host directory HOST (options.host_dir, default
// /var/tmp/PREFIX), mode 01777, shared by every user (files mode 0666,
// whatever the umask; host_files.h):
//   rR-hH.lock       flock(LOCK_EX) held by the holder for the lease's life,
//                    never removed, and checked to still be the file at its
//                    path, as the directory's .lock. Empty.
//   rR-hH.mark       the mark, in the same record format as the directory's,
//                    max-merged: a holder of any directory raises it as it
//                    raises its own. Written durably (host_files.h).
//   rR-hH.mark-lock  flock(LOCK_EX) held for a moment by whoever reads or
//                    changes the host mark.
// An acquirer that finds the host lock file or the name taken passes the id
// by as held. It takes the later of the directory's and the host's high
// water and release time, for the quarantine and as the grant's previous
// high water, so a successor through another directory whose clock is
// behind waits or refuses. Renewals raise both marks; a release records its
// exact last instant in both (never below an earlier holder's mark: the
// host mark then holds nothing but this holder's own renewal caps above
// it), and a fence its release time.
//
// Lock order, strict: Held::mu, the .mark-lock, the .lock, the host .lock,
// the host name, the host .mark-lock; within a process, Held::mu before the
// registry's map mutex. The .lock, the host .lock and the host name are
// only ever tried, never waited for; the .mark-lock and the host .mark-lock
// are waited for (briefly), and no one holding the host .mark-lock waits for
// anything. So there is no cycle.
//
// Letting go closes the host name, then the host .lock, then the .lock: an
// acquirer on the same directory then never finds the .lock free and a host
// claim still taken, which it would report as a holder on another directory.
//
// Marks are stored in whole milliseconds rounded up: a mark may only be later
// than the instant it records, never earlier.
//
// The records' formats are in file_registry_records.h; the mark and the fence
// marker are written with write_file_durably() (durable_file.h).
#include "snowid/file_registry.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "durable_file.h"
#include "file_registry_records.h"
#include "host_files.h"
#include "host_lock.h"
#include "mutex.h"
#include "posix_file.h"
#include "snowid/lease_rules.h"

namespace snowid {

using internal::Mutex;
using internal::MutexLock;
namespace internal {
namespace {

constexpr Duration kMaxQuarantine = std::chrono::hours(1);
constexpr Duration kMaxPollEvery = std::chrono::seconds(1);
// How long to wait for another process's moment under an id's mark-lock.
// Longer means that process is stopped or stuck: give up, retryably.
constexpr Duration kMarkLockWait = std::chrono::seconds(2);
constexpr Duration kMarkLockRetry = std::chrono::milliseconds(1);
// The longest host_lock_prefix: the name, PREFIX/r4294967295-h4294967295,
// must fit an abstract socket address.
constexpr std::size_t kMaxHostLockPrefix = 64;
static_assert(kMaxHostLockPrefix + std::char_traits<char>::length("/r4294967295-h4294967295") <=
              kMaxHostNameBytes);

std::string id_name(WorkerId w) {
  return "r" + std::to_string(w.region) + "-h" + std::to_string(w.host);
}
std::string id_text(WorkerId w) { return "worker " + to_string(w); }

std::string time_text(WallTime t) { return format_iso8601(t); }

// The mode of the mark and the fence marker. Both are written only under the
// id's mark-lock, so write_file_durably()'s one temporary name per file is
// enough (and a crash leaves at most one).
constexpr mode_t kRecordMode = 0600;

// When the id is free for reuse (quarantine_end()).
std::optional<WallTime> rests_until(const Mark& m, Duration quarantine) {
  return quarantine_end(m.released_at, m.high_water, quarantine);
}

// A token no other lease of any process will have: 64 random bits, the
// process id and the acquisition time.
std::string make_token(WallTime now) {
  std::uint64_t random = 0;
  if (::getentropy(&random, sizeof random) != 0) {
    // Still unique together with the pid and the time.
    random = static_cast<std::uint64_t>(now.time_since_epoch().count()) * 0x9E3779B97F4A7C15u;
  }
  char hex[17];
  static constexpr char kDigits[] = "0123456789abcdef";
  for (int i = 0; i < 16; ++i) hex[i] = kDigits[(random >> (60 - 4 * i)) & 0xf];
  hex[16] = '\0';
  return std::string(hex) + "-" + std::to_string(::getpid()) + "-" +
         std::to_string(now.time_since_epoch().count());
}

// The host mark at `path`, read as host_files.h reads: nullopt if there is
// none, kDataLoss if it is not a whole record, kUnavailable if it is not a
// regular file or cannot be read.
Result<std::optional<Mark>> read_host_mark(const std::string& path) {
  return parse_mark_file(read_host_file(path), path);
}

// ---- Locks ----

enum class Probe { kFree, kHeld, kNoFile };

// Whether someone holds the lock at `path`. Takes a shared lock for a moment
// (a held exclusive lock refuses it); flock has no way to only look. Callers
// hold the id's mark-lock, under which acquirers try the lock, so a probe
// never makes an acquirer find the id busy.
Result<Probe> probe_lock(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    if (errno == ENOENT) return Probe::kNoFile;
    return io_error(Code::kUnavailable, "cannot open", path, errno);
  }
  for (;;) {
    if (::flock(fd.get(), LOCK_SH | LOCK_NB) == 0) return Probe::kFree;  // unlocked by close
    if (errno == EWOULDBLOCK) return Probe::kHeld;
    if (errno != EINTR) return io_error(Code::kUnavailable, "cannot lock", path, errno);
  }
}

// The host files are empty when the host-wide guard is off.
struct Paths {
  std::string lock, mark, fence, mark_lock;
  std::string host_lock, host_mark, host_mark_lock;
};

// Takes the flock on `fd` (the file `path`), waiting a little for whoever
// has it.
Status wait_flock(const Clock& clock, int fd, const std::string& path) {
  const MonoTime deadline = clock.mono_now() + kMarkLockWait;
  for (;;) {
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return Status::ok();
    if (errno != EWOULDBLOCK && errno != EINTR) {
      return io_error(Code::kUnavailable, "cannot lock", path, errno);
    }
    if (clock.mono_now() >= deadline) {
      return Status(Code::kUnavailable,
                    path + " stays locked by another process (stopped or stuck?); try again later");
    }
    clock.pause(kMarkLockRetry);
  }
}

}  // namespace

class FileRegistry final : public WorkerRegistry {
 public:
  FileRegistry(const Clock& clock, FileRegistryOptions options)
      : clock_(clock), options_(std::move(options)), workers_dir_(options_.dir + "/workers") {}
  // Lets go of every lease still held, recording nothing, as abandon().
  ~FileRegistry() override;

  Result<LeaseGrant> acquire(const LeaseRequest& request) override;
  using WorkerRegistry::renew;
  // `time_left` is not needed: every wait here is already brief (the
  // mark-locks' at most 2 s).
  Status renew(const LeaseGrant& grant, WallTime high_water, Duration time_left) override;
  Status release(const LeaseGrant& grant, WallTime high_water) override;
  void abandon(const LeaseGrant& grant) noexcept override;
  Result<bool> wait_lost(const LeaseGrant& grant, Duration timeout) override;
  void wake_waiters() noexcept override { wakes_.fetch_add(1, std::memory_order_acq_rel); }
  Result<std::vector<WorkerRecord>> list(std::optional<std::uint32_t> region) override;
  Status fence(WorkerId worker) override;

 private:
  // A lease this registry holds.
  struct Held {
    WorkerId worker;
    std::string token;
    std::optional<WallTime> previous_high_water;
    Mutex mu;
    Fd lock GUARDED_BY(mu);       // the flocked lock file; closed once let go
    Fd host_file GUARDED_BY(mu);  // the flocked host lock file, if any
    Fd host_lock GUARDED_BY(mu);  // the socket bound to the host lock name
  };

  // kBusyElsewhere: the .lock was free but the host lock file or name was
  // taken, by a holder through another directory (status says which).
  enum class Outcome { kTaken, kBusy, kBusyElsewhere, kResting, kCorrupt, kFailed };
  struct Attempt {
    Outcome outcome = Outcome::kFailed;
    Status status;  // why, for kCorrupt and kFailed
    LeaseGrant grant;
    std::optional<WallTime> rests_until;  // for kResting
  };

  Paths paths(WorkerId w) const {
    const std::string base = workers_dir_ + "/" + id_name(w);
    Paths p{base + ".lock", base + ".mark", base + ".fence", base + ".mark-lock", {}, {}, {}};
    if (host_files_on()) {
      const std::string host = options_.host_dir + "/" + id_name(w);
      p.host_lock = host + ".lock";
      p.host_mark = host + ".mark";
      p.host_mark_lock = host + ".mark-lock";
    }
    return p;
  }
  bool host_files_on() const { return !options_.host_lock_prefix.empty(); }
  // `why` the host files cannot be used, with what to do about it.
  Status host_unusable(const Status& why) const;
  // Takes the id's host mark-lock, waiting a little for whoever has it.
  Result<Fd> lock_host_mark(const Paths& p) const;
  // Raises the host mark to at least `raise` (under the host mark-lock),
  // unless `exact` is set: then its high water becomes exactly
  // `raise.high_water` (a release), its release time still only grows.
  // Requires the id's .mark-lock. kDataLoss if the host mark is unreadable.
  Status update_host_mark(const Paths& p, const Mark& raise, bool exact) const;

  Status check_worker(WorkerId w) const;
  // Takes the id's mark-lock, waiting a little for whoever has it.
  Result<Fd> lock_mark(const Paths& p) const;
  // Takes `w` if no one holds it and it does not rest.
  Attempt try_take(WorkerId w, const LeaseRequest& request);
  std::shared_ptr<Held> find(const std::string& token);
  // "PREFIX/rR-hH"; only with a non-empty host_lock_prefix.
  std::string host_lock_name(WorkerId w) const {
    return options_.host_lock_prefix + "/" + id_name(w);
  }
  // Closes the host lock and the lock file and forgets the lease, writing
  // nothing.
  void drop_locked(Held& held) REQUIRES(held.mu);
  // Lets go of a lost lease: removes the fence marker naming it (when the
  // mark-lock can be had), closes the lock file and forgets the lease.
  // `mark_lock` is the mark-lock if the caller has it.
  void let_go_locked(Held& held, const Fd* mark_lock) REQUIRES(held.mu);
  // kLeaseLost (letting go) if the lease is no longer ours; OK otherwise.
  // Requires the mark-lock.
  Status check_still_ours_locked(Held& held, const Paths& p, const Fd& mark_lock) REQUIRES(held.mu);

  // A lease of this registry, locked for a change of its records: its
  // caller holds held.mu.
  struct Owned {
    Paths paths;
    Fd mark_lock;
  };
  // With held.mu taken by the caller (`held` is find(grant.token)): the
  // mark-lock, taken once check_still_ours_locked() has passed. kLeaseLost if
  // the lease is not (or no longer) held; the mark-lock's error if that
  // cannot be had, and the lease is then still held: the caller may retry.
  Result<Owned> own_locked(Held& held, const LeaseGrant& grant) REQUIRES(held.mu);
  static Status no_longer_held(const LeaseGrant& grant);

  const Clock& clock_;
  const FileRegistryOptions options_;
  const std::string workers_dir_;
  Mutex mu_;
  std::map<std::string, std::shared_ptr<Held>> held_ GUARDED_BY(mu_);  // by token
  std::atomic<std::uint64_t> wakes_{0};                                // wake_waiters() calls
};

Status FileRegistry::check_worker(WorkerId w) const {
  if (w.region >= options_.layout.regions()) {
    return Status(Code::kInvalidArgument, "region " + std::to_string(w.region) +
                                              " does not fit layout " + options_.layout.name() +
                                              " (regions 0 to " +
                                              std::to_string(options_.layout.regions() - 1) + ")");
  }
  if (w.host >= options_.layout.workers_per_region()) {
    return Status(Code::kInvalidArgument,
                  "host " + std::to_string(w.host) + " does not fit layout " +
                      options_.layout.name() + " (hosts 0 to " +
                      std::to_string(options_.layout.workers_per_region() - 1) + ")");
  }
  return Status::ok();
}

Result<Fd> FileRegistry::lock_mark(const Paths& p) const {
  Fd fd(::open(p.mark_lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  if (fd.get() < 0) return io_error(Code::kUnavailable, "cannot open", p.mark_lock, errno);
  if (Status s = wait_flock(clock_, fd.get(), p.mark_lock); !s.is_ok()) return s;
  return fd;
}

Status FileRegistry::host_unusable(const Status& why) const {
  return Status(Code::kUnavailable,
                why.message() + "; the host directory " + options_.host_dir +
                    " keeps worker ids apart across state directories and network namespaces, "
                    "so no id is taken without it: fix it, choose another "
                    "(FileRegistryOptions::host_dir), or turn the host-wide guard off with an "
                    "empty host_lock_prefix (SNOWID_HOST_LOCK=off)");
}

Result<Fd> FileRegistry::lock_host_mark(const Paths& p) const {
  Result<Fd> fd = open_host_lock_file(p.host_mark_lock);
  if (!fd.is_ok()) return host_unusable(fd.status());
  if (Status s = wait_flock(clock_, fd.value().get(), p.host_mark_lock); !s.is_ok()) return s;
  return fd;
}

Status FileRegistry::update_host_mark(const Paths& p, const Mark& raise, bool exact) const {
  Result<Fd> host_mark_lock = lock_host_mark(p);
  if (!host_mark_lock.is_ok()) return host_mark_lock.status();
  Result<std::optional<Mark>> mark = read_host_mark(p.host_mark);
  if (!mark.is_ok()) {
    return mark.status().code() == Code::kDataLoss ? mark.status() : host_unusable(mark.status());
  }
  Mark next = mark.value().value_or(Mark{});
  next.high_water = exact ? raise.high_water : later(next.high_water, raise.high_water);
  next.released_at = later(next.released_at, raise.released_at);
  if (mark.value() && format_mark(next) == format_mark(*mark.value())) return Status::ok();
  if (Status s = write_host_mark(p.host_mark, format_mark(next)); !s.is_ok()) {
    return host_unusable(s);
  }
  return Status::ok();
}

std::shared_ptr<FileRegistry::Held> FileRegistry::find(const std::string& token) {
  MutexLock lock(mu_);
  auto it = held_.find(token);
  return it == held_.end() ? nullptr : it->second;
}

FileRegistry::~FileRegistry() {
  std::vector<std::shared_ptr<Held>> all;
  {
    MutexLock lock(mu_);
    for (const auto& [token, held] : held_) all.push_back(held);
  }
  for (const std::shared_ptr<Held>& held : all) {
    MutexLock lock(held->mu);
    drop_locked(*held);
  }
}

void FileRegistry::drop_locked(Held& held) {
  if (held.lock.get() < 0) return;
  held.host_lock.reset();  // first: see "Letting go" above
  held.host_file.reset();
  held.lock.reset();  // frees the id
  MutexLock lock(mu_);
  held_.erase(held.token);
}

void FileRegistry::let_go_locked(Held& held, const Fd* mark_lock) {
  if (held.lock.get() < 0) return;
  const Paths p = paths(held.worker);
  Result<Fd> own_lock = Status(Code::kUnavailable, "");
  if (mark_lock == nullptr) {
    own_lock = lock_mark(p);
    if (own_lock.is_ok()) mark_lock = &own_lock.value();
  }
  // A marker left behind names a token no one has any more; the next
  // acquirer removes it. So giving up on it is harmless.
  if (mark_lock != nullptr) {
    Result<std::optional<FenceMarker>> marker = read_marker(p.fence);
    if (marker.is_ok() && marker.value() && marker.value()->token == held.token) {
      ::unlink(p.fence.c_str());
    }
  }
  drop_locked(held);
}

Status FileRegistry::check_still_ours_locked(Held& held, const Paths& p, const Fd& mark_lock) {
  if (!same_file(held.lock.get(), p.lock)) {
    let_go_locked(held, &mark_lock);
    return Status(Code::kLeaseLost,
                  "lock file " + p.lock + " was removed or replaced; the lease is void");
  }
  if (held.host_file.get() >= 0 && !same_file(held.host_file.get(), p.host_lock)) {
    let_go_locked(held, &mark_lock);
    return Status(Code::kLeaseLost,
                  "host lock file " + p.host_lock + " was removed or replaced; the lease is void");
  }
  Result<std::optional<FenceMarker>> marker = read_marker(p.fence);
  if (!marker.is_ok()) return marker.status();
  if (marker.value()) {
    const FenceMarker& m = *marker.value();
    if (m.token.empty()) {
      // Cannot tell whom it fences: stopping is the safe reading.
      let_go_locked(held, &mark_lock);
      return Status(Code::kLeaseLost, "fence marker " + p.fence + " is unreadable; stopping");
    }
    if (m.token == held.token) {
      let_go_locked(held, &mark_lock);
      return Status(Code::kLeaseLost,
                    id_text(held.worker) + " was fenced at " + time_text(m.fenced_at));
    }
  }
  return Status::ok();
}

FileRegistry::Attempt FileRegistry::try_take(WorkerId w, const LeaseRequest& request) {
  const Paths p = paths(w);
  Attempt a;
  // The mark-lock first: fence() and list() then never find the lock taken
  // while its holder text still names the previous holder.
  Result<Fd> mark_lock = lock_mark(p);
  if (!mark_lock.is_ok()) {
    a.status = mark_lock.status();
    return a;
  }
  Fd lock(::open(p.lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  if (lock.get() < 0) {
    a.status = io_error(Code::kUnavailable, "cannot open", p.lock, errno);
    return a;
  }
  for (;;) {
    if (::flock(lock.get(), LOCK_EX | LOCK_NB) == 0) break;
    if (errno == EINTR) continue;
    if (errno != EWOULDBLOCK) {
      a.status = io_error(Code::kUnavailable, "cannot lock", p.lock, errno);
      return a;
    }
    a.outcome = Outcome::kBusy;
    return a;
  }
  // Locked the file that was at the path when we opened it; if it has been
  // replaced since, our lock excludes no one.
  if (!same_file(lock.get(), p.lock)) {
    a.outcome = Outcome::kBusy;
    return a;
  }
  // No one holds the id through this directory; through another one?
  Fd host_file;
  Fd host_lock;
  Mark host_mark;
  Fd host_mark_lock;
  if (host_files_on()) {
    Result<Fd> file = open_host_lock_file(p.host_lock);
    if (!file.is_ok()) {
      a.status = host_unusable(file.status());
      return a;
    }
    host_file = std::move(file).value();
    for (;;) {
      if (::flock(host_file.get(), LOCK_EX | LOCK_NB) == 0) break;
      if (errno == EINTR) continue;
      if (errno != EWOULDBLOCK) {
        a.status = host_unusable(io_error(Code::kUnavailable, "cannot lock", p.host_lock, errno));
        return a;
      }
      a.outcome = Outcome::kBusyElsewhere;
      a.status =
          Status(Code::kResourceExhausted, "its host lock file " + p.host_lock + " is locked");
      return a;
    }
    if (!same_file(host_file.get(), p.host_lock)) {
      a.outcome = Outcome::kBusyElsewhere;
      a.status = Status(Code::kResourceExhausted,
                        "its host lock file " + p.host_lock + " was just replaced");
      return a;
    }
    Result<std::optional<Fd>> claim = claim_host_name(host_lock_name(w));
    if (!claim.is_ok()) {
      a.status = claim.status();
      return a;
    }
    if (!claim.value()) {
      a.outcome = Outcome::kBusyElsewhere;
      a.status =
          Status(Code::kResourceExhausted, "its host lock @" + host_lock_name(w) + " is taken");
      return a;
    }
    host_lock = std::move(*claim.value());
    Result<Fd> locked = lock_host_mark(p);
    if (!locked.is_ok()) {
      a.status = locked.status();
      return a;
    }
    host_mark_lock = std::move(locked).value();
    Result<std::optional<Mark>> read = read_host_mark(p.host_mark);
    if (!read.is_ok()) {
      const bool lost = read.status().code() == Code::kDataLoss;
      a.outcome = lost ? Outcome::kCorrupt : Outcome::kFailed;
      a.status = lost ? read.status() : host_unusable(read.status());
      return a;
    }
    host_mark = read.value().value_or(Mark{});
  }
  // The mark may have changed since the caller looked at it.
  Result<std::optional<Mark>> mark = read_mark(p.mark);
  if (!mark.is_ok()) {
    a.outcome = mark.status().code() == Code::kDataLoss ? Outcome::kCorrupt : Outcome::kFailed;
    a.status = mark.status();
    return a;
  }
  // What this directory and the host know of the id's earlier holders.
  Mark previous = mark.value().value_or(Mark{});
  previous.high_water = later(previous.high_water, host_mark.high_water);
  previous.released_at = later(previous.released_at, host_mark.released_at);
  const WallTime now = clock_.wall_now();
  if (const std::optional<WallTime> until = rests_until(previous, options_.quarantine);
      until && now < *until) {
    a.outcome = Outcome::kResting;
    a.rests_until = until;
    return a;
  }
  const std::string token = make_token(now);
  const std::string text = format_holder(token, request.holder);
  if (::ftruncate(lock.get(), 0) != 0 ||
      ::pwrite(lock.get(), text.data(), text.size(), 0) != static_cast<ssize_t>(text.size())) {
    a.status = io_error(Code::kUnavailable, "cannot write", p.lock, errno);
    return a;
  }
  // A marker here fences a holder that is gone (we hold its lock).
  if (::unlink(p.fence.c_str()) != 0 && errno != ENOENT) {
    a.status = io_error(Code::kUnavailable, "cannot remove", p.fence, errno);
    return a;
  }
  Mark next = previous;
  next.high_water = later(previous.high_water, request.high_water);
  if (Status s = write_file_durably(p.mark, format_mark(next), kRecordMode); !s.is_ok()) {
    a.status = s;
    return a;
  }
  if (host_files_on() && format_mark(next) != format_mark(host_mark)) {
    if (Status s = write_host_mark(p.host_mark, format_mark(next)); !s.is_ok()) {
      a.status = host_unusable(s);
      return a;
    }
  }
  host_mark_lock.reset();
  auto held = std::make_shared<Held>();
  held->worker = w;
  held->token = token;
  held->previous_high_water = previous.high_water;
  {
    // Not shared yet; the lock is for the analysis.
    MutexLock fill(held->mu);
    held->lock = std::move(lock);
    held->host_file = std::move(host_file);
    held->host_lock = std::move(host_lock);
  }
  {
    MutexLock guard(mu_);
    held_[token] = held;
  }
  a.outcome = Outcome::kTaken;
  a.grant = LeaseGrant{w, token, previous.high_water};
  return a;
}

Result<LeaseGrant> FileRegistry::acquire(const LeaseRequest& request) {
  if (Status s = check_worker({request.region, request.host.value_or(0)}); !s.is_ok()) return s;
  if (Status s = make_dir(workers_dir_); !s.is_ok()) return s;
  if (host_files_on()) {
    if (Status s = prepare_host_dir(options_.host_dir); !s.is_ok()) return host_unusable(s);
  }

  if (request.host) {
    const WorkerId w{request.region, *request.host};
    Attempt a = try_take(w, request);
    switch (a.outcome) {
      case Outcome::kTaken:
        return a.grant;
      case Outcome::kBusy: {
        Result<std::optional<std::string>> text = read_small_file(paths(w).lock);
        std::optional<HolderText> holder;
        if (text.is_ok() && text.value()) holder = parse_holder(*text.value());
        return Status(Code::kResourceExhausted, id_text(w) + " is held by " + holder_text(holder));
      }
      case Outcome::kBusyElsewhere:
        return Status(Code::kResourceExhausted,
                      id_text(w) + " is held through another registry directory on this host (" +
                          a.status.message() + ")");
      case Outcome::kResting: {
        // Without quarantine, resting means the clock is behind the id's
        // mark: say so, as that is what an operator must look at.
        const WallTime now = clock_.wall_now();
        const auto behind =
            std::chrono::duration_cast<std::chrono::milliseconds>(*a.rests_until - now).count();
        return Status(Code::kResourceExhausted,
                      id_text(w) + " rests until " + time_text(*a.rests_until) +
                          " (quarantine after its last release or high-water mark); the clock "
                          "reads " +
                          time_text(now) + ", " + std::to_string(behind) +
                          " ms before that: if it was stepped back, fix it, else wait");
      }
      case Outcome::kCorrupt:
      case Outcome::kFailed:
        return a.status;
    }
  }

  // Candidates: never-used ids first, lowest first, then the one that has
  // rested longest; held ones are found out by trying their lock.
  struct Candidate {
    std::optional<WallTime> since;  // nullopt: never used
    std::uint32_t host = 0;
  };
  std::vector<Candidate> candidates;
  Status corrupt;
  Status failed;
  std::optional<WallTime> next_free;
  std::uint32_t elsewhere = 0;  // held through other directories
  const WallTime now = clock_.wall_now();
  const auto hosts = static_cast<std::uint32_t>(options_.layout.workers_per_region());
  for (std::uint32_t h = 0; h < hosts; ++h) {
    const WorkerId w{request.region, h};
    Result<std::optional<Mark>> mark = read_mark(paths(w).mark);
    if (!mark.is_ok()) {
      if (mark.status().code() != Code::kDataLoss) return mark.status();
      corrupt = mark.status();
      continue;
    }
    if (!mark.value()) {
      candidates.push_back({std::nullopt, h});
      continue;
    }
    const std::optional<WallTime> until = rests_until(*mark.value(), options_.quarantine);
    if (until && now < *until) {
      next_free = next_free ? std::min(*next_free, *until) : *until;
      continue;
    }
    candidates.push_back({later(mark.value()->high_water, mark.value()->released_at), h});
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate& a, const Candidate& b) {
                     if (!a.since || !b.since) return !a.since && b.since;
                     return *a.since < *b.since;
                   });
  for (const Candidate& c : candidates) {
    Attempt a = try_take({request.region, c.host}, request);
    switch (a.outcome) {
      case Outcome::kTaken:
        return a.grant;
      case Outcome::kBusy:
        break;
      case Outcome::kBusyElsewhere:
        ++elsewhere;
        break;
      case Outcome::kResting:
        next_free = next_free ? std::min(*next_free, *a.rests_until) : *a.rests_until;
        break;
      case Outcome::kCorrupt:
        corrupt = a.status;
        break;
      case Outcome::kFailed:
        // For example a process stopped while it had this id's mark-lock:
        // another id may still be free.
        failed = a.status;
        break;
    }
  }
  if (!corrupt.is_ok()) {
    return Status(Code::kDataLoss, "no free worker id in region " + std::to_string(request.region) +
                                       ", and " + corrupt.message());
  }
  std::string msg = "no free worker id in region " + std::to_string(request.region) + ": all " +
                    std::to_string(hosts) + " are held or resting";
  if (elsewhere > 0) {
    msg += " (" + std::to_string(elsewhere) + " held through other registry directories " +
           "on this host)";
  }
  if (next_free) msg += " (the first rests until " + time_text(*next_free) + ")";
  if (!failed.is_ok()) return Status(failed.code(), msg + "; and " + failed.message());
  return Status(Code::kResourceExhausted, msg);
}

Status FileRegistry::no_longer_held(const LeaseGrant& grant) {
  return Status(Code::kLeaseLost, id_text(grant.worker) + ": this lease is no longer held");
}

Result<FileRegistry::Owned> FileRegistry::own_locked(Held& held, const LeaseGrant& grant) {
  if (held.lock.get() < 0) return no_longer_held(grant);
  Owned o;
  o.paths = paths(held.worker);
  Result<Fd> mark_lock = lock_mark(o.paths);
  if (!mark_lock.is_ok()) return mark_lock.status();
  o.mark_lock = std::move(mark_lock).value();
  if (Status s = check_still_ours_locked(held, o.paths, o.mark_lock); !s.is_ok()) return s;
  return o;
}

Status FileRegistry::renew(const LeaseGrant& grant, WallTime high_water, Duration) {
  const std::shared_ptr<Held> found = find(grant.token);
  if (found == nullptr) return no_longer_held(grant);
  Held& held = *found;
  MutexLock lock(held.mu);
  Result<Owned> owned = own_locked(held, grant);
  if (!owned.is_ok()) return owned.status();
  const Paths& p = owned.value().paths;
  Result<std::optional<Mark>> mark = read_mark(p.mark);
  if (!mark.is_ok()) return mark.status();
  Mark next = mark.value().value_or(Mark{});
  // The previous holders' mark too, in case the file was removed under us.
  next.high_water = later(later(next.high_water, held.previous_high_water), high_water);
  if (Status s = write_file_durably(p.mark, format_mark(next), kRecordMode); !s.is_ok()) return s;
  if (!host_files_on()) return Status::ok();
  Mark raise;
  raise.high_water = next.high_water;
  return update_host_mark(p, raise, false);
}

Status FileRegistry::release(const LeaseGrant& grant, WallTime high_water) {
  const std::shared_ptr<Held> found = find(grant.token);
  if (found == nullptr) return no_longer_held(grant);  // already let go
  Held& held = *found;
  MutexLock lock(held.mu);
  Result<Owned> owned = own_locked(held, grant);
  if (!owned.is_ok()) {
    if (owned.status().code() == Code::kLeaseLost) return owned.status();  // already let go
    lock.unlock();                                                         // abandon() takes it
    // The mark-lock or the fence marker could not be had. Let go all the
    // same: the mark on disk holds the last renewal's cap, later than
    // anything issued, and a lease kept would hold the id until the process
    // exits.
    abandon(grant);
    return Status(owned.status().code(), owned.status().message() +
                                             " (the id was freed with its last renewed " +
                                             "high-water mark)");
  }
  const Paths& p = owned.value().paths;
  Result<std::optional<Mark>> mark = read_mark(p.mark);
  Status result;
  if (!mark.is_ok()) {
    // Never overwrite a mark that cannot be read: it is the evidence.
    result = mark.status();
  } else {
    // The holder has stopped, and `high_water` is the exact last instant it
    // issued in: its renewals' caps (later) no longer matter.
    Mark next;
    next.high_water = later(held.previous_high_water, high_water);
    next.released_at =
        later(mark.value() ? mark.value()->released_at : std::nullopt, clock_.wall_now());
    result = write_file_durably(p.mark, format_mark(next), kRecordMode);
    // previous_high_water has the host mark as it was when the id was taken;
    // since then only this holder raised it.
    if (result.is_ok() && host_files_on()) result = update_host_mark(p, next, true);
    if (!result.is_ok()) {
      // The mark on disk holds the last renewal's cap, which is later than
      // anything issued: freeing the id is still safe.
      result = Status(result.code(), result.message() + " (the id was freed with its last " +
                                         "renewed high-water mark)");
    }
  }
  let_go_locked(held, &owned.value().mark_lock);
  return result;
}

void FileRegistry::abandon(const LeaseGrant& grant) noexcept {
  std::shared_ptr<Held> held = find(grant.token);
  if (held == nullptr) return;  // released, lost and let go, or never ours
  // Waits while a renew() or release() of this lease is under way (at most
  // the mark-lock wait); nothing else holds held->mu for long.
  MutexLock lock(held->mu);
  // No fence marker is removed: one left behind names a token no one has any
  // more, and the next acquirer removes it.
  drop_locked(*held);
}

Result<bool> FileRegistry::wait_lost(const LeaseGrant& grant, Duration timeout) {
  std::shared_ptr<Held> held = find(grant.token);
  if (held == nullptr) return true;
  const Paths p = paths(held->worker);
  const MonoTime deadline = clock_.mono_now() + timeout;
  const std::uint64_t wakes = wakes_.load(std::memory_order_acquire);
  for (;;) {
    {
      MutexLock lock(held->mu);
      if (held->lock.get() < 0) return true;
      bool lost = !same_file(held->lock.get(), p.lock) ||
                  (held->host_file.get() >= 0 && !same_file(held->host_file.get(), p.host_lock));
      if (!lost) {
        // Read without the mark-lock: the marker is replaced atomically.
        Result<std::optional<FenceMarker>> marker = read_marker(p.fence);
        lost = marker.is_ok() && marker.value() &&
               (marker.value()->token.empty() || marker.value()->token == held->token);
      }
      if (lost) {
        let_go_locked(*held, nullptr);
        return true;
      }
    }
    const MonoTime now = clock_.mono_now();
    if (now >= deadline || wakes_.load(std::memory_order_acquire) != wakes) return false;
    clock_.pause(std::min<Duration>(options_.poll_every, deadline - now));
  }
}

Result<std::vector<WorkerRecord>> FileRegistry::list(std::optional<std::uint32_t> region) {
  std::set<std::pair<std::uint32_t, std::uint32_t>> ids;
  DIR* dir = ::opendir(workers_dir_.c_str());
  if (dir == nullptr) {
    if (errno == ENOENT) return std::vector<WorkerRecord>();
    return io_error(Code::kUnavailable, "cannot read directory", workers_dir_, errno);
  }
  while (const dirent* e = ::readdir(dir)) {
    // rR-hH.lock, rR-hH.mark or rR-hH.fence; anything else is not a record.
    const std::string_view name = e->d_name;
    const std::size_t dash = name.find("-h");
    const std::size_t dot = name.find('.');
    if (name.empty() || name[0] != 'r' || dash == std::string_view::npos ||
        dot == std::string_view::npos || dot < dash) {
      continue;
    }
    const std::string_view ext = name.substr(dot + 1);
    if (ext != "lock" && ext != "mark" && ext != "fence") continue;
    const std::optional<std::int64_t> r = parse_int(name.substr(1, dash - 1));
    const std::optional<std::int64_t> h = parse_int(name.substr(dash + 2, dot - dash - 2));
    if (!r || !h || *r > UINT32_MAX || *h > UINT32_MAX) continue;
    if (region && static_cast<std::uint32_t>(*r) != *region) continue;
    ids.insert({static_cast<std::uint32_t>(*r), static_cast<std::uint32_t>(*h)});
  }
  ::closedir(dir);

  std::vector<WorkerRecord> records;
  for (const auto& [r, h] : ids) {
    const WorkerId w{r, h};
    const Paths p = paths(w);
    // Under the mark-lock, the holder text, marker and mark agree.
    Result<Fd> mark_lock = lock_mark(p);
    if (!mark_lock.is_ok()) return mark_lock.status();
    WorkerRecord rec;
    rec.worker = w;
    Result<Probe> probe = probe_lock(p.lock);
    if (!probe.is_ok()) return probe.status();
    if (probe.value() == Probe::kHeld) {
      Result<std::optional<std::string>> text = read_small_file(p.lock);
      if (!text.is_ok()) return text.status();
      std::optional<HolderText> holder;
      if (text.value()) holder = parse_holder(*text.value());
      Result<std::optional<FenceMarker>> marker = read_marker(p.fence);
      if (!marker.is_ok()) return marker.status();
      const bool fenced = holder && marker.value() && marker.value()->token == holder->token;
      // A fenced holder still has the lock until it notices, but the lease
      // is revoked: it is not the holder any more.
      if (!fenced) rec.holder = holder ? holder->info : HolderInfo{"(unreadable)", 0, {}, ""};
    }
    Result<std::optional<Mark>> mark = read_mark(p.mark);
    if (!mark.is_ok()) return mark.status();
    if (mark.value()) {
      rec.high_water = mark.value()->high_water;
      rec.released_at = mark.value()->released_at;
      if (!rec.holder) {
        const std::optional<WallTime> until = rests_until(*mark.value(), options_.quarantine);
        if (until && clock_.wall_now() < *until) rec.quarantined_until = until;
      }
    }
    records.push_back(std::move(rec));
  }
  return records;
}

Status FileRegistry::fence(WorkerId worker) {
  if (Status s = check_worker(worker); !s.is_ok()) return s;
  const Paths p = paths(worker);
  struct stat st {};
  if (::stat(workers_dir_.c_str(), &st) != 0) {
    return Status(Code::kNotFound, id_text(worker) + " is not held");
  }
  Result<Fd> mark_lock = lock_mark(p);
  if (!mark_lock.is_ok()) return mark_lock.status();
  Result<Probe> probe = probe_lock(p.lock);
  if (!probe.is_ok()) return probe.status();
  if (probe.value() != Probe::kHeld) {
    return Status(Code::kNotFound, id_text(worker) + " is not held");
  }
  Result<std::optional<std::string>> text = read_small_file(p.lock);
  if (!text.is_ok()) return text.status();
  const std::optional<HolderText> holder =
      text.value() ? parse_holder(*text.value()) : std::nullopt;
  if (!holder) {
    return Status(Code::kDataLoss,
                  "the holder record in " + p.lock + " is unreadable; cannot tell whom to fence");
  }
  Result<std::optional<FenceMarker>> marker = read_marker(p.fence);
  if (!marker.is_ok()) return marker.status();
  if (marker.value() && marker.value()->token == holder->token) {
    return Status(Code::kNotFound, id_text(worker) + " was already fenced at " +
                                       time_text(marker.value()->fenced_at) + "; " +
                                       holder_text(holder) + " has not let go of it yet");
  }
  const WallTime now = clock_.wall_now();
  if (Status s = write_file_durably(p.fence, format_marker({holder->token, now}), kRecordMode);
      !s.is_ok()) {
    return s;
  }
  // The holder is stopped now; the release time starts the quarantine.
  Result<std::optional<Mark>> mark = read_mark(p.mark);
  if (!mark.is_ok()) {
    return Status(mark.status().code(),
                  "fenced, but could not record the release time: " + mark.status().message());
  }
  Mark next = mark.value().value_or(Mark{});
  next.released_at = later(next.released_at, now);
  if (Status s = write_file_durably(p.mark, format_mark(next), kRecordMode); !s.is_ok()) {
    return Status(s.code(), "fenced, but could not record the release time: " + s.message());
  }
  if (host_files_on()) {
    Mark raise;
    raise.released_at = now;
    if (Status s = update_host_mark(p, raise, false); !s.is_ok()) {
      return Status(s.code(), "fenced, but could not record the release time in the host mark: " +
                                  s.message());
    }
  }
  return Status::ok();
}

}  // namespace internal

Result<std::unique_ptr<WorkerRegistry>> make_file_registry(const Clock& clock,
                                                           FileRegistryOptions options) {
  if (options.dir.empty()) {
    return Status(Code::kInvalidArgument, "the file registry needs a directory");
  }
  if (!options.layout.can_generate()) {
    return Status(Code::kInvalidArgument,
                  "layout " + options.layout.name() + " cannot generate ids");
  }
  if (options.quarantine < Duration::zero() || options.quarantine > internal::kMaxQuarantine) {
    return Status(Code::kInvalidArgument, "quarantine must be between 0 and 1 hour");
  }
  if (options.poll_every <= Duration::zero() || options.poll_every > internal::kMaxPollEvery) {
    return Status(Code::kInvalidArgument, "poll_every must be more than 0 and at most 1 s");
  }
  if (options.host_lock_prefix.size() > internal::kMaxHostLockPrefix ||
      options.host_lock_prefix.find('\0') != std::string::npos) {
    return Status(Code::kInvalidArgument, "host_lock_prefix must be at most " +
                                              std::to_string(internal::kMaxHostLockPrefix) +
                                              " bytes with no NUL");
  }
  if (options.host_lock_prefix.empty()) {
    options.host_dir.clear();
  } else if (options.host_dir.empty()) {
    if (options.host_lock_prefix.find('/') != std::string::npos ||
        options.host_lock_prefix == "." || options.host_lock_prefix == "..") {
      return Status(Code::kInvalidArgument,
                    "host_lock_prefix \"" + options.host_lock_prefix +
                        "\" cannot name a host directory under /var/tmp: set host_dir");
    }
    options.host_dir = "/var/tmp/" + options.host_lock_prefix;
  }
  while (options.host_dir.size() > 1 && options.host_dir.back() == '/') options.host_dir.pop_back();
  while (options.dir.size() > 1 && options.dir.back() == '/') options.dir.pop_back();
  if (Status s = internal::make_dirs(options.dir); !s.is_ok()) return s;
  if (Status s = internal::make_dir(options.dir + "/workers"); !s.is_ok()) return s;
  return std::unique_ptr<WorkerRegistry>(
      std::make_unique<internal::FileRegistry>(clock, std::move(options)));
}

}  // namespace snowid
