package dev.snowid;

import static dev.snowid.Vectors.list;
import static dev.snowid.Vectors.map;
import static dev.snowid.Vectors.num;
import static dev.snowid.Vectors.u64;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/** vectors/generator.json: scripts of clock moves and calls on a simulated clock. */
class GeneratorVectorsTest {
  /** Wall and monotonic readings in whole ms; a sleep of d moves both by exactly d. */
  static final class ScriptClock implements Clock {
    long wall;
    long mono;

    ScriptClock(long wall) {
      this.wall = wall;
    }

    @Override
    public long nowMs() {
      return wall;
    }

    @Override
    public long monoMs() {
      return mono;
    }

    @Override
    public void sleep(long ms) {
      wall += ms;
      mono += ms;
    }
  }

  /** A fence store in memory whose writes can be made to fail (storing nothing). */
  static final class MemoryFence implements FenceStore {
    boolean failing;
    Long value;

    MemoryFence(Long value) {
      this.value = value;
    }

    @Override
    public OptionalLong load() {
      return value == null ? OptionalLong.empty() : OptionalLong.of(value);
    }

    @Override
    public void store(long unixMs) {
      if (failing) {
        throw new IllegalStateException("storing the fence failed (injected)");
      }
      value = unixMs;
    }
  }

  private static Generator create(
      Map<String, Object> c,
      Layout layout,
      ScriptClock clock,
      MemoryFence fence,
      LeaseGuard lease) {
    Map<String, Object> o = map(c.get("options"));
    Generator.Builder b =
        Generator.builder()
            .layout(layout)
            .worker(num(o.get("region")), num(o.get("host")))
            .clock(clock)
            .randomStartBound((int) num(o.get("random_start_bound")))
            .maxBackwardMs(num(o.get("max_backward_ms")))
            .maxBorrowMs(num(o.get("max_borrow_ms")))
            .maxWaitMs(num(o.get("max_wait_ms")))
            .fenceWindowMs(num(o.get("fence_window_ms")));
    if (fence != null) {
      b.fenceStore(fence);
    }
    if (lease != null) {
      b.lease(lease);
    }
    if (o.get("not_before_ms") != null) {
      b.notBeforeMs(num(o.get("not_before_ms")));
    }
    if (o.get("wait_until_ms") != null) {
      b.waitUntilMs(num(o.get("wait_until_ms")));
    }
    if (o.get("continue_after_ms") != null) {
      b.continueAfterMs(num(o.get("continue_after_ms")));
    }
    return b.build();
  }

  private static Generator[] holder = new Generator[1];

  private static String createCode(
      Map<String, Object> c, Layout l, ScriptClock clock, MemoryFence fence, LeaseGuard lease) {
    try {
      holder[0] = create(c, l, clock, fence, lease);
      return "OK";
    } catch (SnowidException e) {
      holder[0] = null;
      return e.code().name();
    }
  }

  private static final List<String> ACTIONS = List.of("try_next", "next", "try_reserve", "reserve");
  private static final Set<String> CHECKS = Set.of("fence_ms", "healthy", "wall_ms");

  static void runCase(Map<String, Object> c) {
    Layout layout = Vectors.layout((String) c.get("layout"));
    Map<String, Object> o = map(c.get("options"));
    ScriptClock clock = new ScriptClock(num(c.get("start_wall_ms")));
    MemoryFence fence = null;
    if (o.get("fence") != null) {
      Object stored = map(o.get("fence")).get("stored_ms");
      fence = new MemoryFence(stored == null ? null : num(stored));
    }
    LeaseGuard lease = Boolean.TRUE.equals(o.get("lease")) ? new LeaseGuard() : null;
    assertEquals(c.get("create"), createCode(c, layout, clock, fence, lease), "creating");
    Generator g = holder[0];
    int n = 0;
    for (Map<String, Object> step : list(c, "steps")) {
      String where = "step " + n++ + ": " + Json.write(step);
      String action = ACTIONS.stream().filter(step::containsKey).findFirst().orElse(null);
      if (action != null) {
        Generator gen = g;
        int k = (int) num(step.get(action));
        boolean single = action.equals("try_next") || action.equals("next");
        int calls = single ? k : 1;
        java.util.function.Supplier<Generator.IdBatch> call =
            switch (action) {
              case "try_next" -> () -> new Generator.IdBatch(gen.tryNextId(), 1);
              case "next" -> () -> new Generator.IdBatch(gen.nextId(), 1);
              case "try_reserve" -> () -> gen.tryReserve(k);
              default -> () -> gen.reserve(k);
            };
        if (step.get("error") != null) {
          assertEquals(1, calls, where);
          try {
            call.get();
            fail(where + ": the call succeeded");
          } catch (SnowidException e) {
            assertEquals(step.get("error"), e.code().name(), where + ": " + e.getMessage());
            assertEquals(e.code().isRetryable(), e.isRetryable(), where);
            if (step.get("retry_after_ms") != null) {
              assertEquals(num(step.get("retry_after_ms")), e.retryAfterMs(), where);
            }
          }
        } else {
          List<Generator.IdBatch> got = new ArrayList<>();
          for (int i = 0; i < calls; i++) {
            try {
              got.add(call.get());
            } catch (SnowidException e) {
              fail(where + ": call " + i + ": " + e.getMessage());
            }
          }
          if (step.get("first_id") != null) {
            long first = u64(step.get("first_id"));
            if (step.get("count") != null) {
              assertEquals(
                  List.of(new Generator.IdBatch(first, (int) num(step.get("count")))), got, where);
            } else {
              for (int i = 0; i < got.size(); i++) {
                assertEquals(first + i, got.get(i).first(), where + ": call " + i);
              }
            }
          }
          if (step.get("id_min") != null) {
            for (Generator.IdBatch b : got) {
              assertTrue(
                  b.first() >= u64(step.get("id_min")) && b.first() <= u64(step.get("id_max")),
                  where + ": " + b.first());
            }
          }
        }
      } else if (step.containsKey("advance_ms")) {
        clock.wall += num(step.get("advance_ms"));
        clock.mono += num(step.get("advance_ms"));
      } else if (step.containsKey("set_wall_ms")) {
        clock.wall = num(step.get("set_wall_ms"));
      } else if (step.containsKey("advance_mono_ms")) {
        clock.mono += num(step.get("advance_mono_ms"));
      } else if (step.containsKey("lease_extend")) {
        assertNotNull(lease, where);
        Map<String, Object> e = map(step.get("lease_extend"));
        lease.extend(num(e.get("deadline_mono_ms")), num(e.get("high_water_ms")));
      } else if (step.containsKey("lease_lost")) {
        assertNotNull(lease, where);
        lease.markLost();
      } else if (step.containsKey("fence_fail")) {
        assertNotNull(fence, where);
        fence.failing = Boolean.TRUE.equals(step.get("fence_fail"));
      } else if (step.containsKey("close")) {
        g.close();
      } else if (step.containsKey("restart")) {
        assertEquals(step.get("create"), createCode(c, layout, clock, fence, lease), where);
        g = holder[0];
      } else if (!CHECKS.containsAll(step.keySet())) {
        fail("unknown step " + where);
      }
      if (step.containsKey("fence_ms")) {
        Object want = step.get("fence_ms");
        assertEquals(
            want == null ? null : num(want),
            fence == null ? null : fence.value,
            where + ": the stored fence");
      }
      if (step.containsKey("healthy")) {
        assertEquals(step.get("healthy"), g.healthy(), where + ": health");
      }
      if (step.containsKey("wall_ms")) {
        assertEquals(num(step.get("wall_ms")), clock.wall, where + ": the wall clock");
      }
    }
  }

  @TestFactory
  Stream<DynamicTest> generatorVectors() {
    return list(Vectors.load("generator.json"), "cases").stream()
        .map(c -> DynamicTest.dynamicTest((String) c.get("name"), () -> runCase(c)));
  }
}
