// parse_integer_fields() on arbitrary bytes, checked against nlohmann-json's
// own document parser.
//
// Checks: a body that is accepted is valid JSON to the document parser, an
// object whose members are exactly the fields returned (names allowed, each
// once, in order), each an integer whose text is the one returned, or a
// string whose value is the text returned. A body the document parser
// refuses is refused too, and every refusal has a message.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "json_body.h"

namespace {

using ordered_json = nlohmann::ordered_json;

bool is_allowed(const std::string& name) { return name == "start" || name == "step"; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  const auto fields = snowid::daemon::parse_integer_fields(body, {"start", "step"});
  const ordered_json doc = ordered_json::parse(body, nullptr, false);
  if (!fields.is_ok()) {
    FUZZ_CHECK(!fields.status().message().empty());
    FUZZ_CHECK(fields.status().code() == snowid::Code::kInvalidArgument);
    return 0;
  }
  FUZZ_CHECK(!doc.is_discarded());
  FUZZ_CHECK(doc.is_object());
  // The document keeps one member per name: as many as returned means none
  // was repeated.
  FUZZ_CHECK(doc.size() == fields->size());
  std::set<std::string> seen;
  std::size_t i = 0;
  for (const auto& [name, value] : doc.items()) {
    const auto& [got_name, got_text] = fields.value()[i++];
    FUZZ_CHECK(got_name == name);
    FUZZ_CHECK(is_allowed(got_name));
    FUZZ_CHECK(seen.insert(got_name).second);
    if (value.is_string()) {
      FUZZ_CHECK(value.get<std::string>() == got_text);
    } else if (value.is_number_integer()) {
      FUZZ_CHECK(value.dump() == got_text);
    } else {
      // Only an integer too long for 64 bits becomes a double, given back
      // as its digits.
      FUZZ_CHECK(value.is_number_float());
      FUZZ_CHECK(!got_text.empty());
      FUZZ_CHECK(got_text.find_first_of(".eE") == std::string::npos);
    }
  }
  return 0;
}
