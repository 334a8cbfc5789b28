// The whole public API of the snowid core library.
#pragma once

#include "snowid/fence.h"
#include "snowid/file_registry.h"
#include "snowid/generator.h"
#include "snowid/id_text.h"
#include "snowid/layout.h"
#include "snowid/layout_history.h"
#include "snowid/lease.h"
#include "snowid/lease_guard.h"
#include "snowid/lease_keeper.h"
#include "snowid/leased_generator.h"
#include "snowid/status.h"
#include "snowid/time.h"
