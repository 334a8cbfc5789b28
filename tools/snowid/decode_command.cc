// `snowid decode`: split ids into their time and fields.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "diagnostics.h"
#include "id_format.h"
#include "layout_option.h"
#include "line_reader.h"
#include "snowid/id_text.h"

namespace snowid::cli {
namespace {

// Longer stdin lines cannot be ids (20 digits at most); they are refused
// without being held in memory.
constexpr std::size_t kMaxLineLength = 1024;

struct DecodeOptions {
  std::string layout;
  bool json = false;
  std::vector<std::string> ids;
};

class Decoder {
 public:
  Decoder(const LayoutHistory& history, bool json) : history_(history), json_(json) {}

  // Decodes `text` and prints it, or prints why not (prefixed by `where`).
  void decode(std::string_view text, const std::string& where) {
    Result<std::uint64_t> value = parse_id(text);
    if (value.is_ok()) {
      const Layout& layout = history_.eras()[history_.era_of(value.value())].layout;
      // Refuses values the era's layout cannot hold, naming the layout.
      value = parse_id(text, layout);
      if (value.is_ok()) {
        Result<DecodedId> d = layout.decode(value.value());
        if (d.is_ok()) {
          std::string line =
              json_ ? decoded_json(layout, d.value()) : decoded_text(layout, d.value());
          line += '\n';
          std::fwrite(line.data(), 1, line.size(), stdout);
          return;
        }
        value = d.status();
      }
    }
    bad_ = true;
    print_error(where + value.status().message());
  }

  void refuse(const std::string& message) {
    bad_ = true;
    print_error(message);
  }

  bool any_bad() const noexcept { return bad_; }

 private:
  const LayoutHistory& history_;
  bool json_;
  bool bad_ = false;
};

int run_decode(const DecodeOptions& opt, const std::vector<std::string>& extras,
               const Operands& operands) {
  // CLI11 takes "-5" for an unknown flag; an argument that starts with "-"
  // and a digit is an id with a sign, refused below like any bad id.
  std::vector<std::string> ids = opt.ids;
  for (const std::string& e : extras) {
    if (e.size() < 2 || e[0] != '-' || e[1] < '0' || e[1] > '9') {
      return report(Status(Code::kInvalidArgument,
                           "decode: unknown option " + e + "; see snowid decode --help"));
    }
    ids.push_back(e);
  }
  ids.insert(ids.end(), operands.begin(), operands.end());
  const bool from_stdin = ids.empty();
  Result<host::LayoutFile> file = resolve_layout(opt.layout, system_clock().wall_now());
  if (!file.is_ok()) return report(file.status());
  Decoder decoder(file->history, opt.json);
  bool read_failed = false;
  if (!from_stdin) {
    for (const std::string& id : ids) decoder.decode(id, "");
  } else {
    LineReader reader(stdin, kMaxLineLength);
    std::string line;
    bool too_long = false;
    while (reader.next(line, too_long)) {
      const std::string where = "line " + std::to_string(reader.line_number()) + ": ";
      if (too_long) {
        decoder.refuse(where + "longer than " + std::to_string(kMaxLineLength) +
                       " characters, not an id");
      } else {
        decoder.decode(line, where);
      }
    }
    read_failed = reader.failed();
  }
  if (std::fflush(stdout) != 0) {
    return report(Status(Code::kUnavailable, "cannot write the decoded ids"));
  }
  if (read_failed) return report(Status(Code::kUnavailable, "cannot read ids from stdin"));
  return decoder.any_bad() ? kExitUsage : kExitOk;
}

}  // namespace

Command add_decode_command(CLI::App& root) {
  auto opt = std::make_shared<DecodeOptions>();
  CLI::App* app = root.add_subcommand(
      "decode", "Show the time and fields of ids given as arguments or one per line on stdin");
  app->add_option("ids", opt->ids, "Ids to decode (none: read stdin)")->type_name("ID");
  app->add_flag("--json", opt->json, "One JSON object per id (ids as strings)");
  add_layout_option(*app, opt->layout);
  app->allow_extras();
  app->footer(
      "Ids after -- are never read as options (snowid decode -- -5). A bad id is reported on "
      "stderr (with its line number for stdin) and the others are still decoded; the exit status "
      "is then 2.");
  return {
      app,
      [opt, app](const Operands& operands) { return run_decode(*opt, app->remaining(), operands); },
      /*takes_operands=*/true};
}

}  // namespace snowid::cli
