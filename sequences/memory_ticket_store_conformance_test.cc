// The conformance suite on snowid::testing::MemoryTicketStore, the fake that
// unit tests of the stores' users rely on.
#include <memory>

#include "snowid/testing/memory_ticket_store.h"
#include "ticket_store_conformance.h"

namespace snowid::sequences::conformance {
namespace {

class MemoryBackend final : public StoreBackend {
 public:
  Result<std::unique_ptr<TicketStore>> open(const Clock& clock, bool /*migrate*/) override {
    return std::unique_ptr<TicketStore>(
        std::make_unique<snowid::testing::MemoryTicketStore>(clock));
  }
  Result<std::string> query(const std::string& /*sql*/) override {
    return Status(Code::kFailedPrecondition, "the memory store runs no SQL");
  }
};

INSTANTIATE_TEST_SUITE_P(Memory, TicketStoreConformance,
                         ::testing::Values(BackendParam{
                             "Memory",
                             []() -> Result<std::unique_ptr<StoreBackend>> {
                               return std::unique_ptr<StoreBackend>(
                                   std::make_unique<MemoryBackend>());
                             }}),
                         backend_name);

}  // namespace
}  // namespace snowid::sequences::conformance
