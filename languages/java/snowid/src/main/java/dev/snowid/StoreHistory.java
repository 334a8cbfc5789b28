package dev.snowid;

import java.util.HashMap;
import java.util.Map;

/**
 * What one registry has seen of etcd's store (docs/protocol.md section 9): a reply from another
 * cluster, a revision lower than one already seen, a mark lower than one this process stored. A
 * loss noticed here is pending until a store record that says so is written. Thread-safe.
 */
final class StoreHistory {
  private long clusterId;
  private long revision;
  private String known = "";
  private final Map<String, Long> marks = new HashMap<>();
  private String pendingLoss;

  /** Notes the header of a linearizable range or transaction; returns why the store changed. */
  synchronized String observe(EtcdGateway.Header h) {
    long cluster = 0;
    if (h.clusterId().matches("[0-9]{1,20}")) {
      cluster = Long.parseUnsignedLong(h.clusterId());
    }
    String why = null;
    if (cluster != 0 && clusterId != 0 && cluster != clusterId) {
      why =
          "etcd answered as another cluster (id "
              + Long.toUnsignedString(cluster)
              + ", was "
              + Long.toUnsignedString(clusterId)
              + ")";
      revision = 0;
    } else if (h.revision() != 0 && h.revision() < revision) {
      why = "etcd's revision went back from " + revision + " to " + h.revision();
      revision = 0;
    }
    if (cluster != 0) {
      clusterId = cluster;
    }
    if (h.revision() > revision) {
      revision = h.revision();
    }
    return why;
  }

  synchronized String incarnation() {
    return known;
  }

  synchronized void adopt(String incarnation) {
    known = incarnation;
  }

  synchronized void storedMark(String grant, long highWaterMs) {
    marks.merge(grant, highWaterMs, Math::max);
  }

  /** Why the mark read back for a grant shows lost writes (absent, or 1 ms or more lower). */
  synchronized String checkMark(String grant, Long readMs) {
    Long stored = marks.get(grant);
    if (stored == null) {
      return null;
    }
    if (readMs == null) {
      return "a mark this process stored has vanished";
    }
    if (readMs + 1 <= stored) {
      return "a mark this process stored went back from "
          + Layout.formatInstant(stored)
          + " to "
          + Layout.formatInstant(readMs);
    }
    return null;
  }

  synchronized void forget(String grant) {
    marks.remove(grant);
  }

  synchronized void setPending(String reason) {
    if (pendingLoss == null) {
      pendingLoss = reason;
    }
  }

  synchronized boolean hasPending() {
    return pendingLoss != null;
  }

  synchronized String takePending() {
    String why = pendingLoss;
    pendingLoss = null;
    return why;
  }
}
