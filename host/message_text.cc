#include "message_text.h"

namespace snowid::host {

std::string printable(std::string_view text, std::size_t limit) {
  std::string out;
  for (char c : text.substr(0, limit)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  if (text.size() > limit) out += "...";
  return out;
}

std::string quote_input(std::string_view text, std::size_t limit) {
  return "\"" + printable(text, limit) + "\"";
}

}  // namespace snowid::host
