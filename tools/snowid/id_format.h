// How `snowid decode` prints one decoded id.
#pragma once

#include <string>

#include "snowid/layout.h"

namespace snowid::cli {

// One line, no newline:
//   id=<id> time=<ISO 8601> layout=<name> <field>=<value> ...
// with the layout's own field names in layout order. A field named like one
// of the fixed keys (id, time, unix_ms, layout) is written as field_<name>,
// so that every key on a line is distinct.
std::string decoded_text(const Layout& layout, const DecodedId& d);

// One JSON object on one line, no newline:
//   {"id":"<id>","time":"<ISO>","unix_ms":<ms>,"layout":"<name>","fields":{"<field>":<value>,...}}
// The id is a string: JSON readers that use doubles lose precision above 2^53.
// Field values are numbers; fields sit in their own object so that their
// names never collide with the fixed keys.
std::string decoded_json(const Layout& layout, const DecodedId& d);

}  // namespace snowid::cli
