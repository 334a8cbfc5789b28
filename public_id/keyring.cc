// The keyring file (docs/public-id.md section 5):
//
//   snowid-public-id-keys 1
//   policy by_time
//   # slot state   not_before            name   key (64 hex digits)
//   1      primary 2027-01-01T00:00:00Z  k2027  <hex>
//
// Blank lines and lines starting with "#" are ignored; fields are separated by
// spaces or tabs. The policy line is optional (by_time) and comes before the
// slots.
#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "aes_ecb.h"
#include "snowid/ff1.h"
#include "snowid/public_id_keyring.h"

namespace snowid {
namespace {

constexpr std::string_view kFingerprintLabel = "snowid key fingerprint";
constexpr std::string_view kSealingLabel = "snowid/public-id/v1/sealing key";

// Wipes its bytes however it is left.
struct SecretBytes {
  std::array<std::uint8_t, 32> bytes{};
  ~SecretBytes() { OPENSSL_cleanse(bytes.data(), bytes.size()); }
};

bool hmac_sha256(std::span<const std::uint8_t> key, std::string_view label,
                 std::uint8_t* out32) noexcept {
  unsigned int len = 0;
  return HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
              reinterpret_cast<const unsigned char*>(label.data()), label.size(), out32,
              &len) != nullptr &&
         len == 32;
}

std::vector<std::string_view> fields_of(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t at = 0;
  while (at < line.size()) {
    while (at < line.size() && (line[at] == ' ' || line[at] == '\t')) ++at;
    std::size_t end = at;
    while (end < line.size() && line[end] != ' ' && line[end] != '\t') ++end;
    if (end > at) out.push_back(line.substr(at, end - at));
    at = end;
  }
  return out;
}

int hex_value(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool valid_name(std::string_view name) noexcept {
  if (name.empty() || name.size() > 32) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (!alnum && (i == 0 || (c != '-' && c != '_' && c != '.'))) return false;
  }
  return true;
}

std::optional<KeyState> state_of(std::string_view word) noexcept {
  for (KeyState s :
       {KeyState::kPrimary, KeyState::kActive, KeyState::kDecrypt, KeyState::kRetired}) {
    if (key_state_name(s) == word) return s;
  }
  return std::nullopt;
}

}  // namespace

std::string_view key_state_name(KeyState state) noexcept {
  switch (state) {
    case KeyState::kPrimary:
      return "primary";
    case KeyState::kActive:
      return "active";
    case KeyState::kDecrypt:
      return "decrypt";
    case KeyState::kRetired:
      return "retired";
  }
  return "?";
}

std::string_view key_policy_name(KeyPolicy policy) noexcept {
  return policy == KeyPolicy::kNewest ? "newest" : "by_time";
}

PublicIdKeyring::PublicIdKeyring() = default;
PublicIdKeyring::~PublicIdKeyring() = default;
PublicIdKeyring::PublicIdKeyring(PublicIdKeyring&&) noexcept = default;
PublicIdKeyring& PublicIdKeyring::operator=(PublicIdKeyring&&) noexcept = default;

Result<PublicIdKeyring> PublicIdKeyring::parse(std::string_view text) {
  PublicIdKeyring ring;
  std::size_t line_no = 0;
  bool header_seen = false;
  bool slot_seen = false;
  bool policy_seen = false;
  int slots_given = 0;
  std::vector<std::string> fingerprints;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(at, end - at);
    at = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const auto refuse = [&](const std::string& why) {
      return Status(Code::kInvalidArgument, "keyring line " + std::to_string(line_no) + ": " + why);
    };
    const std::vector<std::string_view> f = fields_of(line);
    if (f.empty() || f[0].front() == '#') continue;
    if (!header_seen) {
      if (f.size() != 2 || f[0] != "snowid-public-id-keys") {
        return refuse("the file must start with \"" + std::string(kHeader) + "\"");
      }
      if (f[1] != "1") {
        return refuse("the keyring format version is not known (only 1)");
      }
      header_seen = true;
      continue;
    }
    if (f[0] == "policy") {
      if (policy_seen || slot_seen) {
        return refuse("one policy line, before the slots");
      }
      if (f.size() != 2 || (f[1] != "by_time" && f[1] != "newest")) {
        return refuse("policy is \"by_time\" or \"newest\"");
      }
      ring.policy_ = f[1] == "newest" ? KeyPolicy::kNewest : KeyPolicy::kByTime;
      policy_seen = true;
      continue;
    }
    slot_seen = true;
    // No field of a slot line is echoed: a key written in the wrong field, or
    // split in two by a space, would be printed.
    if (f.size() != 5) {
      return refuse("a slot line has 5 fields: slot state not_before name key");
    }
    if (++slots_given > kSlots) return refuse("more than 4 slots");
    if (f[0].size() != 1 || f[0][0] < '0' || f[0][0] > '3') {
      return refuse("the slot is not 0, 1, 2 or 3");
    }
    const int slot = f[0][0] - '0';
    Slot& s = ring.slots_[static_cast<std::size_t>(slot)];
    if (s.info) return refuse("slot " + std::to_string(slot) + " is given twice");
    const std::optional<KeyState> state = state_of(f[1]);
    if (!state) return refuse("the state is not primary, active, decrypt or retired");
    Result<WallTime> not_before = parse_iso8601(f[2]);
    if (!not_before.is_ok()) return refuse("not_before is not an RFC 3339 time or a date");
    if (!valid_name(f[3])) {
      return refuse(
          "the name must be 1 to 32 of a-z, 0-9, '-', '_', '.', starting with a letter "
          "or digit");
    }
    for (int other = 0; other < kSlots; ++other) {
      const auto& o = ring.slots_[static_cast<std::size_t>(other)].info;
      if (o && o->name == f[3]) {
        return refuse("the name is given twice (also slot " + std::to_string(other) + ")");
      }
    }
    if (f[4].size() != 64) return refuse("the key must be 64 hex digits (AES-256)");
    SecretBytes key;
    for (std::size_t i = 0; i < 32; ++i) {
      const int h = hex_value(f[4][2 * i]);
      const int l = hex_value(f[4][2 * i + 1]);
      if (h < 0 || l < 0) return refuse("the key must be 64 hex digits (AES-256)");
      key.bytes[i] = static_cast<std::uint8_t>(h << 4 | l);
    }
    SecretBytes mac;
    if (!hmac_sha256(key.bytes, kFingerprintLabel, mac.bytes.data())) {
      return Status(Code::kUnavailable, "libcrypto: HMAC failed");
    }
    static constexpr char kHex[] = "0123456789abcdef";
    std::string fingerprint;
    for (int i = 0; i < 4; ++i) {
      fingerprint += kHex[mac.bytes[static_cast<std::size_t>(i)] >> 4];
      fingerprint += kHex[mac.bytes[static_cast<std::size_t>(i)] & 15];
    }
    for (const std::string& other : fingerprints) {
      if (other == fingerprint) return refuse("the same key is in two slots");
    }
    fingerprints.push_back(fingerprint);

    SecretBytes sealing;
    if (!hmac_sha256(key.bytes, kSealingLabel, sealing.bytes.data())) {
      return Status(Code::kUnavailable, "libcrypto: HMAC failed");
    }
    Result<Ff1Binary63> ff1 = Ff1Binary63::create(key.bytes);
    if (!ff1.is_ok()) return ff1.status();
    Result<std::unique_ptr<internal::AesEcb>> seal = internal::AesEcb::create(sealing.bytes, false);
    if (!seal.is_ok()) return seal.status();
    Result<std::unique_ptr<internal::AesEcb>> unseal =
        internal::AesEcb::create(sealing.bytes, true);
    if (!unseal.is_ok()) return unseal.status();
    s.compact = std::make_unique<Ff1Binary63>(std::move(ff1).value());
    s.seal = std::move(seal).value();
    s.unseal = std::move(unseal).value();
    s.info = KeySlotInfo{slot, *state, not_before.value(), std::string(f[3]), fingerprint};
    if (*state == KeyState::kPrimary) {
      if (ring.primary_ >= 0) return refuse("a second primary slot (only one may wrap new ids)");
      ring.primary_ = slot;
    }
  }
  if (!header_seen) {
    return Status(Code::kInvalidArgument,
                  "keyring: empty; it must start with \"" + std::string(kHeader) + "\"");
  }
  if (ring.primary_ < 0) return Status(Code::kInvalidArgument, "keyring: no primary slot");
  return ring;
}

Result<PublicIdKeyring> PublicIdKeyring::load(const std::string& path) {
  // The mode is read from the descriptor that is read, so the file checked
  // is the file parsed. A keyring is small: more than 64 KiB is not one.
  constexpr std::size_t kMaxBytes = 64 * 1024;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    return Status(err == ENOENT ? Code::kNotFound : Code::kUnavailable,
                  "keyring " + path + ": " + std::strerror(err));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return Status(Code::kUnavailable, "keyring " + path + ": " + std::strerror(err));
  }
  if ((st.st_mode & 077) != 0) {
    ::close(fd);
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return Status(Code::kFailedPrecondition,
                  "keyring " + path + " has mode " + mode +
                      ": group and others must have no access (chmod 600)");
  }
  std::string content(kMaxBytes + 1, '\0');
  std::size_t got = 0;
  while (got < content.size()) {
    const ssize_t n = ::read(fd, content.data() + got, content.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      OPENSSL_cleanse(content.data(), content.size());
      return Status(Code::kUnavailable, "keyring " + path + ": " + std::strerror(err));
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  if (got > kMaxBytes) {
    OPENSSL_cleanse(content.data(), content.size());
    return Status(Code::kInvalidArgument, "keyring " + path + " is larger than 64 KiB");
  }
  Result<PublicIdKeyring> ring = parse(std::string_view(content.data(), got));
  OPENSSL_cleanse(content.data(), content.size());
  if (!ring.is_ok()) {
    return Status(ring.status().code(), "keyring " + path + ": " + ring.status().message());
  }
  return ring;
}

Result<std::string> new_keyring_line(int slot, KeyState state, WallTime not_before,
                                     std::string_view name) {
  if (slot < 0 || slot >= PublicIdKeyring::kSlots) {
    return Status(Code::kInvalidArgument, "slot must be 0 to 3");
  }
  if (!valid_name(name)) {
    return Status(Code::kInvalidArgument,
                  "key name: 1 to 32 of a-z, 0-9, '-', '_', '.', starting with a letter or digit");
  }
  SecretBytes key;
  if (RAND_priv_bytes(key.bytes.data(), static_cast<int>(key.bytes.size())) != 1) {
    return Status(Code::kUnavailable, "libcrypto: no random bytes");
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string line = std::to_string(slot) + " " + std::string(key_state_name(state)) + " " +
                     format_iso8601(not_before) + " " + std::string(name) + " ";
  for (std::uint8_t b : key.bytes) {
    line += kHex[b >> 4];
    line += kHex[b & 15];
  }
  return line;
}

}  // namespace snowid
