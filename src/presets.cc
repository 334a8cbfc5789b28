#include <array>
#include <string>

#include "snowid/layout.h"

namespace snowid {
namespace {

// Published parameters of each scheme, field names in its own terms.
LayoutSpec twitter() {
  // Epoch 2010-11-04T01:42:54.657Z.
  return {"twitter",
          1288834974657,
          1,
          {{"time", FieldRole::kTime, 41},
           {"datacenter", FieldRole::kRegion, 5},
           {"worker", FieldRole::kHost, 5},
           {"sequence", FieldRole::kSequence, 12}},
          true};
}

LayoutSpec discord() {
  // Epoch 2015-01-01T00:00:00Z; all 64 bits are used.
  return {"discord",
          1420070400000,
          1,
          {{"timestamp", FieldRole::kTime, 42},
           {"worker", FieldRole::kOther, 5},
           {"process", FieldRole::kOther, 5},
           {"increment", FieldRole::kSequence, 12}},
          true};
}

LayoutSpec instagram() {
  // Epoch 1314220021721 ms (2011-08-24T21:07:01.721Z); all 64 bits are used.
  return {"instagram",
          1314220021721,
          1,
          {{"time", FieldRole::kTime, 41},
           {"shard", FieldRole::kOther, 13},
           {"sequence", FieldRole::kSequence, 10}},
          true};
}

LayoutSpec sonyflake() {
  // Epoch 2014-09-01T00:00:00Z, 10 ms units; the sequence sits above the machine id.
  return {"sonyflake",
          1409529600000,
          10,
          {{"time", FieldRole::kTime, 39},
           {"sequence", FieldRole::kSequence, 8},
           {"machine", FieldRole::kOther, 16}},
          true};
}

constexpr std::array<std::string_view, 5> kNames = {"snowid", "twitter", "discord", "instagram",
                                                    "sonyflake"};

}  // namespace

Result<Layout> preset(std::string_view name) {
  if (name == "snowid") return Layout::snowid_default();
  if (name == "twitter") return Layout::create(twitter());
  if (name == "discord") return Layout::create(discord());
  if (name == "instagram") return Layout::create(instagram());
  if (name == "sonyflake") return Layout::create(sonyflake());
  return Status(Code::kNotFound, "no layout preset named \"" + std::string(name.substr(0, 32)) +
                                     "\" (known: snowid, twitter, discord, instagram, sonyflake)");
}

std::span<const std::string_view> preset_names() noexcept { return kNames; }

}  // namespace snowid
