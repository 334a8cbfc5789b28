#include "cpp_holder.h"

#include <unistd.h>

#include <algorithm>

namespace snowid::polyglot {
namespace {

HolderInfo holder_info(const Clock& clock) {
  HolderInfo info;
  info.host = "polyglot-cpp";
  info.pid = static_cast<std::int64_t>(::getpid());
  info.started = clock.wall_now();
  return info;
}

}  // namespace

Result<std::unique_ptr<Holder>> Holder::start(OffsetClock& clock, HolderSettings settings) {
  std::unique_ptr<Holder> h(new Holder());
  // The broken holder's registry reads the unshifted clock, so a host whose
  // clock is behind still finds the predecessor's id out of quarantine.
  const Clock& registry_clock = settings.skip_mark ? system_clock() : clock;
  auto registry = make_etcd_registry(registry_clock, settings.etcd);
  if (!registry.is_ok()) return registry.status();
  h->registry_ = std::move(registry.value());

  LeaseKeeperOptions lease;
  lease.region = settings.region;
  lease.host = settings.host;
  lease.holder = holder_info(clock);
  lease.timing = settings.timing;
  lease.retry_every = std::min(settings.retry_every, settings.timing.renew_every);

  if (!settings.skip_mark) {
    LeasedGeneratorOptions o;
    o.lease = std::move(lease);
    o.reacquire_every = settings.reacquire_every;
    auto created = LeasedGenerator::create(clock, *h->registry_, std::move(o));
    if (!created.is_ok()) return created.status();
    h->leased_ = std::move(created.value());
    return h;
  }

  auto keeper = LeaseKeeper::acquire(clock, *h->registry_, std::move(lease));
  if (!keeper.is_ok()) return keeper.status();
  h->keeper_ = std::move(keeper.value());
  GeneratorOptions go;
  go.worker = h->keeper_->worker();
  go.lease = h->keeper_->guard();
  // No wait_until: the defect under test.
  auto gen = Generator::create(clock, std::move(go));
  if (!gen.is_ok()) {
    (void)h->keeper_->release(std::nullopt);
    return gen.status();
  }
  h->plain_ = std::move(gen.value());
  h->keeper_->start();
  return h;
}

Holder::~Holder() {
  if (leased_) (void)leased_->close();
  if (plain_) (void)close();
}

WorkerId Holder::worker() const noexcept { return leased_ ? leased_->worker() : plain_->worker(); }

Status Holder::next(std::uint32_t count, std::vector<std::uint64_t>& out) {
  while (count > 0) {
    const IdBatch b = leased_ ? leased_->reserve(count) : plain_->reserve(count);
    if (!b.ok()) {
      std::string msg = "refused after " + std::to_string(out.size()) + " ids";
      if (b.retry_after > Duration::zero()) {
        msg += "; retry after " +
               std::to_string(std::chrono::ceil<std::chrono::milliseconds>(b.retry_after).count()) +
               "ms";
      }
      return Status(b.code, msg);
    }
    for (std::uint32_t i = 0; i < b.count; ++i) out.push_back(b.first + i);
    last_id_ = b.first + b.count - 1;
    count -= b.count;
  }
  return Status::ok();
}

HolderState Holder::state() const {
  HolderState s;
  if (leased_) {
    s.lease_state = std::string(lease_state_name(leased_->lease_state()));
    s.ready = leased_->ready();
    s.healthy = leased_->health().is_ok();
    s.worker = leased_->worker();
    s.reacquisitions = leased_->reacquisitions();
  } else {
    s.lease_state = std::string(lease_state_name(keeper_->state()));
    s.healthy = plain_->healthy();
    s.ready = s.healthy && keeper_->state() == LeaseState::kHeld;
    s.worker = plain_->worker();
  }
  return s;
}

Status Holder::close() {
  if (leased_) return leased_->close();
  if (!plain_) return Status(Code::kFailedPrecondition, "closed");
  Status s = plain_->close();
  std::optional<WallTime> last;
  if (last_id_) {
    auto d = plain_->layout().decode(*last_id_);
    if (d.is_ok()) last = d.value().time;
  }
  const Status r = keeper_->release(last);
  plain_.reset();
  return s.is_ok() ? r : s;
}

}  // namespace snowid::polyglot
