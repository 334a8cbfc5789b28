// `snowid sequences` (alias `seq`): the ticket table of the named sequences
// (docs/sequences.md), the same store snowidd serves them from.
//   create NAME [--start N] [--step N]   a new sequence; prints its row
//   list [--json]                        every sequence
//   show NAME [--json]                   one sequence
//   take NAME [--size N] [--json]        a range [start, end) for a client that buffers
//   migrate                              apply the schema migrations
// The store is --store, else $SNOWID_SEQUENCES, else snowidd's default,
// sqlite:<state dir>/sequences.db. Every argument is checked before the store
// is opened, so a mistake never creates or touches a database.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "commands.h"
#include "diagnostics.h"
#include "number_text.h"
#include "registry_open.h"
#include "snowid/status.h"
#include "snowid/ticket_store.h"
#include "snowid/time.h"
#include "state_dir.h"
#ifdef SNOWID_CLI_SEQUENCES
#include "ticket_store_url.h"
#endif

namespace snowid::cli {
namespace {

constexpr std::uint64_t kMaxStart =
    static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) - 1;

struct StoreFlags {
  std::string store;
  std::string state_dir;
  CLI::Option* store_option = nullptr;      // to tell "--store ''" from no flag
  CLI::Option* state_dir_option = nullptr;  // likewise
};

struct CreateOptions {
  StoreFlags store;
  std::string name;
  std::string start = "1";
  std::string step = std::to_string(kDefaultSequenceStep);
  bool json = false;
};

struct ListOptions {
  StoreFlags store;
  bool json = false;
};

struct ShowOptions {
  StoreFlags store;
  std::string name;
  bool json = false;
};

struct TakeOptions {
  StoreFlags store;
  std::string name;
  std::string size;
  CLI::Option* size_option = nullptr;
  bool json = false;
};

struct MigrateOptions {
  StoreFlags store;
};

void add_store_options(CLI::App& app, StoreFlags& f) {
  f.store_option =
      app.add_option("--store", f.store,
                     "The ticket table: sqlite:PATH or a postgresql:// URL (env "
                     "SNOWID_SEQUENCES; default sqlite:<state dir>/sequences.db, as snowidd)")
          ->type_name("URL");
  f.state_dir_option =
      app.add_option("--state-dir", f.state_dir,
                     "State directory of the default store (default $SNOWID_STATE_DIR, else "
                     "$XDG_STATE_HOME/snowid, else ~/.local/state/snowid)")
          ->type_name("DIR");
}

// The store to open: its URL, where the URL came from (for messages), and
// the directory to create first (the state directory, for the default store:
// snowidd creates it too).
struct StoreChoice {
  std::string url;
  std::string source;
  std::string make_dir;
};

Result<StoreChoice> choose_store(const StoreFlags& f) {
  StoreChoice c;
  const char* env = std::getenv("SNOWID_SEQUENCES");
  if (f.store_option->count() > 0) {
    // An empty value is most likely an unset shell variable; the default
    // store instead would silently be another table.
    if (f.store.empty()) return Status(Code::kInvalidArgument, "--store is empty");
    c.url = f.store;
    c.source = "--store";
  } else if (env != nullptr && *env != '\0') {
    c.url = env;
    c.source = "SNOWID_SEQUENCES";
  } else {
    if (f.state_dir_option->count() > 0 && f.state_dir.empty()) {
      return Status(Code::kInvalidArgument, "--state-dir is empty");
    }
    Result<std::string> dir = host::find_state_dir(f.state_dir, host::process_environment(),
                                                   host::StateDirFallback::kNone);
    if (!dir.is_ok()) return dir.status();
    c.url = "sqlite:" + dir.value() + "/sequences.db";
    c.source = "the default store";
    c.make_dir = dir.value();
  }
  if (c.url == "off") {
    return Status(Code::kInvalidArgument,
                  c.source +
                      " is off (snowidd serves no sequences); give --store URL to use a "
                      "ticket table anyway");
  }
  return c;
}

// An open store and its URL as it may be shown (no password).
struct OpenStore {
  std::unique_ptr<TicketStore> store;
  std::string shown;
};

// What a command does with an SQLite file that does not exist. `create` and
// `migrate` make it (and the state directory of the default store), as
// snowidd does; the commands that only read or take refuse it, so that
// looking in the wrong place (a state directory other than snowidd's) says
// so instead of answering from a new, empty table left behind.
enum class MissingFile { kMake, kRefuse };

#ifdef SNOWID_CLI_SEQUENCES
Result<OpenStore> open_store(const StoreFlags& f, MissingFile missing, bool migrate) {
  Result<StoreChoice> choice = choose_store(f);
  if (!choice.is_ok()) return choice.status();
  const StoreChoice& c = choice.value();
  Result<std::string_view> kind = sequences::ticket_store_kind(c.url);
  if (!kind.is_ok()) {
    return Status(Code::kInvalidArgument, c.source + ": " + kind.status().message());
  }
  OpenStore out;
  out.shown = sequences::redact_ticket_store_url(c.url);
  if (kind.value() == "sqlite" && missing == MissingFile::kRefuse) {
    struct stat st;
    const std::string path = c.url.substr(std::string_view("sqlite:").size());
    if (::stat(path.c_str(), &st) != 0 && errno == ENOENT) {
      return Status(Code::kFailedPrecondition,
                    out.shown + " (" + c.source +
                        ") does not exist: no sequence was created there (snowid sequences "
                        "create makes it; if snowidd keeps its state elsewhere, give --state-dir "
                        "or --store)");
    }
  }
  if (!c.make_dir.empty() && missing == MissingFile::kMake) {
    if (Status s = host::make_dirs(c.make_dir); !s.is_ok()) return s;
  }
  sequences::TicketStoreOpenOptions options;
  options.connections = 1;  // one call at a time
  options.migrate = migrate;
  Result<std::unique_ptr<TicketStore>> store =
      sequences::open_ticket_store(c.url, system_clock(), options);
  if (!store.is_ok()) {
    return Status(store.status().code(),
                  "cannot open " + out.shown + " (" + c.source + "): " + store.status().message());
  }
  out.store = std::move(store).value();
  return out;
}
#else
Result<OpenStore> open_store(const StoreFlags& f, MissingFile, bool) {
  if (Result<StoreChoice> choice = choose_store(f); !choice.is_ok()) return choice.status();
  return Status(Code::kFailedPrecondition,
                "this snowid was built without the sequence stores (SNOWID_BUILD_SEQUENCES=OFF)");
}
#endif

// Reports a store's refusal of a call about `name` (empty: none). The exit
// status says whose mistake it was: 2 only for input the caller can correct
// on the command line, 1 for what the table holds or the database did.
int store_failure(const Status& s, const OpenStore& open, const std::string& name) {
  switch (s.code()) {
    case Code::kNotFound:
      print_error("no sequence \"" + name + "\" in " + open.shown +
                  "; create it with \"snowid sequences create " + name + "\"");
      return kExitFailure;
    case Code::kInvalidArgument:
      return report(s);
    case Code::kOutOfRange:  // the sequence is spent: not a mistake in the arguments
      print_error(s.to_string());
      return kExitFailure;
    default:
      return report(Status(s.code(), open.shown + ": " + s.message()));
  }
}

int write_out(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  return std::fflush(stdout) == 0 ? kExitOk
                                  : report(Status(Code::kUnavailable, "cannot write the output"));
}

std::string rows_table(const std::vector<SequenceInfo>& rows) {
  std::vector<std::vector<std::string>> cells = {{"NAME", "NEXT", "STEP", "CREATED", "UPDATED"}};
  for (const SequenceInfo& r : rows) {
    cells.push_back({r.name, std::to_string(r.next_value), std::to_string(r.step),
                     format_iso8601(r.created), format_iso8601(r.updated)});
  }
  std::vector<std::size_t> width(cells.front().size(), 0);
  for (const auto& row : cells) {
    for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  std::string out;
  for (const auto& row : cells) {
    for (std::size_t i = 0; i < row.size(); ++i) {
      out += row[i];
      if (i + 1 < row.size()) out += std::string(width[i] - row[i].size() + 2, ' ');
    }
    out += '\n';
  }
  return out;
}

// The shape of snowidd's GET /v1/sequences/{name}, without its buffer: the
// next value as a string, since it may pass 2^53, where JSON readers that
// hold numbers as doubles start to round.
nlohmann::ordered_json row_json(const SequenceInfo& r) {
  nlohmann::ordered_json j;
  j["sequence"] = r.name;
  j["next_value"] = std::to_string(r.next_value);
  j["step"] = r.step;
  j["created"] = format_iso8601(r.created);
  j["updated"] = format_iso8601(r.updated);
  return j;
}

int print_row(const SequenceInfo& row, bool json) {
  return write_out(json ? row_json(row).dump(2) + "\n" : rows_table({row}));
}

int run_create(const CreateOptions& opt) {
  Result<std::uint64_t> start = parse_number(opt.start, "--start", 0, kMaxStart);
  if (!start.is_ok()) return report(start.status());
  Result<std::uint64_t> step =
      parse_number(opt.step, "--step", 1, static_cast<std::uint64_t>(kMaxSequenceRange));
  if (!step.is_ok()) return report(step.status());
  const auto first = static_cast<std::int64_t>(start.value());
  const auto size = static_cast<std::int64_t>(step.value());
  if (Status s = validate_sequence_create(opt.name, first, size); !s.is_ok()) return report(s);
  Result<OpenStore> open = open_store(opt.store, MissingFile::kMake, true);
  if (!open.is_ok()) return report(open.status());
  if (Status s = open->store->create(opt.name, first, size); !s.is_ok()) {
    return store_failure(s, open.value(), opt.name);
  }
  Result<SequenceInfo> row = open->store->get(opt.name);
  if (!row.is_ok()) return store_failure(row.status(), open.value(), opt.name);
  return print_row(row.value(), opt.json);
}

int run_list(const ListOptions& opt) {
  Result<OpenStore> open = open_store(opt.store, MissingFile::kRefuse, true);
  if (!open.is_ok()) return report(open.status());
  Result<std::vector<SequenceInfo>> rows = open->store->list();
  if (!rows.is_ok()) return store_failure(rows.status(), open.value(), "");
  if (!opt.json) return write_out(rows_table(rows.value()));
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  for (const SequenceInfo& r : rows.value()) all.push_back(row_json(r));
  nlohmann::ordered_json doc;
  doc["sequences"] = std::move(all);
  return write_out(doc.dump(2) + "\n");
}

int run_show(const ShowOptions& opt) {
  if (Status s = validate_sequence_name(opt.name); !s.is_ok()) return report(s);
  Result<OpenStore> open = open_store(opt.store, MissingFile::kRefuse, true);
  if (!open.is_ok()) return report(open.status());
  Result<SequenceInfo> row = open->store->get(opt.name);
  if (!row.is_ok()) return store_failure(row.status(), open.value(), opt.name);
  return print_row(row.value(), opt.json);
}

int run_take(const TakeOptions& opt) {
  std::int64_t size = 0;  // 0: the sequence's step
  if (opt.size_option->count() > 0) {
    Result<std::uint64_t> n =
        parse_number(opt.size, "--size", 1, static_cast<std::uint64_t>(kMaxSequenceRange));
    if (!n.is_ok()) return report(n.status());
    size = static_cast<std::int64_t>(n.value());
  }
  if (Status s = validate_sequence_take(opt.name, size); !s.is_ok()) return report(s);
  Result<OpenStore> open = open_store(opt.store, MissingFile::kRefuse, true);
  if (!open.is_ok()) return report(open.status());
  Result<SequenceRange> range = open->store->take(opt.name, size);
  if (!range.is_ok()) return store_failure(range.status(), open.value(), opt.name);
  const SequenceRange& r = range.value();
  if (!opt.json) return write_out(std::to_string(r.first) + " " + std::to_string(r.end) + "\n");
  // The shape of snowidd's GET /v1/sequences/{name}/range; the bounds are
  // strings for the reason row_json gives, the size (at most 10^9) a number.
  nlohmann::ordered_json j;
  j["sequence"] = opt.name;
  j["start"] = std::to_string(r.first);
  j["end"] = std::to_string(r.end);
  j["size"] = r.size();
  return write_out(j.dump(2) + "\n");
}

int run_migrate(const MigrateOptions& opt) {
  Result<OpenStore> open = open_store(opt.store, MissingFile::kMake, false);
  if (!open.is_ok()) return report(open.status());
  if (Status s = open->store->migrate(); !s.is_ok()) return store_failure(s, open.value(), "");
  return write_out(open->shown + ": the schema is current\n");
}

CLI::Option* add_name(CLI::App& app, std::string& name) {
  return app.add_option("name", name, "Sequence name: 1 to 64 of [A-Za-z0-9_.-]")
      ->type_name("NAME")
      ->required();
}

}  // namespace

Command add_sequences_command(CLI::App& root) {
  CLI::App* app = root.add_subcommand(
      "sequences", "Named dense sequences in the ticket table that snowidd serves them from");
  app->alias("seq");
  app->require_subcommand(1);

  auto create = std::make_shared<CreateOptions>();
  CLI::App* create_app =
      app->add_subcommand("create", "Create a sequence and print its row; fails if it exists");
  add_name(*create_app, create->name);
  create_app
      ->add_option("--start", create->start, "First number it hands out, 0 to 9223372036854775806")
      ->type_name("N")
      ->capture_default_str();
  create_app
      ->add_option("--step", create->step,
                   "Range size for takers that ask for none, 1 to 1000000000")
      ->type_name("N")
      ->capture_default_str();
  create_app->add_flag("--json", create->json, "The row as JSON instead of a table");
  add_store_options(*create_app, create->store);

  auto list = std::make_shared<ListOptions>();
  CLI::App* list_app =
      app->add_subcommand("list", "Every sequence: name, next value, step, created, updated");
  list_app->add_flag("--json", list->json, "One JSON document instead of a table");
  add_store_options(*list_app, list->store);

  auto show = std::make_shared<ShowOptions>();
  CLI::App* show_app = app->add_subcommand("show", "One sequence's row");
  add_name(*show_app, show->name);
  show_app->add_flag("--json", show->json, "The row as JSON instead of a table");
  add_store_options(*show_app, show->store);

  auto take = std::make_shared<TakeOptions>();
  CLI::App* take_app = app->add_subcommand(
      "take",
      "Take the next range for a client that hands the numbers out itself; prints START END, "
      "the numbers START to END - 1 (END is exclusive)");
  add_name(*take_app, take->name);
  take->size_option =
      take_app
          ->add_option("--size", take->size,
                       "How many numbers, 1 to 1000000000 (default the sequence's step)")
          ->type_name("N");
  take_app->add_flag("--json", take->json,
                     "JSON: {\"sequence\", \"start\", \"end\" (exclusive), \"size\"}, the bounds "
                     "as strings");
  add_store_options(*take_app, take->store);

  auto migrate = std::make_shared<MigrateOptions>();
  CLI::App* migrate_app = app->add_subcommand(
      "migrate",
      "Apply the schema migrations the store lacks (the other commands apply them as they open)");
  add_store_options(*migrate_app, migrate->store);

  app->footer(
      "The store is --store, else SNOWID_SEQUENCES, else sqlite:<state dir>/sequences.db, "
      "snowidd's default. A password in a URL is never printed.\n"
      "Exit status: 0 ok, 1 failure (no such sequence, it exists already, it is spent, the "
      "database is unreachable), 2 bad input (name, number or store URL).");
  return {app, [create_app, create, list_app, list, show_app, show, take_app, take,
                migrate](const Operands&) {
            if (create_app->parsed()) return run_create(*create);
            if (list_app->parsed()) return run_list(*list);
            if (show_app->parsed()) return run_show(*show);
            if (take_app->parsed()) return run_take(*take);
            return run_migrate(*migrate);
          }};
}

}  // namespace snowid::cli
