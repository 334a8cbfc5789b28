#include "skew_keys.h"

#include "vote_record.h"

namespace snowid::etcd {
namespace {

// The name that follows `prefix` in `key` and ends it.
std::optional<std::string> name_after(std::string_view prefix, std::string_view key) {
  if (!key.starts_with(prefix)) return std::nullopt;
  key.remove_prefix(prefix.size());
  if (!valid_host_name(key)) return std::nullopt;
  return std::string(key);
}

}  // namespace

bool valid_host_name(std::string_view name) noexcept {
  return !name.empty() && name.size() <= 253 && name.find('/') == std::string_view::npos;
}

SkewKeys::SkewKeys(std::string_view prefix, std::string_view cluster, std::uint32_t region)
    : namespace_(std::string(prefix) + "/" + std::string(cluster)),
      region_number_(region),
      region_(namespace_ + "/skew/" + std::to_string(region) + "/") {}

std::string SkewKeys::agent(std::string_view host) const { return agents() + std::string(host); }

std::string SkewKeys::votes(std::string_view target) const {
  return region_ + "votes/" + std::string(target) + "/";
}

std::string SkewKeys::vote(std::string_view target, std::string_view voter) const {
  return skew::vote_key(namespace_, region_number_, target, voter);
}

std::string SkewKeys::fence(std::string_view target) const {
  return fences() + std::string(target);
}

std::optional<std::string> SkewKeys::agent_of(std::string_view key) const {
  return name_after(agents(), key);
}

std::optional<std::string> SkewKeys::voter_of(std::string_view target, std::string_view key) const {
  return name_after(votes(target), key);
}

std::optional<std::string> SkewKeys::fence_of(std::string_view key) const {
  return name_after(fences(), key);
}

}  // namespace snowid::etcd
