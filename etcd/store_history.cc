#include "store_history.h"

#include <utility>

namespace snowid::etcd {

std::optional<std::string> StoreHistory::observe(const Header& header) {
  internal::MutexLock lock(mu_);
  std::optional<std::string> why;
  if (header.cluster_id != 0 && cluster_id_ != 0 && header.cluster_id != cluster_id_) {
    why = "etcd answered as another cluster (id " + std::to_string(header.cluster_id) + ", was " +
          std::to_string(cluster_id_) + ")";
    revision_ = 0;
  } else if (header.revision != 0 && header.revision < revision_) {
    why = "etcd's revision went back from " + std::to_string(revision_) + " to " +
          std::to_string(header.revision);
    revision_ = 0;
  }
  if (header.cluster_id != 0) cluster_id_ = header.cluster_id;
  if (header.revision > revision_) revision_ = header.revision;
  return why;
}

std::string StoreHistory::incarnation() const {
  internal::MutexLock lock(mu_);
  return incarnation_;
}

void StoreHistory::adopt(const std::string& incarnation) {
  internal::MutexLock lock(mu_);
  incarnation_ = incarnation;
}

void StoreHistory::stored_mark(const std::string& token, WallTime high_water) {
  internal::MutexLock lock(mu_);
  WallTime& m = marks_[token];
  if (high_water > m) m = high_water;
}

std::optional<std::string> StoreHistory::check_mark(const std::string& token,
                                                    std::optional<WallTime> read) const {
  internal::MutexLock lock(mu_);
  const auto it = marks_.find(token);
  if (it == marks_.end()) return std::nullopt;
  if (!read) return std::string("a mark this process stored has vanished");
  // Marks are stored rounded up to the millisecond.
  if (*read + std::chrono::milliseconds(1) <= it->second) {
    return "a mark this process stored went back from " + format_iso8601(it->second) + " to " +
           format_iso8601(*read);
  }
  return std::nullopt;
}

void StoreHistory::forget(const std::string& token) {
  internal::MutexLock lock(mu_);
  marks_.erase(token);
}

void StoreHistory::set_pending(std::string reason) {
  internal::MutexLock lock(mu_);
  if (!pending_) pending_ = std::move(reason);
}

bool StoreHistory::has_pending() const {
  internal::MutexLock lock(mu_);
  return pending_.has_value();
}

std::optional<std::string> StoreHistory::take_pending() {
  internal::MutexLock lock(mu_);
  return std::exchange(pending_, std::nullopt);
}

}  // namespace snowid::etcd
