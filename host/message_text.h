// Quoting untrusted input inside one-line messages.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace snowid::host {

// `text` cut to `limit` characters ("..." marks the cut), with every byte that
// is not printable ASCII replaced by '?': a message that quotes input stays
// one line and cannot carry terminal escapes or invalid UTF-8.
std::string printable(std::string_view text, std::size_t limit);

// printable(text, limit) in double quotes.
std::string quote_input(std::string_view text, std::size_t limit = 40);

}  // namespace snowid::host
