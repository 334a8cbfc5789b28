// The daemon's public-id keyring from its settings: loaded at start (a
// refusal is a configuration mistake, exit 2), re-read on every SIGHUP (a
// refusal keeps the keyring in use), and who may unwrap. Each state change
// is logged by fingerprint, never a key byte.
//
// A snowidd built without public ids (no OpenSSL) has an empty PublicIds,
// refuses a keyring file, and gives the command table no port.
#pragma once

#include <functional>
#include <string>

#include "id_service.h"
#include "log.h"
#include "public_id_port.h"
#include "snowid/status.h"

#if SNOWID_DAEMON_PUBLIC_IDS
#include "public_ids.h"
#else
#include "snowid/layout.h"
#include "snowid/time.h"
namespace snowid::daemon {
struct PublicIds {
  PublicIds(const Layout&, const Clock&) {}
};
}  // namespace snowid::daemon
#endif

namespace snowid::daemon {

// Puts the keyring file at `path` in use (empty: off) and logs what is now
// in use. The library's refusal otherwise (the path first in its message).
Status load_public_ids(PublicIds& ids, const std::string& path, bool reload, Logger& log);
// SIGHUP: as load_public_ids(); a file that does not load is logged and
// leaves the keyring in use.
void reload_public_ids(PublicIds& ids, const std::string& path, Logger& log);
// public_id_unwrap, from now on; the settings checked the word.
void set_unwrap_callers(PublicIds& ids, const std::string& word);
// What the command table uses, or null when built without public ids.
const PublicIdPort* public_id_port(const PublicIds& ids);
// Where IdService::snapshot() reads the keyring's figures; empty when built
// without public ids. `ids` must outlive the reader.
std::function<PublicIdKeyringStats()> keyring_stats_reader(const PublicIds& ids);

}  // namespace snowid::daemon
