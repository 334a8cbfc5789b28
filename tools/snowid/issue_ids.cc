#include "issue_ids.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <string>
#include <thread>

#include "diagnostics.h"
#include "snowid/generator.h"

namespace snowid::cli {
namespace {

// Ids asked for per reserve(); a tick's sequence bounds what one call returns.
constexpr std::uint32_t kBatch = 4096;
constexpr std::size_t kFlushBytes = 1 << 16;
// Longest sleep between retries, so that a clock that catches up is noticed soon.
constexpr Duration kMaxRetrySleep = std::chrono::milliseconds(100);

IdBatch reserve_with_retry(Generator& gen, std::uint32_t n, Duration budget) {
  const auto deadline = std::chrono::steady_clock::now() + budget;
  for (;;) {
    IdBatch b = gen.reserve(n);
    if (b.ok() || !is_retryable(b.code) || std::chrono::steady_clock::now() >= deadline) return b;
    std::this_thread::sleep_for(
        std::clamp<Duration>(b.retry_after, std::chrono::milliseconds(1), kMaxRetrySleep));
  }
}

// Why a batch was refused, as precisely as the generator and the fence say.
Status refusal(const Generator& gen, const RecordingFenceStore& fence, Code code, Duration budget) {
  if (Status health = gen.health(); !health.is_ok()) return health;
  switch (code) {
    case Code::kUnavailable:
      if (!fence.last_failure().is_ok()) return fence.last_failure();
      return Status(code, "the time fence could not be stored");
    case Code::kClockBehind:
    case Code::kSequenceExhausted:
      return Status(code, "still refused after retrying for " +
                              std::to_string(budget / std::chrono::milliseconds(1)) +
                              " ms; is the system clock stopped or far behind?");
    case Code::kOutOfRange:
      return Status(code, "the clock is outside layout " + gen.layout().name() +
                              "'s lifetime or before its era's cut-over");
    default:
      return Status(code, "the generator refused");
  }
}

class IdWriter {
 public:
  explicit IdWriter(std::FILE* out) : out_(out) {}

  void add(std::uint64_t first, std::uint32_t count) {
    for (std::uint32_t i = 0; i < count; ++i) {
      char buf[24];
      const auto r = std::to_chars(buf, buf + sizeof buf - 1, first + i);
      *r.ptr = '\n';
      buffer_.append(buf, static_cast<std::size_t>(r.ptr + 1 - buf));
    }
    if (buffer_.size() >= kFlushBytes) flush();
  }

  // Writes what is buffered; false (with errno_ set) once any write failed.
  bool flush() {
    if (!buffer_.empty() && ok_) {
      if (std::fwrite(buffer_.data(), 1, buffer_.size(), out_) != buffer_.size()) fail();
    }
    buffer_.clear();
    if (ok_ && std::fflush(out_) != 0) fail();
    return ok_;
  }

  Status error() const {
    return Status(Code::kUnavailable, std::string("cannot write ids: ") + std::strerror(errno_));
  }

 private:
  void fail() {
    ok_ = false;
    errno_ = errno;
  }

  std::FILE* out_;
  std::string buffer_;
  bool ok_ = true;
  int errno_ = 0;
};

}  // namespace

int issue_ids(const IssueRequest& request, std::FILE* out) {
  const auto& eras = request.history->eras();
  IdWriter writer(out);
  std::uint64_t left = request.count;
  for (std::size_t era = request.era; left > 0; ++era) {
    const Layout& layout = eras[era].layout;
    GeneratorOptions options;
    options.layout = layout;
    options.worker = request.worker;
    options.fence_store = request.fence;
    options.not_before = eras[era].cutover;
    Result<std::unique_ptr<Generator>> created = Generator::create(system_clock(), options);
    if (!created.is_ok()) {
      writer.flush();
      return report(created.status());
    }
    Generator& gen = *created.value();
    const bool has_next = era + 1 < eras.size();
    Status failure;
    while (left > 0) {
      const auto n = static_cast<std::uint32_t>(std::min<std::uint64_t>(left, kBatch));
      const IdBatch b = reserve_with_retry(gen, n, request.retry_budget);
      if (!b.ok()) {
        failure = refusal(gen, *request.fence, b.code, request.retry_budget);
        break;
      }
      // Ids of a tick at or past the next cut-over would decode as the next
      // era's; drop them and move on to that era.
      const auto ticks = static_cast<std::int64_t>(b.first >> layout.fields()[0].shift);
      if (has_next && layout.time_of_ticks(ticks) >= eras[era + 1].cutover) {
        break;
      }
      writer.add(b.first, b.count);
      left -= b.count;
    }
    const bool written = writer.flush();
    // The exact last tick lets the next run start at once; failing to record
    // it costs that run a wait of up to the fence window, nothing more.
    if (Status closed = gen.close(); !closed.is_ok()) {
      print_warning("could not record the last issued time (" + closed.to_string() +
                    "); the next run may wait up to a second");
    }
    if (!written) return report(writer.error());
    if (!failure.is_ok()) {
      // A refusal after start-up is a failure of the run, never bad input.
      print_error(failure.to_string());
      return kExitFailure;
    }
  }
  return kExitOk;
}

}  // namespace snowid::cli
