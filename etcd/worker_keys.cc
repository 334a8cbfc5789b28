#include "worker_keys.h"

namespace snowid::etcd {
namespace {

// A decimal number without leading zeros that fits 32 bits.
std::optional<std::uint32_t> parse_number(std::string_view s) {
  if (s.empty() || s.size() > 10 || (s.size() > 1 && s[0] == '0')) return std::nullopt;
  std::uint64_t v = 0;
  for (const char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  if (v > UINT32_MAX) return std::nullopt;
  return static_cast<std::uint32_t>(v);
}

}  // namespace

WorkerKeys::WorkerKeys(std::string_view prefix, std::string_view cluster)
    : base_(std::string(prefix) + "/" + std::string(cluster) + "/workers/"),
      store_(std::string(prefix) + "/" + std::string(cluster) + "/store") {}

std::string WorkerKeys::region(std::uint32_t region) const {
  return base_ + std::to_string(region) + "/";
}

std::string WorkerKeys::holder(WorkerId worker) const {
  return region(worker.region) + std::to_string(worker.host) + "/holder";
}

std::string WorkerKeys::mark(WorkerId worker) const {
  return region(worker.region) + std::to_string(worker.host) + "/mark";
}

std::optional<WorkerKeys::Parsed> WorkerKeys::parse(std::string_view key) const {
  if (!key.starts_with(base_)) return std::nullopt;
  key.remove_prefix(base_.size());
  const std::size_t a = key.find('/');
  if (a == std::string_view::npos) return std::nullopt;
  const std::size_t b = key.find('/', a + 1);
  if (b == std::string_view::npos) return std::nullopt;
  const std::optional<std::uint32_t> region = parse_number(key.substr(0, a));
  const std::optional<std::uint32_t> host = parse_number(key.substr(a + 1, b - a - 1));
  const std::string_view kind = key.substr(b + 1);
  if (!region || !host || (kind != "holder" && kind != "mark")) return std::nullopt;
  return Parsed{WorkerId{*region, *host}, kind == "holder"};
}

}  // namespace snowid::etcd
