package dev.snowid;

import java.util.OptionalLong;

/** Where a generator keeps its time fence (docs/protocol.md section 12). */
public interface FenceStore {
  /** The stored fence in Unix ms, or empty when none was ever stored; DATA_LOSS if unreadable. */
  OptionalLong load();

  /** Stores the fence durably before returning; throws when it could not. */
  void store(long unixMs);
}
