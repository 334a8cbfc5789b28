// `snowid layout`: describe a layout, its capacity and its remaining life.
#include <cstdio>
#include <memory>
#include <string>

#include "commands.h"
#include "diagnostics.h"
#include "layout_describe.h"
#include "layout_option.h"

namespace snowid::cli {
namespace {

struct LayoutOptions {
  std::string layout;
  bool json = false;
};

int run_layout(const LayoutOptions& opt) {
  const WallTime now = system_clock().wall_now();
  Result<host::LayoutFile> file = resolve_layout(opt.layout, now);
  if (!file.is_ok()) return report(file.status());
  const std::string out =
      opt.json ? describe_json(file.value(), now).dump(2) + "\n" : describe_text(file.value(), now);
  std::fwrite(out.data(), 1, out.size(), stdout);
  const auto& eras = file->history.eras();
  for (std::size_t i = 0; i < eras.size(); ++i) {
    for (const std::string& w : outlook_of(eras[i].layout, now).warnings) {
      print_warning(file->is_history ? "era " + std::to_string(i) + ": " + w : w);
    }
  }
  return std::fflush(stdout) == 0
             ? kExitOk
             : report(Status(Code::kUnavailable, "cannot write the description"));
}

}  // namespace

Command add_layout_command(CLI::App& root) {
  auto opt = std::make_shared<LayoutOptions>();
  CLI::App* app = root.add_subcommand(
      "layout", "Describe a layout: fields, capacity, end of life; --json output is a layout file");
  add_layout_option(*app, opt->layout);
  app->add_flag("--json", opt->json, "JSON that can be read back with --layout FILE");
  return {app, [opt](const Operands&) { return run_layout(*opt); }};
}

}  // namespace snowid::cli
