// Reads input one line at a time with a bound on the memory one line may
// take, so that a huge or endless line cannot exhaust memory.
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>

namespace snowid::cli {

class LineReader {
 public:
  // Reads from `in`, which the caller keeps open. Lines longer than
  // `max_length` are reported as too long and skipped to their end.
  LineReader(std::FILE* in, std::size_t max_length) : in_(in), max_length_(max_length) {}

  // The next line without its "\n" and without one "\r" before that. Returns
  // false at the end of input; text after the last "\n" is a last line.
  // `too_long` says the line was cut at max_length.
  bool next(std::string& line, bool& too_long);
  // 1-based number of the line next() returned last.
  std::size_t line_number() const noexcept { return number_; }
  // True if reading failed (rather than reaching the end).
  bool failed() const noexcept { return std::ferror(in_) != 0; }

 private:
  std::FILE* in_;
  std::size_t max_length_;
  std::size_t number_ = 0;
};

}  // namespace snowid::cli
