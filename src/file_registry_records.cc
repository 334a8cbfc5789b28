#include "file_registry_records.h"

#include <utility>

#include "durable_file.h"

namespace snowid::internal {
namespace {

constexpr std::int64_t kNsPerMs = 1'000'000;
constexpr std::int64_t kMaxUnixMs = INT64_MAX / kNsPerMs;

constexpr std::string_view kMarkMagic = "snowid-mark 1 ";
constexpr std::string_view kFenceMagic = "snowid-fenced 1 ";
constexpr std::string_view kHolderMagic = "snowid-holder 1";

std::int64_t ceil_unix_ms(WallTime t) {
  const std::int64_t ns = t.time_since_epoch().count();
  const std::int64_t ms = ns / kNsPerMs;
  return (ns % kNsPerMs > 0) ? ms + 1 : ms;
}

std::optional<std::optional<WallTime>> parse_ms_or_dash(std::string_view text) {
  if (text == "-") return std::optional<WallTime>();
  const std::optional<std::int64_t> ms = parse_int(text);
  if (!ms || *ms > kMaxUnixMs) return std::nullopt;
  return std::optional<WallTime>(wall_from_unix_ms(*ms));
}

std::string ms_or_dash(const std::optional<WallTime>& t) {
  return t ? std::to_string(ceil_unix_ms(*t)) : "-";
}

// Values stay on their line whatever the caller passed.
std::string one_line(std::string_view value) {
  std::string out;
  for (char c : value) {
    const auto u = static_cast<unsigned char>(c);
    out += (u < 0x20 || u == 0x7f) ? '?' : c;
  }
  return out;
}

}  // namespace

std::optional<std::int64_t> parse_int(std::string_view text) {
  if (text.empty() || text.size() > 18) return std::nullopt;
  std::int64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

// ---- The mark ----

std::string format_mark(const Mark& m) {
  return std::string(kMarkMagic) + "high_water=" + ms_or_dash(m.high_water) +
         " released_at=" + ms_or_dash(m.released_at) + "\n";
}

Result<std::optional<Mark>> read_mark(const std::string& path) {
  return parse_mark_file(read_small_file(path), path);
}

Result<std::optional<Mark>> parse_mark_file(const Result<std::optional<std::string>>& text,
                                            const std::string& path) {
  if (!text.is_ok()) return text.status();
  if (!text.value()) return std::optional<Mark>();
  Result<Mark> mark = parse_mark(*text.value(), path);
  if (!mark.is_ok()) return mark.status();
  return std::optional<Mark>(mark.value());
}

Result<Mark> parse_mark(std::string_view text, const std::string& path) {
  auto corrupt = [&](const char* why) {
    return Status(Code::kDataLoss, "mark file " + path + " is unreadable (" + why +
                                       "); this worker id stays unused until an operator "
                                       "restores it, since its ids could otherwise repeat");
  };
  std::string_view s = text;
  if (s.substr(0, kMarkMagic.size()) != kMarkMagic) return corrupt("bad header");
  s.remove_prefix(kMarkMagic.size());
  if (s.empty() || s.back() != '\n') return corrupt("truncated");
  s.remove_suffix(1);
  const std::size_t space = s.find(' ');
  if (space == std::string_view::npos) return corrupt("missing field");
  const std::string_view hw = s.substr(0, space);
  const std::string_view rel = s.substr(space + 1);
  constexpr std::string_view kHw = "high_water=";
  constexpr std::string_view kRel = "released_at=";
  if (hw.substr(0, kHw.size()) != kHw || rel.substr(0, kRel.size()) != kRel) {
    return corrupt("bad field");
  }
  const auto hw_value = parse_ms_or_dash(hw.substr(kHw.size()));
  const auto rel_value = parse_ms_or_dash(rel.substr(kRel.size()));
  if (!hw_value || !rel_value) return corrupt("bad value");
  return Mark{*hw_value, *rel_value};
}

// ---- The fence marker ----

std::string format_marker(const FenceMarker& f) {
  return std::string(kFenceMagic) + f.token + " " + std::to_string(ceil_unix_ms(f.fenced_at)) +
         "\n";
}

Result<std::optional<FenceMarker>> read_marker(const std::string& path) {
  Result<std::optional<std::string>> text = read_small_file(path);
  if (!text.is_ok()) return text.status();
  if (!text.value()) return std::optional<FenceMarker>();
  std::string_view s = *text.value();
  FenceMarker marker;
  if (s.substr(0, kFenceMagic.size()) == kFenceMagic && s.size() > kFenceMagic.size() &&
      s.back() == '\n') {
    s.remove_prefix(kFenceMagic.size());
    s.remove_suffix(1);
    const std::size_t space = s.find(' ');
    if (space != std::string_view::npos) {
      const std::optional<std::int64_t> ms = parse_int(s.substr(space + 1));
      if (ms && *ms <= kMaxUnixMs && space > 0) {
        marker.token = std::string(s.substr(0, space));
        marker.fenced_at = wall_from_unix_ms(*ms);
      }
    }
  }
  return std::optional<FenceMarker>(std::move(marker));
}

// ---- The holder text in the lock file ----

std::string format_holder(const std::string& token, const HolderInfo& h) {
  return std::string(kHolderMagic) + "\ntoken=" + token + "\nhost=" + one_line(h.host) +
         "\npid=" + std::to_string(h.pid) + "\nstarted=" + std::to_string(unix_ms(h.started)) +
         "\naddress=" + one_line(h.address) + "\nend\n";
}

std::optional<HolderText> parse_holder(std::string_view s) {
  if (s.substr(0, kHolderMagic.size() + 1) != std::string(kHolderMagic) + "\n") return std::nullopt;
  s.remove_prefix(kHolderMagic.size() + 1);
  HolderText h;
  bool ended = false;
  while (!s.empty() && !ended) {
    const std::size_t nl = s.find('\n');
    if (nl == std::string_view::npos) return std::nullopt;
    const std::string_view line = s.substr(0, nl);
    s.remove_prefix(nl + 1);
    if (line == "end") {
      ended = true;
      break;
    }
    const std::size_t eq = line.find('=');
    if (eq == std::string_view::npos) return std::nullopt;
    const std::string_view key = line.substr(0, eq);
    const std::string_view value = line.substr(eq + 1);
    if (key == "token") {
      h.token = std::string(value);
    } else if (key == "host") {
      h.info.host = std::string(value);
    } else if (key == "address") {
      h.info.address = std::string(value);
    } else if (key == "pid" || key == "started") {
      const std::optional<std::int64_t> n = parse_int(value);
      if (!n) return std::nullopt;
      if (key == "pid") {
        h.info.pid = *n;
      } else {
        if (*n > kMaxUnixMs) return std::nullopt;
        h.info.started = wall_from_unix_ms(*n);
      }
    }  // unknown keys: written by a later version; ignored
  }
  if (!ended || h.token.empty()) return std::nullopt;
  return h;
}

std::string holder_text(const std::optional<HolderText>& h) {
  if (!h) return "an unknown holder";
  return h->info.host + " pid " + std::to_string(h->info.pid);
}

}  // namespace snowid::internal
