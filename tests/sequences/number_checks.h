// What the scenarios check about the numbers they were handed, and how they
// report their figures.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "snowid/ticket_store.h"

namespace snowid::sequence_scenarios {

// Numbers handed out more than once: how many repeats, and a few of them.
struct Repeats {
  std::size_t count = 0;
  std::vector<std::int64_t> examples;  // at most 5
};
// Sorts `numbers` and finds the repeats.
Repeats sort_and_find_repeats(std::vector<std::int64_t>& numbers);

// Ranges from many takers that share numbers: how many overlapping
// neighbours once sorted, and the first such pair as text.
struct Overlaps {
  std::size_t count = 0;
  std::string first;
};
// Sorts `ranges` by first number and finds the overlaps. Empty ranges are
// ignored.
Overlaps sort_and_find_overlaps(std::vector<SequenceRange>& ranges);

// The share of the numbers the table gave out that no caller received: the
// ranges' rests, lost when the buffers went away (or their process died).
struct GapFigures {
  std::int64_t given_out = 0;   // next_value - start: every number the table gave out
  std::int64_t handed_out = 0;  // received by callers
  std::int64_t lost = 0;        // given_out - handed_out
  double share = 0;             // lost / given_out
};
GapFigures gap_figures(std::int64_t start, std::int64_t next_value, std::int64_t handed_out);
std::string to_string(const GapFigures& g);

// Prints "[  FIGURE  ] key: value" for the log and records it as a property
// of the running test (in the XML/JSON report): figures for the notes, never
// checked against a target.
void report_figure(const std::string& key, const std::string& value);

}  // namespace snowid::sequence_scenarios
