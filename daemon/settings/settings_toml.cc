#include "settings_toml.h"

#include <cstdio>

#include "setting_values.h"

// toml++ header-only, without exceptions: errors come back as values, as in
// the rest of snowid, and nothing is thrown across this file's functions.
#define TOML_EXCEPTIONS 0
#define TOML_HEADER_ONLY 1
#include <toml++/toml.h>

namespace snowid::daemon {
namespace {

// The TOML node as text in the syntax of the setting's type, or an error.
Result<std::string> toml_text(const SettingInfo& info, const toml::node& node) {
  auto wrong = [&](std::string_view want) -> Result<std::string> {
    return invalid(std::string(info.name) + " must be " + std::string(want));
  };
  switch (info.type) {
    case SettingType::kString:
    case SettingType::kAddress:
    case SettingType::kEnum:
      if (const auto* s = node.as_string()) return s->get();
      return wrong("a string");
    case SettingType::kInteger:
      if (const auto* i = node.as_integer()) return std::to_string(i->get());
      if (!info.unset_word.empty()) {
        if (const auto* s = node.as_string(); s != nullptr && s->get() == info.unset_word) {
          return s->get();
        }
        return wrong("an integer or \"" + std::string(info.unset_word) + "\"");
      }
      return wrong("an integer");
    case SettingType::kDuration:
      if (const auto* i = node.as_integer()) {
        if (i->get() < 0) return wrong("at least 0, not " + std::to_string(i->get()));
        return std::to_string(i->get());
      }
      if (const auto* s = node.as_string()) return s->get();
      return wrong("an integer (milliseconds) or a string such as \"10s\"");
    case SettingType::kMode:
      if (const auto* s = node.as_string()) return s->get();
      if (const auto* i = node.as_integer()) {
        if ((i->flags() & toml::value_flags::format_as_octal) == toml::value_flags::none ||
            i->get() < 0) {
          return wrong("octal: write 0o660 or \"0660\", not " + std::to_string(i->get()));
        }
        char buf[32];
        std::snprintf(buf, sizeof buf, "0%llo", static_cast<unsigned long long>(i->get()));
        return std::string(buf);
      }
      return wrong("an octal mode: 0o660 or \"0660\"");
    case SettingType::kBool:
      if (const auto* b = node.as_boolean()) return std::string(b->get() ? "true" : "false");
      return wrong("true or false");
    case SettingType::kEndpoints:
    case SettingType::kAddresses:
      if (const auto* s = node.as_string()) return s->get();
      if (const auto* a = node.as_array()) {
        std::string joined;
        for (const toml::node& item : *a) {
          const auto* s = item.as_string();
          if (s == nullptr) return wrong("a string or an array of strings");
          joined += (joined.empty() ? "" : ",") + s->get();
        }
        return joined;
      }
      return wrong("a string or an array of strings");
  }
  return wrong("of a known type");
}

}  // namespace

Status read_toml(const std::string& path, const host::Environment& env, const TakeText& take) {
  Result<std::string> text = env.read_file(path);
  if (!text.is_ok()) return text.status();
  toml::parse_result parsed = toml::parse(text.value(), path);
  if (!parsed) {
    const toml::parse_error& err = parsed.error();
    return invalid(path + ":" + std::to_string(err.source().begin.line) +
                   ": not valid TOML: " + std::string(err.description()));
  }
  for (const auto& [key, node] : parsed.table()) {
    const std::string at = path + ":" + std::to_string(node.source().begin.line);
    const SettingInfo* e = find_setting(&SettingInfo::name, key.str());
    if (e == nullptr) {
      return invalid(at + ": unknown setting \"" + std::string(key.str()) +
                     "\" (snowidd --help-settings lists them)");
    }
    Result<std::string> t = toml_text(*e, node);
    if (!t.is_ok()) return invalid(at + ": " + t.status().message());
    if (Status s = take(*e, at, t.value()); !s.is_ok()) return s;
  }
  return Status::ok();
}

}  // namespace snowid::daemon
