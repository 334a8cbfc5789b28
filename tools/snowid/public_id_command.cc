// `snowid public-id`: public ids and their keyring (docs/public-id.md).
//   keygen [--slot N] [--name NAME] [--not-before T]   a new key: primary in a new file,
//                                                      decrypt (not yet wrapping) in an existing
//                                                      one
//   keys list [--json]                                 slots, states, windows, fingerprints
//   promote SLOT                                       SLOT wraps; the old primary stays active
//   retire SLOT                                        SLOT's public ids are refused from now on
//   wrap --type T [--sealed] [ID...]                   public ids (stdin: one id a line)
//   unwrap [--type T] [--json] [PUBLIC...]             ids, with their key and time
//   check [--json] TEXT...                             the parts of a text; needs no key
// The keyring is --keys FILE or $SNOWID_PUBLIC_ID_KEYS. Key bytes are never printed.
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "diagnostics.h"
#include "keyring_edit.h"
#include "line_reader.h"
#include "snowid/id_text.h"
#include "snowid/public_id.h"

namespace snowid::cli {
namespace {

constexpr std::size_t kMaxLine = 256;

struct Options {
  std::string keys;
  // keygen
  int slot = -1;
  std::string name;
  std::string not_before;
  // promote, retire
  int target = -1;
  // wrap, unwrap, check
  std::string type;
  bool sealed = false;
  bool json = false;
  std::vector<std::string> inputs;
};

int write_out(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  return std::fflush(stdout) == 0 ? kExitOk : report(Status(Code::kUnavailable, "cannot write"));
}

Status need_keys(const Options& opt) {
  if (!opt.keys.empty()) return Status::ok();
  return Status(Code::kInvalidArgument,
                "no keyring: give --keys FILE or set SNOWID_PUBLIC_ID_KEYS");
}

Result<PublicIdCodec> open_codec(const Options& opt) {
  if (Status s = need_keys(opt); !s.is_ok()) return s;
  Result<PublicIdKeyring> ring = PublicIdKeyring::load(opt.keys);
  if (!ring.is_ok()) return ring.status();
  return PublicIdCodec::create(std::move(ring).value());
}

// Runs `each` on every input: the arguments, or the lines of stdin. Returns
// the exit code: 2 if any input was refused (each refusal one line on stderr).
template <typename Each>
int for_each_input(const Options& opt, Each each) {
  bool bad = false;
  const auto one = [&](const std::string& text, const std::string& where) {
    const Status s = each(text);
    if (!s.is_ok()) {
      print_error(where + s.message());
      bad = true;
    }
  };
  if (!opt.inputs.empty()) {
    for (const std::string& text : opt.inputs) one(text, "");
  } else {
    LineReader reader(stdin, kMaxLine);
    std::string line;
    bool too_long = false;
    while (reader.next(line, too_long)) {
      const std::string where = "line " + std::to_string(reader.line_number()) + ": ";
      if (too_long) {
        print_error(where + "longer than " + std::to_string(kMaxLine) + " characters");
        bad = true;
      } else {
        one(line, where);
      }
    }
    if (reader.failed()) return report(Status(Code::kUnavailable, "cannot read stdin"));
  }
  if (std::fflush(stdout) != 0) return report(Status(Code::kUnavailable, "cannot write"));
  return bad ? kExitUsage : kExitOk;
}

int run_keygen(const Options& opt) {
  if (Status s = need_keys(opt); !s.is_ok()) return report(s);
  WallTime not_before = system_clock().wall_now();
  if (!opt.not_before.empty()) {
    Result<WallTime> t = parse_iso8601(opt.not_before);
    if (!t.is_ok())
      return report(Status(Code::kInvalidArgument, "--not-before: " + t.status().message()));
    not_before = t.value();
  }
  const bool create = ::access(opt.keys.c_str(), F_OK) != 0;
  std::string text;
  int slot = opt.slot;
  if (create) {
    text = std::string(PublicIdKeyring::kHeader) + "\n" +
           "# slot state not_before name key (never share this file; mode 0600)\n";
    if (slot < 0) slot = 0;
  } else {
    Result<std::string> old = read_keyring_text(opt.keys);
    if (!old.is_ok()) return report(old.status());
    text = std::move(old).value();
    if (!text.empty() && text.back() != '\n') text += '\n';
    const PublicIdKeyring ring = PublicIdKeyring::parse(text).value();
    if (slot < 0) {
      for (int s = 0; s < PublicIdKeyring::kSlots && slot < 0; ++s) {
        if (!ring.slot(s)) slot = s;
      }
      if (slot < 0) {
        return report(Status(Code::kFailedPrecondition,
                             "every slot holds a key; retire one and remove its line first"));
      }
    } else if (ring.slot(slot)) {
      return report(Status(Code::kFailedPrecondition,
                           "slot " + std::to_string(slot) + " holds key " + ring.slot(slot)->name));
    }
  }
  const std::string name =
      opt.name.empty() ? "k" + std::to_string(slot) + "-" + format_iso8601(not_before).substr(0, 10)
                       : opt.name;
  const KeyState state = create ? KeyState::kPrimary : KeyState::kDecrypt;
  Result<std::string> line = new_keyring_line(slot, state, not_before, name);
  if (!line.is_ok()) return report(line.status());
  text += line.value() + "\n";
  if (Status s = write_keyring_text(opt.keys, text, create); !s.is_ok()) return report(s);
  const PublicIdKeyring ring = PublicIdKeyring::parse(text).value();
  return write_out("slot " + std::to_string(slot) + ": key " + name + " (fingerprint " +
                   ring.slot(slot)->fingerprint + ") added as " +
                   std::string(key_state_name(state)) + "\n");
}

int run_list(const Options& opt) {
  Result<PublicIdCodec> codec = open_codec(opt);
  if (!codec.is_ok()) return report(codec.status());
  const PublicIdKeyring& ring = codec->keys();
  if (opt.json) {
    nlohmann::ordered_json slots = nlohmann::ordered_json::array();
    for (int s = 0; s < PublicIdKeyring::kSlots; ++s) {
      if (!ring.slot(s)) continue;
      const KeySlotInfo& k = *ring.slot(s);
      slots.push_back({{"slot", s},
                       {"state", key_state_name(k.state)},
                       {"not_before", format_iso8601(k.not_before)},
                       {"name", k.name},
                       {"fingerprint", k.fingerprint}});
    }
    nlohmann::ordered_json doc = {{"policy", key_policy_name(ring.policy())}, {"slots", slots}};
    return write_out(doc.dump(2) + "\n");
  }
  std::string out = "policy " + std::string(key_policy_name(ring.policy())) + "\n";
  char line[200];
  std::snprintf(line, sizeof line, "%-4s  %-7s  %-24s  %-32s  %s\n", "SLOT", "STATE", "NOT-BEFORE",
                "NAME", "FINGERPRINT");
  out += line;
  for (int s = 0; s < PublicIdKeyring::kSlots; ++s) {
    if (!ring.slot(s)) continue;
    const KeySlotInfo& k = *ring.slot(s);
    std::snprintf(line, sizeof line, "%-4d  %-7s  %-24s  %-32s  %s\n", s,
                  std::string(key_state_name(k.state)).c_str(),
                  format_iso8601(k.not_before).c_str(), k.name.c_str(), k.fingerprint.c_str());
    out += line;
  }
  return write_out(out);
}

int run_set_state(const Options& opt, KeyState state) {
  if (Status s = need_keys(opt); !s.is_ok()) return report(s);
  Result<std::string> text = read_keyring_text(opt.keys);
  if (!text.is_ok()) return report(text.status());
  const PublicIdKeyring ring = PublicIdKeyring::parse(text.value()).value();
  const int old_primary = ring.primary_slot();
  if (state == KeyState::kRetired && opt.target == old_primary) {
    return report(Status(
        Code::kFailedPrecondition,
        "slot " + std::to_string(opt.target) + " is the primary; promote another slot first"));
  }
  Result<std::string> edited = with_slot_state(text.value(), opt.target, state);
  if (edited.is_ok() && state == KeyState::kPrimary && old_primary != opt.target) {
    edited = with_slot_state(edited.value(), old_primary, KeyState::kActive);
  }
  if (!edited.is_ok()) return report(edited.status());
  if (Status s = write_keyring_text(opt.keys, edited.value(), false); !s.is_ok()) return report(s);
  std::string done =
      "slot " + std::to_string(opt.target) + " is now " + std::string(key_state_name(state));
  if (state == KeyState::kPrimary && old_primary != opt.target) {
    done += "; slot " + std::to_string(old_primary) + " is active";
  }
  return write_out(done + "\n");
}

int run_wrap(const Options& opt) {
  Result<PublicIdCodec> codec = open_codec(opt);
  if (!codec.is_ok()) return report(codec.status());
  Result<PublicIdType> type = codec->prepare(opt.type);
  if (!type.is_ok()) return report(type.status());
  const PublicIdForm form = opt.sealed ? PublicIdForm::kSealed : PublicIdForm::kCompact;
  return for_each_input(opt, [&](const std::string& text) {
    Result<std::uint64_t> id = parse_id(text);
    if (!id.is_ok()) return id.status();
    Result<PublicIdText> out = codec->wrap(type.value(), id.value(), form);
    if (!out.is_ok()) return out.status();
    std::string line(out->view());
    line += '\n';
    std::fwrite(line.data(), 1, line.size(), stdout);
    return Status::ok();
  });
}

int run_unwrap(const Options& opt) {
  Result<PublicIdCodec> codec = open_codec(opt);
  if (!codec.is_ok()) return report(codec.status());
  std::optional<PublicIdType> expected;
  if (!opt.type.empty()) {
    Result<PublicIdType> t = codec->prepare(opt.type);
    if (!t.is_ok()) return report(t.status());
    expected = t.value();
  }
  const Layout& layout = Layout::snowid_default();
  return for_each_input(opt, [&](const std::string& text) {
    Result<Unwrapped> u = expected ? codec->unwrap(*expected, text) : codec->unwrap(text);
    if (!u.is_ok()) return u.status();
    std::string line;
    if (opt.json) {
      const DecodedId d = layout.decode(u->id).value();
      const PublicIdParts parts = parse_public_id(text).value();
      const KeySlotInfo& key = *codec->keys().slot(u->slot);
      nlohmann::ordered_json j = {{"public", std::string(parts.text().view())},
                                  {"id", std::to_string(u->id)},
                                  {"type", std::string(parts.type())},
                                  {"form", u->form == PublicIdForm::kSealed ? "sealed" : "compact"},
                                  {"slot", u->slot},
                                  {"key", key.name},
                                  {"fingerprint", key.fingerprint},
                                  {"time", format_iso8601(d.time)},
                                  {"region", d.values[1]},
                                  {"host", d.values[2]},
                                  {"sequence", d.values[3]}};
      line = j.dump() + "\n";
    } else {
      line = std::to_string(u->id) + "\n";
    }
    std::fwrite(line.data(), 1, line.size(), stdout);
    return Status::ok();
  });
}

int run_check(const Options& opt) {
  return for_each_input(opt, [&](const std::string& text) {
    Result<PublicIdParts> p = parse_public_id(text);
    if (!p.is_ok()) return p.status();
    const char* form = p->form == PublicIdForm::kSealed ? "sealed" : "compact";
    std::string line;
    if (opt.json) {
      line = nlohmann::ordered_json({{"public", std::string(p->text().view())},
                                     {"type", std::string(p->type())},
                                     {"form", form},
                                     {"slot", p->slot}})
                 .dump() +
             "\n";
    } else {
      line = std::string(p->text().view()) + " type " + std::string(p->type()) + " " + form +
             " slot " + std::to_string(p->slot) + "\n";
    }
    std::fwrite(line.data(), 1, line.size(), stdout);
    return Status::ok();
  });
}

void add_keys_option(CLI::App& app, Options& opt) {
  app.add_option("--keys", opt.keys, "The keyring file (mode 0600)")
      ->envname("SNOWID_PUBLIC_ID_KEYS")
      ->type_name("FILE");
}

}  // namespace

Command add_public_id_command(CLI::App& root) {
  auto opt = std::make_shared<Options>();
  CLI::App* app = root.add_subcommand(
      "public-id", "Wrap ids as public ids that hide their time and volume; manage the keyring");
  app->require_subcommand(1);
  auto run = std::make_shared<std::function<int()>>();

  CLI::App* keygen = app->add_subcommand("keygen", "Add a new random key to the keyring");
  add_keys_option(*keygen, *opt);
  keygen->add_option("--slot", opt->slot, "The slot, 0 to 3 (default: the first free)")
      ->check(CLI::Range(0, 3));
  keygen->add_option("--name", opt->name, "The key's name (default: k<slot>-<date>)");
  keygen
      ->add_option("--not-before", opt->not_before,
                   "Start of the key's window under by_time (default: now)")
      ->type_name("TIME");
  keygen->footer(
      "A new file gets the key as primary. In an existing file the key is added as decrypt: "
      "give the file to every program, then promote it.");
  keygen->callback([run, opt] { *run = [opt] { return run_keygen(*opt); }; });

  CLI::App* keys = app->add_subcommand("keys", "Show the keyring");
  keys->require_subcommand(1);
  CLI::App* list = keys->add_subcommand("list", "Slots, states, windows and fingerprints");
  add_keys_option(*list, *opt);
  list->add_flag("--json", opt->json, "One JSON document");
  list->callback([run, opt] { *run = [opt] { return run_list(*opt); }; });

  CLI::App* promote = app->add_subcommand("promote", "Make SLOT the primary; the old one active");
  add_keys_option(*promote, *opt);
  promote->add_option("slot", opt->target, "The slot")->required()->check(CLI::Range(0, 3));
  promote->callback(
      [run, opt] { *run = [opt] { return run_set_state(*opt, KeyState::kPrimary); }; });

  CLI::App* retire = app->add_subcommand("retire", "Refuse SLOT's public ids from now on");
  add_keys_option(*retire, *opt);
  retire->add_option("slot", opt->target, "The slot")->required()->check(CLI::Range(0, 3));
  retire->callback(
      [run, opt] { *run = [opt] { return run_set_state(*opt, KeyState::kRetired); }; });

  CLI::App* wrap = app->add_subcommand("wrap", "Public ids of ids given or read one a line");
  add_keys_option(*wrap, *opt);
  wrap->add_option("--type", opt->type, "The type prefix, e.g. ord")->required();
  wrap->add_flag("--sealed", opt->sealed, "The sealed form (26 symbols, forgeries refused)");
  wrap->add_option("ids", opt->inputs, "Ids (none: read stdin)")->type_name("ID");
  wrap->callback([run, opt] { *run = [opt] { return run_wrap(*opt); }; });

  CLI::App* unwrap = app->add_subcommand("unwrap", "Ids of public ids given or read one a line");
  add_keys_option(*unwrap, *opt);
  unwrap->add_option("--type", opt->type, "Refuse public ids of another type");
  unwrap->add_flag("--json", opt->json, "One JSON object a line: id, key, time and fields");
  unwrap->add_option("public", opt->inputs, "Public ids (none: read stdin)")->type_name("PUBLIC");
  unwrap->callback([run, opt] { *run = [opt] { return run_unwrap(*opt); }; });

  CLI::App* check = app->add_subcommand("check", "Check the text of public ids; needs no key");
  check->add_flag("--json", opt->json, "One JSON object a line");
  check->add_option("public", opt->inputs, "Public ids (none: read stdin)")->type_name("PUBLIC");
  check->callback([run, opt] { *run = [opt] { return run_check(*opt); }; });

  return {app,
          [run, opt](const Operands& operands) {
            opt->inputs.insert(opt->inputs.end(), operands.begin(), operands.end());
            return (*run)();
          },
          true};
}

}  // namespace snowid::cli
