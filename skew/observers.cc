#include "observers.h"

#include <algorithm>

namespace snowid::skew {

std::uint64_t observer_rank(std::string_view target, std::string_view host) noexcept {
  constexpr std::uint64_t kOffsetBasis = 14695981039346656037ULL;
  constexpr std::uint64_t kPrime = 1099511628211ULL;
  std::uint64_t hash = kOffsetBasis;
  auto mix = [&](unsigned char byte) {
    hash ^= byte;
    hash *= kPrime;
  };
  for (char c : target) mix(static_cast<unsigned char>(c));
  mix(0);
  for (char c : host) mix(static_cast<unsigned char>(c));
  return hash;
}

std::vector<std::string> observers_of(std::string_view target, std::span<const std::string> hosts,
                                      std::size_t max_observers) {
  std::vector<std::string> others;
  for (const std::string& h : hosts) {
    if (h != target) others.push_back(h);
  }
  std::sort(others.begin(), others.end());
  others.erase(std::unique(others.begin(), others.end()), others.end());
  std::sort(others.begin(), others.end(), [&](const std::string& a, const std::string& b) {
    const std::uint64_t ra = observer_rank(target, a);
    const std::uint64_t rb = observer_rank(target, b);
    return ra != rb ? ra > rb : a < b;
  });
  if (others.size() > max_observers) others.resize(max_observers);
  return others;
}

}  // namespace snowid::skew
