// Who watches whom: each clock is judged by a few observers chosen by a
// stable hash, so the cost is O(n k) and every monitor computes the same set
// from the same list of hosts (docs/skew.md, "The vote rule").
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace snowid::skew {

// 64-bit FNV-1a of target, one zero byte, host. Part of the protocol: every
// monitor, in any version, must rank the same way.
std::uint64_t observer_rank(std::string_view target, std::string_view host) noexcept;

// The k = min(n - 1, max_observers) hosts of `hosts` other than `target`
// with the highest rank (ties: by name), highest first. Duplicates in
// `hosts` count once.
std::vector<std::string> observers_of(std::string_view target, std::span<const std::string> hosts,
                                      std::size_t max_observers);

}  // namespace snowid::skew
