// What the C++ driver holds: a LeasedGenerator on an etcd registry, both on
// the driver's offset clock. For the harness's own test there is also a
// deliberately broken holder (`skip_mark`) that ignores the previous holders'
// mark; it must never be used outside that test.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "offset_clock.h"
#include "snowid/etcd_registry.h"
#include "snowid/generator.h"
#include "snowid/lease_keeper.h"
#include "snowid/leased_generator.h"

namespace snowid::polyglot {

struct HolderSettings {
  EtcdOptions etcd;
  std::uint32_t region = 0;
  std::optional<std::uint32_t> host;
  LeaseTiming timing;
  Duration retry_every = std::chrono::milliseconds(200);
  Duration reacquire_every = std::chrono::milliseconds(200);
  // Broken on purpose: judge quarantine on the unshifted system clock and
  // issue without waiting until past the previous holders' mark.
  bool skip_mark = false;
};

struct HolderState {
  std::string lease_state;  // HELD, UNCERTAIN, LOST, RELEASED
  bool ready = false;
  bool healthy = false;
  WorkerId worker;
  std::uint64_t reacquisitions = 0;
};

class Holder {
 public:
  static Result<std::unique_ptr<Holder>> start(OffsetClock& clock, HolderSettings settings);
  ~Holder();

  WorkerId worker() const noexcept;
  // Up to `count` ids, waiting as the generator's next() does. Ids issued
  // before a refusal are appended to `out` and kept.
  Status next(std::uint32_t count, std::vector<std::uint64_t>& out);
  HolderState state() const;
  Status close();

 private:
  Holder() = default;
  std::unique_ptr<WorkerRegistry> registry_;
  std::unique_ptr<LeasedGenerator> leased_;
  // skip_mark only.
  std::unique_ptr<LeaseKeeper> keeper_;
  std::unique_ptr<Generator> plain_;
  std::optional<std::uint64_t> last_id_;
};

}  // namespace snowid::polyglot
