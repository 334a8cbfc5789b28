#include "skew_settings.h"

#include <string>
#include <vector>

namespace snowid::skew {
namespace {

std::string ms(Duration d) {
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(d).count();
  std::string text = std::to_string(us / 1000);
  if (us % 1000 != 0) {
    std::string frac = std::to_string((us < 0 ? -us : us) % 1000);
    text += "." + std::string(3 - frac.size(), '0') + frac;
  }
  return text + " ms";
}

}  // namespace

Status validate(const SkewSettings& s, const LeaseTiming& lease) {
  std::vector<std::string> broken;
  if (s.alert <= Duration::zero()) broken.push_back("skew alert (" + ms(s.alert) + ") must be > 0");
  if (s.fence < 4 * s.alert) {
    broken.push_back("skew fence (" + ms(s.fence) + ") must be >= 4 x skew alert (" + ms(s.alert) +
                     ")");
  }
  if (s.suspect < s.alert || s.suspect > s.fence) {
    broken.push_back("skew suspect (" + ms(s.suspect) + ") must lie between skew alert (" +
                     ms(s.alert) + ") and skew fence (" + ms(s.fence) + ")");
  }
  if (s.fence > lease.max_clock_skew) {
    broken.push_back("skew fence (" + ms(s.fence) + ") must be <= the leases' max_clock_skew (" +
                     ms(lease.max_clock_skew) + ")");
  }
  if (s.rtt_cap <= Duration::zero() || s.rtt_cap > s.fence / 2) {
    broken.push_back("skew rtt_cap (" + ms(s.rtt_cap) + ") must be > 0 and <= skew fence / 2 (" +
                     ms(s.fence / 2) + ")");
  }
  if (s.fence_max_uncertainty <= Duration::zero() || s.fence_max_uncertainty > s.fence / 2) {
    broken.push_back("skew fence_max_uncertainty (" + ms(s.fence_max_uncertainty) +
                     ") must be > 0 and <= skew fence / 2 (" + ms(s.fence / 2) + ")");
  }
  if (s.alert_max_uncertainty <= Duration::zero() || s.alert_max_uncertainty > s.alert) {
    broken.push_back("skew alert_max_uncertainty (" + ms(s.alert_max_uncertainty) +
                     ") must be > 0 and <= skew alert (" + ms(s.alert) + ")");
  }
  if (!(s.max_drift_ppm >= 0.0 && s.max_drift_ppm <= 1000.0)) {
    broken.push_back("skew max_drift_ppm must be between 0 and 1000");
  }
  if (s.vote_max_age <= Duration::zero() || s.vote_max_age > lease.ttl) {
    broken.push_back("skew vote_max_age must be > 0 and <= the lease ttl");
  }
  if (s.max_observers < 1 || s.max_observers > 64) {
    broken.push_back("skew max_observers must be between 1 and 64");
  }
  if (s.fence_window <= Duration::zero()) broken.push_back("skew fence_window must be > 0");
  if (broken.empty()) return Status::ok();
  std::string message = broken.front();
  for (std::size_t i = 1; i < broken.size(); ++i) message += "; " + broken[i];
  return Status(Code::kInvalidArgument, message);
}

}  // namespace snowid::skew
