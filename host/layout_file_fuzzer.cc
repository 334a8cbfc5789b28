// libFuzzer target for the layout-file reader. Besides "never crash", it
// checks the round trip: whatever the reader accepts, the writer's output
// must read back to the same layouts.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "layout_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  snowid::Result<snowid::host::LayoutFile> first = snowid::host::parse_layout_file(text);
  if (!first.is_ok()) {
    // Errors are single lines of printable text.
    for (char c : first.status().message()) {
      if (c < 0x20 || c >= 0x7f) std::abort();
    }
    return 0;
  }
  const std::string written = snowid::host::layout_file_to_json(first.value()).dump();
  snowid::Result<snowid::host::LayoutFile> second = snowid::host::parse_layout_file(written);
  if (!second.is_ok()) std::abort();
  if (snowid::host::layout_file_to_json(second.value()).dump() != written) std::abort();
  // Decoding by value must pick an era and never fail for ids the layout can hold.
  const snowid::LayoutHistory& history = second->history;
  for (std::uint64_t id :
       {std::uint64_t{0}, std::uint64_t{1} << 40, std::uint64_t{INT64_MAX}, ~std::uint64_t{0}}) {
    const std::size_t era = history.era_of(id);
    if (era >= history.eras().size()) std::abort();
    const snowid::Layout& layout = history.eras()[era].layout;
    if (id <= layout.max_id() && !layout.decode(id).is_ok()) std::abort();
  }
  return 0;
}
