// The text of a public id: type "_" Crockford base32, strict and canonical.
#include <cstring>
#include <string>

#include "snowid/public_id.h"

namespace snowid {
namespace {

constexpr char kAlphabet[] = "0123456789abcdefghjkmnpqrstvwxyz";
constexpr std::size_t kCompactSymbols = 13;
constexpr std::size_t kSealedSymbols = 26;

// Each byte's symbol value: -1 for i l o u (either case), -2 for bytes
// outside the alphabet. Upper case folds.
struct SymbolTable {
  std::array<signed char, 256> value{};
  constexpr SymbolTable() {
    for (std::size_t i = 0; i < value.size(); ++i) value[i] = -2;
    for (int v = 0; v < 32; ++v) {
      const auto c = static_cast<unsigned char>(kAlphabet[v]);
      value[c] = static_cast<signed char>(v);
      if (c >= 'a' && c <= 'z') value[c - 'a' + 'A'] = static_cast<signed char>(v);
    }
    for (char c : {'i', 'l', 'o', 'u', 'I', 'L', 'O', 'U'})
      value[static_cast<unsigned char>(c)] = -1;
  }
};
constexpr SymbolTable kSymbols;

int symbol_value(char c) noexcept { return kSymbols.value[static_cast<unsigned char>(c)]; }

std::string shown(std::string_view text) {
  std::string out = "\"";
  for (char c : text.substr(0, 100)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  if (text.size() > 100) out += "...";
  return out + "\"";
}

Status refuse(std::string_view reason, std::string_view text, const std::string& why) {
  return Status(Code::kInvalidArgument,
                std::string(reason) + ": public id " + shown(text) + " " + why);
}

}  // namespace

std::string_view public_id_reason(const Status& status) noexcept {
  static constexpr std::string_view kReasons[] = {
      "BAD_TYPE",   "NO_TYPE",     "BAD_LENGTH", "AMBIGUOUS_SYMBOL", "BAD_SYMBOL",
      "WRONG_TYPE", "UNKNOWN_KEY", "FORGED",     "IMPLAUSIBLE",      "BAD_ID"};
  const std::string_view m = status.message();
  for (std::string_view r : kReasons) {
    if (m.size() > r.size() && m.substr(0, r.size()) == r && m[r.size()] == ':') return r;
  }
  return {};
}

Status check_public_id_type(std::string_view type) {
  const auto refuse_type = [&](const std::string& why) {
    return Status(Code::kInvalidArgument, "BAD_TYPE: type " + shown(type) + " " + why);
  };
  if (type.empty()) return Status(Code::kInvalidArgument, "NO_TYPE: the type is empty");
  if (type.size() > kMaxPublicIdType) {
    return refuse_type("is longer than " + std::to_string(kMaxPublicIdType) + " characters");
  }
  for (char c : type) {
    if (!((c >= 'a' && c <= 'z') || c == '_')) {
      return refuse_type("may hold only a-z and \"_\"");
    }
  }
  if (type.front() == '_' || type.back() == '_') {
    return refuse_type("must start and end with a letter");
  }
  return Status::ok();
}

PublicIdText PublicIdParts::compact_text(std::string_view type, int slot,
                                         std::uint64_t compact) noexcept {
  PublicIdText out;
  std::memcpy(out.data_.data(), type.data(), type.size());
  std::size_t at = type.size();
  out.data_[at++] = '_';
  // 65 bits: slot (2) then the ciphertext (63), five bits a symbol.
  out.data_[at++] = kAlphabet[(static_cast<unsigned>(slot) << 3) | (compact >> 60)];
  for (int k = 11; k >= 0; --k) out.data_[at++] = kAlphabet[(compact >> (5 * k)) & 31];
  out.size_ = at;
  return out;
}

PublicIdText PublicIdParts::text() const noexcept {
  if (form == PublicIdForm::kCompact) return compact_text(type(), slot, compact);
  PublicIdText out;
  std::memcpy(out.data_.data(), type_chars.data(), type_size);
  std::size_t at = type_size;
  out.data_[at++] = '_';
  // 130 bits: slot (2) then the block (128, byte 0 first).
  std::uint64_t hi = 0, lo = 0;
  for (int i = 0; i < 8; ++i) hi = hi << 8 | sealed[static_cast<std::size_t>(i)];
  for (int i = 8; i < 16; ++i) lo = lo << 8 | sealed[static_cast<std::size_t>(i)];
  out.data_[at++] = kAlphabet[(static_cast<unsigned>(slot) << 3) | (hi >> 61)];
  // Bits 124..0 of the block: 25 symbols.
  for (int k = 24; k >= 0; --k) {
    const int shift = 5 * k;  // of the 128-bit value
    std::uint64_t v;
    if (shift >= 64) {
      v = hi >> (shift - 64);
    } else if (shift > 59) {
      v = (lo >> shift) | (hi << (64 - shift));
    } else {
      v = lo >> shift;
    }
    out.data_[at++] = kAlphabet[v & 31];
  }
  out.size_ = at;
  return out;
}

Result<PublicIdParts> parse_public_id(std::string_view text) {
  const std::size_t sep = text.rfind('_');
  if (sep == std::string_view::npos || sep == 0) {
    return refuse("NO_TYPE", text, "has no type prefix such as \"ord_\"");
  }
  std::array<char, kMaxPublicIdType> folded{};
  const std::string_view raw_type = text.substr(0, sep);
  if (raw_type.size() > kMaxPublicIdType) {
    return refuse("BAD_TYPE", text,
                  "has a type longer than " + std::to_string(kMaxPublicIdType) + " characters");
  }
  for (std::size_t i = 0; i < raw_type.size(); ++i) {
    const char c = raw_type[i];
    folded[i] = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  }
  const std::string_view type(folded.data(), raw_type.size());
  if (Status s = check_public_id_type(type); !s.is_ok()) {
    return refuse("BAD_TYPE", text,
                  "has a type outside a-z and \"_\" (starting and ending with a letter)");
  }
  const std::string_view body = text.substr(sep + 1);
  if (body.size() != kCompactSymbols && body.size() != kSealedSymbols) {
    return refuse("BAD_LENGTH", text,
                  "has " + std::to_string(body.size()) +
                      " symbols after \"_\"; 13 (compact) or "
                      "26 (sealed) expected");
  }
  int values[kSealedSymbols];
  for (std::size_t i = 0; i < body.size(); ++i) {
    const int v = symbol_value(body[i]);
    if (v == -1) {
      const char c = body[i];
      const char* hint = (c == 'o' || c == 'O')   ? "0 (zero)"
                         : (c == 'u' || c == 'U') ? "v"
                                                  : "1 (one)";
      return refuse("AMBIGUOUS_SYMBOL", text,
                    std::string("has '") + c + "' at " + std::to_string(sep + 2 + i) +
                        ", which public ids never contain; did you mean " + hint + "?");
    }
    if (v < 0) {
      return refuse("BAD_SYMBOL", text,
                    "has a character outside 0-9 and a-z (less i, l, o, u) at " +
                        std::to_string(sep + 2 + i));
    }
    values[i] = v;
  }
  PublicIdParts parts;
  parts.type_chars = folded;
  parts.type_size = type.size();
  parts.slot = values[0] >> 3;
  if (body.size() == kCompactSymbols) {
    parts.form = PublicIdForm::kCompact;
    std::uint64_t v = static_cast<std::uint64_t>(values[0] & 7);
    for (std::size_t i = 1; i < kCompactSymbols; ++i)
      v = v << 5 | static_cast<std::uint64_t>(values[i]);
    parts.compact = v;
  } else {
    parts.form = PublicIdForm::kSealed;
    // A 128-bit shift register in two words.
    std::uint64_t hi = 0, lo = static_cast<std::uint64_t>(values[0] & 7);
    for (std::size_t i = 1; i < kSealedSymbols; ++i) {
      hi = hi << 5 | lo >> 59;
      lo = lo << 5 | static_cast<std::uint64_t>(values[i]);
    }
    for (int i = 0; i < 8; ++i) {
      parts.sealed[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(hi >> (56 - 8 * i));
      parts.sealed[static_cast<std::size_t>(8 + i)] = static_cast<std::uint8_t>(lo >> (56 - 8 * i));
    }
  }
  return parts;
}

}  // namespace snowid
