package dev.snowid;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/** A leased generator's listener that keeps the types of its events, for tests to wait on. */
final class EventLog implements Consumer<LeasedGenerator.Event> {
  private final List<String> types = new ArrayList<>();

  @Override
  public synchronized void accept(LeasedGenerator.Event e) {
    types.add(e.type());
    notifyAll();
  }

  synchronized List<String> types() {
    return List.copyOf(types);
  }

  /** True once an event of {@code type} came, false if none did within {@code ms}. */
  synchronized boolean await(String type, long ms) throws InterruptedException {
    long end = System.nanoTime() + ms * 1_000_000;
    while (!types.contains(type)) {
      long left = (end - System.nanoTime()) / 1_000_000;
      if (left <= 0) {
        return false;
      }
      wait(left);
    }
    return true;
  }
}
