#include "explanation.h"

#include <cstdio>

namespace snowid::skew {
namespace {

std::string ms(Duration d, bool sign) {
  char buf[48];
  const double v = static_cast<double>(d.count()) / 1e6;
  std::snprintf(buf, sizeof buf, sign ? "%+.3f" : "%.3f", v);
  return buf;
}

std::string reading(const Reading& r) {
  return ms(r.value, true) + "+-" + ms(r.uncertainty, false) + "ms";
}

}  // namespace

std::vector<VoterEntry> voters_of(const QuorumResult& quorum) {
  std::vector<VoterEntry> out;
  for (const CastVote& v : quorum.counted) {
    out.push_back(
        {v.voter, v.record.offset, v.record.delay, v.record.deviation, v.record.reference});
  }
  return out;
}

std::string to_log_line(const Explanation& e) {
  std::string line =
      "skew decision=" + e.decision + " target=" + e.target + " reason=\"" + e.reason + "\"";
  if (e.offset) line += " offset=" + reading(*e.offset);
  if (e.deviation) line += " deviation=" + reading(*e.deviation);
  if (e.delay) line += " delay=" + ms(*e.delay, false) + "ms";
  line += " reference=" + (e.reference ? reading(*e.reference) : std::string("none"));
  if (!e.voters.empty()) {
    line += " voters=";
    for (std::size_t i = 0; i < e.voters.size(); ++i) {
      const VoterEntry& v = e.voters[i];
      if (i > 0) line += ",";
      line += v.voter + ":" + reading(v.deviation) + "/" + ms(v.delay, false) + "ms";
      line += "/ref=" + (v.reference ? reading(*v.reference) : std::string("none"));
    }
  }
  return line;
}

}  // namespace snowid::skew
