// Layout files the tests write, shared so that each is spelled once.
#pragma once

#include <string_view>

namespace snowid::test_support {

// A layout file of one era from 2026-01-01: 2 regions of 16 hosts.
inline constexpr std::string_view kNarrowLayoutJson =
    R"({"name": "narrow", "epoch": "2026-01-01T00:00:00Z", "fields": [
      {"name": "time", "role": "time", "width": 41},
      {"name": "region", "role": "region", "width": 1},
      {"name": "host", "role": "host", "width": 4},
      {"name": "sequence", "role": "sequence", "width": 17}]})";

}  // namespace snowid::test_support
