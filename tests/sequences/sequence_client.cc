// A client of one named sequence for the scenario tests: a real process the
// tests can run by the eight and kill. It opens the ticket store named by a
// configuration string (sequences/include/ticket_store_url.h), puts one
// SequenceBuffer over the sequence and hands out numbers until it has
// handed out --count of them, or until SIGTERM / SIGINT (--count 0: until
// then), or until it is killed.
//
// stdout: every number handed out, one decimal per line, in the order the
//   buffer gave them. Lines are written in batches (at most --flush numbers,
//   and whenever the pacing pauses), each batch by write() straight to the
//   descriptor, so nothing sits in a stdio buffer: a number counts as handed
//   out exactly when its whole line, newline included, is on stdout. A kill
//   may leave a last line cut short: that line is no number, and the numbers
//   drawn but not yet written are a gap, like the rest of the ranges.
// stderr: at the end (not after SIGKILL), one JSON object on one line:
//   {"issued":N,"written":N,"errors":N,"ranges_fetched":N,"store_calls":N,
//    "store_failures":N,"waits":N,"wait_timeouts":N,"numbers_lost":N,
//    "step":N,"last_error":"..."}
//   issued/ranges_fetched/... are the buffer's SequenceBufferStats; errors
//   counts next()/next_n() calls that failed with a retryable error (each is
//   retried after 10 ms).
//
// Usage: sequence_client --store URL --sequence NAME [--count N] [--step N]
//          [--refill SHARE] [--adaptive] [--min-step N] [--max-step N]
//          [--range-life-ms N] [--rate PER_SECOND] [--batch N] [--flush N]
//          [--wait-timeout-ms N] [--timeout-ms N]
//   --batch N   draw with next_n(N) rather than next() (the last call asks
//               for what is left of --count)
//   --rate R    at most R numbers per second, evenly spread (0: no limit)
// Exit: 0 when done, 2 for a bad command line or a store that cannot be
// opened, 3 when the buffer gives a final error (its words on stderr).
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "snowid/sequence_buffer.h"
#include "snowid/status.h"
#include "snowid/time.h"
#include "ticket_store_url.h"

namespace {

using Steady = std::chrono::steady_clock;

std::atomic<bool> g_stop{false};

void on_signal(int) { g_stop.store(true); }

struct Flags {
  std::string store;
  std::string sequence;
  std::int64_t count = 0;
  std::int64_t batch = 0;
  std::int64_t flush = 1000;
  double rate = 0;
  std::int64_t timeout_ms = 10'000;
  snowid::SequenceBufferOptions buffer;
};

int usage(const std::string& why) {
  std::fprintf(stderr,
               "sequence_client: %s\n"
               "usage: sequence_client --store URL --sequence NAME [--count N] [--step N]\n"
               "         [--refill SHARE] [--adaptive] [--min-step N] [--max-step N]\n"
               "         [--range-life-ms N] [--rate PER_SECOND] [--batch N] [--flush N]\n"
               "         [--wait-timeout-ms N] [--timeout-ms N]\n",
               why.c_str());
  return 2;
}

bool parse_int(std::string_view text, std::int64_t& out) {
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc() && ptr == end;
}

// Empty on success, else what was wrong.
std::string parse_flags(int argc, char** argv, Flags& f) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (flag == "--adaptive") {
      f.buffer.adaptive = true;
      continue;
    }
    if (i + 1 >= argc) return "missing value after " + std::string(flag);
    const std::string_view v = argv[++i];
    std::int64_t n = 0;
    const bool numeric = parse_int(v, n);
    if (flag == "--store") {
      f.store = v;
    } else if (flag == "--sequence") {
      f.sequence = v;
    } else if (flag == "--refill") {
      char* end = nullptr;
      f.buffer.refill_at = std::strtod(argv[i], &end);
      if (end == argv[i] || *end != '\0') return "--refill takes a number";
    } else if (flag == "--rate") {
      char* end = nullptr;
      f.rate = std::strtod(argv[i], &end);
      if (end == argv[i] || *end != '\0' || f.rate < 0) return "--rate takes a number >= 0";
    } else if (!numeric) {
      return std::string(flag) + " takes an integer (or is unknown)";
    } else if (flag == "--count") {
      f.count = n;
    } else if (flag == "--step") {
      f.buffer.step = n;
    } else if (flag == "--min-step") {
      f.buffer.min_step = n;
    } else if (flag == "--max-step") {
      f.buffer.max_step = n;
    } else if (flag == "--range-life-ms") {
      f.buffer.target_range_life = std::chrono::milliseconds(n);
    } else if (flag == "--batch") {
      f.batch = n;
    } else if (flag == "--flush") {
      f.flush = n;
    } else if (flag == "--wait-timeout-ms") {
      f.buffer.wait_timeout = std::chrono::milliseconds(n);
    } else if (flag == "--timeout-ms") {
      f.timeout_ms = n;
    } else {
      return "unknown flag " + std::string(flag);
    }
  }
  if (f.store.empty() || f.sequence.empty()) return "--store and --sequence are required";
  if (f.count < 0 || f.batch < 0 || f.flush < 1 || f.timeout_ms < 1) {
    return "--count and --batch must be >= 0, --flush and --timeout-ms >= 1";
  }
  return "";
}

// Lines waiting to be written; write() them whole to stdout.
class LineOut {
 public:
  explicit LineOut(std::int64_t flush_every) : flush_every_(flush_every) {}

  void add(std::int64_t n) {
    char buf[24];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, n);
    (void)ec;  // 24 bytes always hold an int64
    pending_.append(buf, end);
    pending_.push_back('\n');
    if (++pending_lines_ >= flush_every_) flush();
  }

  // Writes every pending line. False if stdout is gone (the reader died).
  bool flush() {
    std::size_t at = 0;
    while (at < pending_.size()) {
      const ssize_t n = ::write(STDOUT_FILENO, pending_.data() + at, pending_.size() - at);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      at += static_cast<std::size_t>(n);
    }
    written_ += pending_lines_;
    pending_.clear();
    pending_lines_ = 0;
    return true;
  }

  std::int64_t written() const noexcept { return written_; }

 private:
  const std::int64_t flush_every_;
  std::string pending_;
  std::int64_t pending_lines_ = 0;
  std::int64_t written_ = 0;
};

std::string json_escaped(const std::string& s) {
  std::string out;
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

void print_summary(const snowid::SequenceBufferStats& s, std::int64_t written,
                   std::uint64_t errors) {
  std::fprintf(
      stderr,
      "{\"issued\":%llu,\"written\":%lld,\"errors\":%llu,\"ranges_fetched\":%llu,"
      "\"store_calls\":%llu,\"store_failures\":%llu,\"waits\":%llu,"
      "\"wait_timeouts\":%llu,\"numbers_lost\":%llu,\"step\":%lld,"
      "\"last_error\":\"%s\"}\n",
      static_cast<unsigned long long>(s.numbers_issued), static_cast<long long>(written),
      static_cast<unsigned long long>(errors), static_cast<unsigned long long>(s.ranges_fetched),
      static_cast<unsigned long long>(s.store_calls),
      static_cast<unsigned long long>(s.store_failures), static_cast<unsigned long long>(s.waits),
      static_cast<unsigned long long>(s.wait_timeouts),
      static_cast<unsigned long long>(s.numbers_lost), static_cast<long long>(s.step),
      json_escaped(s.last_error.is_ok() ? "" : s.last_error.to_string()).c_str());
}

}  // namespace

int main(int argc, char** argv) {
  Flags f;
  if (const std::string why = parse_flags(argc, argv, f); !why.empty()) return usage(why);
  if (snowid::Status s = snowid::validate(f.buffer); !s.is_ok()) return usage(s.to_string());

  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);
  std::signal(SIGPIPE, SIG_IGN);

  const snowid::Clock& clock = snowid::system_clock();
  snowid::sequences::TicketStoreOpenOptions open;
  open.timeout = std::chrono::milliseconds(f.timeout_ms);
  open.connections = 1;  // one fetcher thread: one connection is all it uses
  auto store = snowid::sequences::open_ticket_store(f.store, clock, open);
  if (!store.is_ok()) return usage("cannot open the store: " + store.status().to_string());
  auto buffer = snowid::SequenceBuffer::open(*store.value(), f.sequence, clock, f.buffer);
  if (!buffer.is_ok()) return usage("cannot open the buffer: " + buffer.status().to_string());
  snowid::SequenceBuffer& seq = *buffer.value();

  LineOut out(f.flush);
  std::uint64_t errors = 0;
  std::int64_t drawn = 0;
  int exit_code = 0;
  std::vector<snowid::SequenceRange> ranges;
  const Steady::time_point started = Steady::now();
  while (!g_stop.load() && (f.count == 0 || drawn < f.count)) {
    if (f.rate > 0) {
      const auto due =
          started + std::chrono::duration_cast<Steady::duration>(
                        std::chrono::duration<double>(static_cast<double>(drawn) / f.rate));
      if (due > Steady::now()) {
        if (!out.flush()) break;
        std::this_thread::sleep_until(due);
      }
    }
    snowid::Status status;
    if (f.batch > 0) {
      const std::int64_t want = f.count == 0 ? f.batch : std::min(f.batch, f.count - drawn);
      ranges.clear();
      status = seq.next_n(want, ranges);
      if (status.is_ok()) {
        for (const snowid::SequenceRange& r : ranges) {
          for (std::int64_t n = r.first; n < r.end; ++n) out.add(n);
        }
        drawn += want;
      }
    } else {
      snowid::Result<std::int64_t> n = seq.next();
      status = n.status();
      if (n.is_ok()) {
        out.add(n.value());
        ++drawn;
      }
    }
    if (status.is_ok()) continue;
    if (!status.retryable()) {
      std::fprintf(stderr, "sequence_client: %s\n", status.to_string().c_str());
      exit_code = 3;
      break;
    }
    ++errors;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  (void)out.flush();
  print_summary(seq.stats(), out.written(), errors);
  return exit_code;
}
