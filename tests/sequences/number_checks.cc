#include "number_checks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <iostream>

namespace snowid::sequence_scenarios {

Repeats sort_and_find_repeats(std::vector<std::int64_t>& numbers) {
  std::sort(numbers.begin(), numbers.end());
  Repeats r;
  for (std::size_t i = 1; i < numbers.size(); ++i) {
    if (numbers[i] != numbers[i - 1]) continue;
    ++r.count;
    if (r.examples.size() < 5) r.examples.push_back(numbers[i]);
  }
  return r;
}

Overlaps sort_and_find_overlaps(std::vector<SequenceRange>& ranges) {
  std::erase_if(ranges, [](const SequenceRange& r) { return r.size() <= 0; });
  std::sort(ranges.begin(), ranges.end(), [](const SequenceRange& a, const SequenceRange& b) {
    return a.first < b.first || (a.first == b.first && a.end < b.end);
  });
  Overlaps o;
  // Compared with the furthest end so far, so that a range nested in an
  // earlier long one counts too.
  std::int64_t furthest = 0;
  std::size_t furthest_at = 0;
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    if (i > 0 && ranges[i].first < furthest) {
      if (o.count++ == 0) {
        const SequenceRange& a = ranges[furthest_at];
        o.first = "[" + std::to_string(a.first) + ", " + std::to_string(a.end) + ") and [" +
                  std::to_string(ranges[i].first) + ", " + std::to_string(ranges[i].end) + ")";
      }
    }
    if (i == 0 || ranges[i].end > furthest) {
      furthest = ranges[i].end;
      furthest_at = i;
    }
  }
  return o;
}

GapFigures gap_figures(std::int64_t start, std::int64_t next_value, std::int64_t handed_out) {
  GapFigures g;
  g.given_out = next_value - start;
  g.handed_out = handed_out;
  g.lost = g.given_out - handed_out;
  g.share = g.given_out > 0 ? static_cast<double>(g.lost) / static_cast<double>(g.given_out) : 0;
  return g;
}

std::string to_string(const GapFigures& g) {
  char share[32];
  std::snprintf(share, sizeof share, "%.3f%%", 100.0 * g.share);
  return std::to_string(g.handed_out) + " handed out of " + std::to_string(g.given_out) +
         " given out by the table; " + std::to_string(g.lost) + " lost to gaps (" + share + ")";
}

void report_figure(const std::string& key, const std::string& value) {
  std::cout << "[  FIGURE  ] " << key << ": " << value << std::endl;
  ::testing::Test::RecordProperty(key, value);
}

}  // namespace snowid::sequence_scenarios
