#include "public_id_setup.h"

#include <memory>

namespace snowid::daemon {

#if SNOWID_DAEMON_PUBLIC_IDS
Status load_public_ids(PublicIds& ids, const std::string& path, bool reload, Logger& log) {
  const Status s = reload ? ids.reload(path) : ids.load(path);
  if (!s.is_ok()) return s;
  const std::shared_ptr<const PublicIdCodec> codec = ids.current();
  if (codec == nullptr) {
    log.info("public id keys", {{"state", "off"}});
  } else {
    const PublicIdKeyring& keys = codec->keys();
    log.info("public id keys",
             {{"state", reload ? "reloaded" : "loaded"},
              {"path", path},
              {"policy", key_policy_name(keys.policy())},
              {"primary_slot", keys.primary_slot()},
              {"primary_fingerprint", keys.slot(keys.primary_slot())->fingerprint},
              {"slots", describe_keyring(keys)}});
  }
  return s;
}

void reload_public_ids(PublicIds& ids, const std::string& path, Logger& log) {
  if (const Status s = load_public_ids(ids, path, true, log); !s.is_ok()) {
    const std::shared_ptr<const PublicIdCodec> kept = ids.current();
    log.error("public id keys reload failed",
              {{"code", code_name(s.code())},
               {"error", s.message()},
               {"kept", kept == nullptr ? std::string("off") : describe_keyring(kept->keys())}});
  }
}

void set_unwrap_callers(PublicIds& ids, const std::string& word) {
  UnwrapCallers who = UnwrapCallers::kLocal;
  if (parse_unwrap_callers(word, who)) ids.set_unwrap_callers(who);
}
const PublicIdPort* public_id_port(const PublicIds& ids) { return &ids; }
std::function<PublicIdKeyringStats()> keyring_stats_reader(const PublicIds& ids) {
  return [&ids] { return keyring_stats(ids); };
}
#else
// Built without public ids: nothing to load, and a keyring is refused.
void set_unwrap_callers(PublicIds&, const std::string&) {}
const PublicIdPort* public_id_port(const PublicIds&) { return nullptr; }
std::function<PublicIdKeyringStats()> keyring_stats_reader(const PublicIds&) { return {}; }
Status load_public_ids(PublicIds&, const std::string& path, bool, Logger&) {
  if (path.empty()) return Status::ok();
  return Status(Code::kInvalidArgument,
                "this snowidd was built without public ids; leave it empty");
}
void reload_public_ids(PublicIds& ids, const std::string& path, Logger& log) {
  if (const Status s = load_public_ids(ids, path, true, log); !s.is_ok()) {
    log.error("public id keys reload failed",
              {{"code", code_name(s.code())}, {"error", s.message()}});
  }
}
#endif

}  // namespace snowid::daemon
