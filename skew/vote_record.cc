#include "vote_record.h"

#include <array>
#include <charconv>
#include <limits>

namespace snowid::skew {
namespace {

constexpr std::size_t kMaxRecord = 1024;

enum Key : std::size_t {
  kVersion,
  kOffset,
  kUncertainty,
  kDelay,
  kMeasuredAt,
  kRefOffset,
  kRefUncertainty,
  kDeviation,
  kDeviationUncertainty,
  kBasis,
  kVoterState,
  kRevision,
  kKeyCount,
};

constexpr std::array<std::string_view, kKeyCount> kKeys = {"v",
                                                           "offset_ns",
                                                           "uncertainty_ns",
                                                           "delay_ns",
                                                           "measured_at_ns",
                                                           "reference_offset_ns",
                                                           "reference_uncertainty_ns",
                                                           "deviation_ns",
                                                           "deviation_uncertainty_ns",
                                                           "basis",
                                                           "voter_state",
                                                           "holder_revision"};

// A value as read: an integer, a string of [a-z], or null.
struct Value {
  enum class Kind : std::uint8_t { kInteger, kString, kNull } kind = Kind::kNull;
  std::int64_t integer = 0;
  std::string_view text;
};

Status bad(std::string message) {
  return Status(Code::kInvalidArgument, "vote record: " + std::move(message));
}

class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}

  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool eat(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool at_end() {
    skip_space();
    return pos_ == text_.size();
  }
  // A string of lower-case letters, digits and '_': every key and word of
  // the format. No escapes: none is needed, so none is accepted.
  Result<std::string_view> word() {
    if (!eat('"')) return bad("expected a string at byte " + std::to_string(pos_));
    const std::size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != '"') {
      const char c = text_[pos_];
      if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) {
        return bad("unexpected character in a string at byte " + std::to_string(pos_));
      }
      ++pos_;
    }
    if (pos_ == text_.size()) return bad("unterminated string");
    return text_.substr(start, pos_++ - start);
  }
  Result<Value> value() {
    skip_space();
    if (pos_ >= text_.size()) return bad("expected a value at the end");
    const char c = text_[pos_];
    if (c == '"') {
      Result<std::string_view> w = word();
      if (!w.is_ok()) return w.status();
      return Value{Value::Kind::kString, 0, w.value()};
    }
    if (text_.substr(pos_, 4) == "null") {
      pos_ += 4;
      return Value{};
    }
    if (c == '-' || (c >= '0' && c <= '9')) return integer();
    return bad("unexpected value at byte " + std::to_string(pos_));
  }

 private:
  Result<Value> integer() {
    const std::size_t start = pos_;
    if (text_[pos_] == '-') ++pos_;
    const std::size_t digits = pos_;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
    if (pos_ == digits) return bad("a number without digits at byte " + std::to_string(start));
    if (text_[digits] == '0' && pos_ - digits > 1) {
      return bad("a number with a leading zero at byte " + std::to_string(start));
    }
    if (pos_ < text_.size() && (text_[pos_] == '.' || text_[pos_] == 'e' || text_[pos_] == 'E')) {
      return bad("numbers are whole: byte " + std::to_string(pos_));
    }
    std::int64_t n = 0;
    const auto [end, ec] = std::from_chars(text_.data() + start, text_.data() + pos_, n);
    if (ec != std::errc() || end != text_.data() + pos_) {
      return bad("a number out of range at byte " + std::to_string(start));
    }
    return Value{Value::Kind::kInteger, n, {}};
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

Result<std::array<Value, kKeyCount>> read_object(std::string_view text) {
  Reader r(text);
  std::array<Value, kKeyCount> values{};
  std::array<bool, kKeyCount> seen{};
  if (!r.eat('{')) return bad("not a JSON object");
  bool first = true;
  while (!r.eat('}')) {
    if (!first && !r.eat(',')) return bad("expected ',' or '}'");
    first = false;
    Result<std::string_view> key = r.word();
    if (!key.is_ok()) return key.status();
    std::size_t index = kKeyCount;
    for (std::size_t i = 0; i < kKeyCount; ++i) {
      if (kKeys[i] == key.value()) index = i;
    }
    if (index == kKeyCount) return bad("unknown key \"" + std::string(key.value()) + "\"");
    if (seen[index]) return bad("key \"" + std::string(key.value()) + "\" repeated");
    seen[index] = true;
    if (!r.eat(':')) return bad("expected ':' after \"" + std::string(key.value()) + "\"");
    Result<Value> v = r.value();
    if (!v.is_ok()) return v.status();
    values[index] = v.value();
  }
  if (!r.at_end()) return bad("text after the object");
  for (std::size_t i = 0; i < kKeyCount; ++i) {
    if (!seen[i]) return bad("key \"" + std::string(kKeys[i]) + "\" missing");
  }
  return values;
}

Result<std::int64_t> integer_of(const std::array<Value, kKeyCount>& v, Key key,
                                std::int64_t minimum) {
  if (v[key].kind != Value::Kind::kInteger) {
    return bad("\"" + std::string(kKeys[key]) + "\" must be an integer");
  }
  if (v[key].integer < minimum) {
    return bad("\"" + std::string(kKeys[key]) + "\" must be >= " + std::to_string(minimum));
  }
  return v[key].integer;
}

constexpr std::int64_t kAny = std::numeric_limits<std::int64_t>::min();

}  // namespace

std::string_view basis_name(VoteBasis basis) noexcept {
  switch (basis) {
    case VoteBasis::kPeers:
      return "peers";
    case VoteBasis::kReference:
      return "reference";
    case VoteBasis::kBoth:
      return "both";
  }
  return "unknown";
}

std::string encode_vote(const VoteRecord& r) {
  auto n = [](std::int64_t x) { return std::to_string(x); };
  std::string out = "{\"v\":1";
  out += ",\"offset_ns\":" + n(r.offset.value.count());
  out += ",\"uncertainty_ns\":" + n(r.offset.uncertainty.count());
  out += ",\"delay_ns\":" + n(r.delay.count());
  out += ",\"measured_at_ns\":" + n(r.measured_at.time_since_epoch().count());
  out += ",\"reference_offset_ns\":" + (r.reference ? n(r.reference->value.count()) : "null");
  out += ",\"reference_uncertainty_ns\":" +
         (r.reference ? n(r.reference->uncertainty.count()) : "null");
  out += ",\"deviation_ns\":" + n(r.deviation.value.count());
  out += ",\"deviation_uncertainty_ns\":" + n(r.deviation.uncertainty.count());
  out += ",\"basis\":\"" + std::string(basis_name(r.basis)) + "\"";
  out += ",\"voter_state\":\"" + std::string(state_name(r.voter_state)) + "\"";
  out += ",\"holder_revision\":" + n(r.holder_revision) + "}";
  return out;
}

Result<VoteRecord> parse_vote(std::string_view text) {
  if (text.size() > kMaxRecord) return bad("longer than 1024 bytes");
  Result<std::array<Value, kKeyCount>> read = read_object(text);
  if (!read.is_ok()) return read.status();
  const std::array<Value, kKeyCount>& v = read.value();
  VoteRecord r;
  Result<std::int64_t> version = integer_of(v, kVersion, kAny);
  if (!version.is_ok()) return version.status();
  if (version.value() != 1) return bad("unknown version " + std::to_string(version.value()));
  const std::array<std::pair<Key, std::int64_t>, 7> numbers = {{{kOffset, kAny},
                                                                {kUncertainty, 0},
                                                                {kDelay, 0},
                                                                {kMeasuredAt, kAny},
                                                                {kDeviation, kAny},
                                                                {kDeviationUncertainty, 0},
                                                                {kRevision, 1}}};
  std::array<std::int64_t, kKeyCount> n{};
  for (const auto& [key, minimum] : numbers) {
    Result<std::int64_t> x = integer_of(v, key, minimum);
    if (!x.is_ok()) return x.status();
    n[key] = x.value();
  }
  r.offset = Reading{Duration(n[kOffset]), Duration(n[kUncertainty])};
  r.delay = Duration(n[kDelay]);
  r.measured_at = WallTime(Duration(n[kMeasuredAt]));
  r.deviation = Reading{Duration(n[kDeviation]), Duration(n[kDeviationUncertainty])};
  r.holder_revision = n[kRevision];
  const bool ref_null = v[kRefOffset].kind == Value::Kind::kNull;
  if (ref_null != (v[kRefUncertainty].kind == Value::Kind::kNull)) {
    return bad(
        "\"reference_offset_ns\" and \"reference_uncertainty_ns\" must both be null or both "
        "integers");
  }
  if (!ref_null) {
    Result<std::int64_t> ro = integer_of(v, kRefOffset, kAny);
    if (!ro.is_ok()) return ro.status();
    Result<std::int64_t> ru = integer_of(v, kRefUncertainty, 0);
    if (!ru.is_ok()) return ru.status();
    r.reference = Reading{Duration(ro.value()), Duration(ru.value())};
  }
  if (v[kBasis].kind != Value::Kind::kString) return bad("\"basis\" must be a string");
  if (v[kBasis].text == "peers") {
    r.basis = VoteBasis::kPeers;
  } else if (v[kBasis].text == "reference") {
    r.basis = VoteBasis::kReference;
  } else if (v[kBasis].text == "both") {
    r.basis = VoteBasis::kBoth;
  } else {
    return bad("\"basis\" must be \"peers\", \"reference\" or \"both\"");
  }
  if (v[kVoterState].kind != Value::Kind::kString) return bad("\"voter_state\" must be a string");
  const std::optional<State> state = state_from_name(v[kVoterState].text);
  if (!state || !(*state == State::kOk || *state == State::kAlert)) {
    return bad("\"voter_state\" must be \"ok\" or \"alert\"");
  }
  r.voter_state = *state;
  return r;
}

std::string vote_key(std::string_view ns, std::uint32_t region, std::string_view target,
                     std::string_view voter) {
  std::string key(ns);
  key += "/skew/" + std::to_string(region) + "/votes/";
  key += target;
  key += "/";
  key += voter;
  return key;
}

}  // namespace snowid::skew
