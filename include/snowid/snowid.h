// The whole public API of the snowid core library (snowid::core). The etcd
// registry (etcd_registry.h), the SQLite and PostgreSQL ticket stores and
// snowid::testing are separate targets with headers of their own.
#pragma once

#include "snowid/etcd_endpoints.h"
#include "snowid/fence.h"
#include "snowid/file_registry.h"
#include "snowid/generator.h"
#include "snowid/id_text.h"
#include "snowid/issue_observer.h"
#include "snowid/layout.h"
#include "snowid/layout_history.h"
#include "snowid/lease.h"
#include "snowid/lease_guard.h"
#include "snowid/lease_keeper.h"
#include "snowid/lease_rules.h"
#include "snowid/leased_generator.h"
#include "snowid/sequence_buffer.h"
#include "snowid/status.h"
#include "snowid/ticket_store.h"
#include "snowid/time.h"
