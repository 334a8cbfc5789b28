// `snowid encode`: compose the id a worker would issue at a given time.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "commands.h"
#include "diagnostics.h"
#include "layout_option.h"
#include "number_text.h"

namespace snowid::cli {
namespace {

struct EncodeOptions {
  std::string time;
  std::string region = "0";
  std::string host;
  std::string seq = "0";
  std::string layout;
};

int run_encode(const EncodeOptions& opt) {
  Result<WallTime> t = parse_iso8601(opt.time);
  if (!t.is_ok()) return report(Status(Code::kInvalidArgument, "--time: " + t.status().message()));
  Result<WorkerId> parsed_worker = parse_worker(opt.region, opt.host);
  if (!parsed_worker.is_ok()) return report(parsed_worker.status());
  Result<std::uint64_t> seq = parse_number(opt.seq, "--seq", 0, UINT64_MAX);
  if (!seq.is_ok()) return report(seq.status());

  Result<host::LayoutFile> file = resolve_layout(opt.layout, system_clock().wall_now());
  if (!file.is_ok()) return report(file.status());
  Result<std::size_t> era = era_at(file->history, t.value());
  if (!era.is_ok()) return report(era.status());
  const Layout& layout = file->history.eras()[era.value()].layout;
  if (const int other = layout.index_of(FieldRole::kOther); other >= 0) {
    return report(
        Status(Code::kInvalidArgument, "layout " + layout.name() + " has a field without a role (" +
                                           layout.fields()[static_cast<std::size_t>(other)].name +
                                           ") that encode cannot fill"));
  }
  const WorkerId worker = parsed_worker.value();
  Result<std::uint64_t> id = layout.encode(layout.ticks_at(t.value()), worker, seq.value());
  if (!id.is_ok()) {
    // Out-of-range values are the caller's input whatever code the layout used.
    return report(
        Status(Code::kInvalidArgument, "layout " + layout.name() + ": " + id.status().message()));
  }
  std::printf("%llu\n", static_cast<unsigned long long>(id.value()));
  return std::fflush(stdout) == 0 ? kExitOk
                                  : report(Status(Code::kUnavailable, "cannot write the id"));
}

}  // namespace

Command add_encode_command(CLI::App& root) {
  auto opt = std::make_shared<EncodeOptions>();
  CLI::App* app =
      root.add_subcommand("encode", "Compose an id from a time, a worker and a sequence");
  app->add_option("--time", opt->time, "ISO 8601 time with a zone, e.g. 2026-03-01T12:00:00.000Z")
      ->type_name("ISO")
      ->required();
  app->add_option("--region", opt->region, "Region")->type_name("R")->capture_default_str();
  app->add_option("--host", opt->host, "Host within the region")->type_name("H")->required();
  app->add_option("--seq", opt->seq, "Sequence within the time unit")
      ->type_name("S")
      ->capture_default_str();
  add_layout_option(*app, opt->layout);
  return {app, [opt](const Operands&) { return run_encode(*opt); }};
}

}  // namespace snowid::cli
