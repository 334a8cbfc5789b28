// The etcd registry with faults injected into its requests: for tests of how
// it handles replies that never come.
#pragma once

#include <memory>

#include "gateway_client.h"
#include "snowid/etcd_registry.h"

namespace snowid::etcd {

// make_etcd_registry, with `fault_hook` consulted before every unary request
// (not before watch streams).
Result<std::unique_ptr<WorkerRegistry>> make_etcd_registry_with_faults(const Clock& clock,
                                                                       EtcdOptions options,
                                                                       FaultHook fault_hook);

}  // namespace snowid::etcd
