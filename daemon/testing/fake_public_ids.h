// A PublicIdPort for the command table's unit tests, without OpenSSL: a
// public id is the type, "_" and the id in lower-case hex, which anyone can
// read back. The real keyring is public_ids.h's, tested with the library.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "public_id_port.h"

namespace snowid::daemon::test_support {

class FakePublicIds final : public PublicIdPort {
 public:
  bool on_ = true;
  UnwrapCallers callers = UnwrapCallers::kLocal;
  mutable std::atomic<int> denied{0};

  bool on() const noexcept override { return on_; }
  Status check_type(std::string_view type) const override {
    if (type.empty() || type.find_first_not_of("abcdefghijklmnopqrstuvwxyz") != type.npos) {
      return Status(Code::kInvalidArgument, "BAD_TYPE: \"" + std::string(type) + "\"");
    }
    return Status::ok();
  }
  Status wrap(std::string_view type, std::span<const std::uint64_t> ids,
              std::vector<std::string>& out) const override {
    if (Status s = check_type(type); !s.is_ok()) return s;
    out.clear();
    for (const std::uint64_t id : ids) {
      char hex[16];
      const auto end = std::to_chars(hex, hex + sizeof hex, id, 16).ptr;
      out.push_back(std::string(type) + "_" + std::string(hex, end));
    }
    return Status::ok();
  }
  Result<UnwrappedId> unwrap(std::string_view text) const override {
    const std::size_t sep = text.rfind('_');
    if (sep == text.npos || sep == 0) return Status(Code::kInvalidArgument, "NO_TYPE: no \"_\"");
    UnwrappedId u;
    const std::string_view hex = text.substr(sep + 1);
    const auto r = std::from_chars(hex.data(), hex.data() + hex.size(), u.id, 16);
    if (r.ec != std::errc() || r.ptr != hex.data() + hex.size()) {
      return Status(Code::kInvalidArgument, "BAD_SYMBOL: not hex");
    }
    if (u.id == 0) return Status(Code::kNotFound, "UNKNOWN_KEY: slot 3 is retired");
    u.type = std::string(text.substr(0, sep));
    return u;
  }
  // The public id of `id`, as wrap() writes it.
  std::string text_of(std::string_view type, std::uint64_t id) const {
    std::vector<std::string> out;
    EXPECT_TRUE(wrap(type, std::span(&id, 1), out).is_ok());
    return out.empty() ? std::string() : out.front();
  }
  bool may_unwrap(const PublicIdCaller& caller) const noexcept override {
    if (unwrap_allowed(callers, caller)) return true;
    ++denied;
    return false;
  }
};

}  // namespace snowid::daemon::test_support
