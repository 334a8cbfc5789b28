#include "line_reader.h"

#include <stdio.h>  // getc_unlocked (POSIX)

namespace snowid::cli {

bool LineReader::next(std::string& line, bool& too_long) {
  line.clear();
  too_long = false;
  int c = getc_unlocked(in_);
  if (c == EOF) return false;
  ++number_;
  for (; c != EOF && c != '\n'; c = getc_unlocked(in_)) {
    if (line.size() < max_length_ + 1) {
      line += static_cast<char>(c);
    } else {
      too_long = true;
    }
  }
  // The "\r" of a CRLF line end is stripped only when it ends the line.
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line.size() > max_length_) {
    too_long = true;
    line.resize(max_length_);
  }
  return true;
}

}  // namespace snowid::cli
