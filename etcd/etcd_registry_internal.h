// The etcd registry with faults injected into its requests, for tests of how
// it handles replies that never come; and its checked gateway options.
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

// The gateway options make_etcd_registry uses for `options` (endpoints
// normalised), after the same checks: kInvalidArgument naming the option out
// of bounds. For what shares the registry's etcd, such as the skew monitor's
// store (skew_store.h).
Result<GatewayOptions> gateway_options_for(EtcdOptions options);

}  // namespace snowid::etcd
