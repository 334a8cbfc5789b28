// Where the skew monitor keeps its state in etcd (docs/protocol.md, "The skew
// monitor"), beside the worker keys of the same namespace:
//   <prefix>/<cluster>/skew/<region>/agents/<host>
//   <prefix>/<cluster>/skew/<region>/votes/<target>/<voter>
//   <prefix>/<cluster>/skew/<region>/fences/<target>
// with the region in decimal and hosts, targets and voters as host names
// (valid_host_name).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace snowid::etcd {

// A host name the skew keys can carry: 1 to 253 bytes, none of them '/'.
// (The holder value's `host` is not checked by the registry: a holder whose
// host is not such a name cannot be voted on or fenced by the monitor.)
bool valid_host_name(std::string_view name) noexcept;

class SkewKeys {
 public:
  // `prefix` without a trailing '/'; `cluster` without any '/' (the
  // registry's rules, docs/protocol.md section 2).
  SkewKeys(std::string_view prefix, std::string_view cluster, std::uint32_t region);

  // "<prefix>/<cluster>/skew/<region>/": every skew key of the region.
  const std::string& region() const noexcept { return region_; }

  // The agent keys' common prefix, and one agent's key.
  std::string agents() const { return region_ + "agents/"; }
  std::string agent(std::string_view host) const;

  // The prefix of every vote against `target` ("<...>/votes/<target>/"),
  // and one voter's vote against it (skew::vote_key).
  std::string votes(std::string_view target) const;
  std::string vote(std::string_view target, std::string_view voter) const;

  // The fence records' common prefix, and one target's.
  std::string fences() const { return region_ + "fences/"; }
  std::string fence(std::string_view target) const;

  // The name a key carries, or nullopt for any other key: one from another
  // region or namespace, with a trailing segment, or whose name is not a
  // valid host name. Callers skip such keys as foreign.
  std::optional<std::string> agent_of(std::string_view key) const;
  std::optional<std::string> voter_of(std::string_view target, std::string_view key) const;
  std::optional<std::string> fence_of(std::string_view key) const;

 private:
  std::string namespace_;  // "<prefix>/<cluster>"
  std::uint32_t region_number_;
  std::string region_;  // "<prefix>/<cluster>/skew/<region>/"
};

}  // namespace snowid::etcd
