"""A model of the generator's documented rules (docs/generator.md), for generator.json.

Written from the document's policy table, its fence and lease sections and the code table, on
a simulated clock of whole milliseconds. It is the reference the vectors are computed with, not
an implementation to use: one thread, no compare-and-swap, no speed.
"""

RETRYABLE = {"SEQUENCE_EXHAUSTED", "CLOCK_BEHIND", "UNAVAILABLE", "LEASE_UNCERTAIN"}
# Retry hints the document gives for codes that do not wait for the clock.
LEASE_RETRY_MS = 10
FENCE_RETRY_MS = 1

DEFAULTS = {
    "random_start_bound": 16,
    "max_backward_ms": 100,
    "max_borrow_ms": 0,
    "fence_window_ms": 1000,
}


class Refusal(Exception):
    def __init__(self, code, retry_after_ms=None):
        super().__init__(code)
        self.code = code
        self.retry_after_ms = retry_after_ms


def floor_div(a, b):
    return a // b


def ceil_div(a, b):
    return -((-a) // b)


class Clock:
    def __init__(self, wall_ms):
        self.wall = wall_ms
        self.mono = 0

    def sleep(self, ms):
        self.wall += ms
        self.mono += ms


class FenceStore:
    def __init__(self, stored_ms=None):
        self.stored = stored_ms
        self.failing = False

    def store(self, ms):
        if self.failing:
            return False
        self.stored = ms
        return True


class Guard:
    def __init__(self):
        self.deadline = None  # permits nothing until extended
        self.high_water = None
        self.lost = False

    def permits(self, mono, id_ms):
        return (
            not self.lost
            and self.deadline is not None
            and mono < self.deadline
            and id_ms <= self.high_water
        )


class Generator:
    """create() raises Refusal with the creation error."""

    def __init__(self, layout, options, clock, fence, guard):
        self.layout = layout
        self.o = options
        self.clock = clock
        self.fence = fence
        self.guard = guard
        unit = layout.unit_ms
        self.unit = unit
        self.epoch = layout.epoch_ms
        self.seq_bits = layout.width_of("sequence")
        self.seq_max = 2**self.seq_bits - 1
        self.max_ticks = 2 ** layout.time["width"] - 1
        self.bound = options["random_start_bound"]
        self.backward = floor_div(options["max_backward_ms"], unit)
        self.borrow = floor_div(options["max_borrow_ms"], unit)
        self.window = ceil_div(options["fence_window_ms"], unit)
        self.max_wait = options["max_wait_ms"]
        self.min_ms = max(self.epoch, options.get("not_before_ms", self.epoch))
        self.gate = self.min_ms
        self.wait_ticks = None
        wu = options.get("wait_until_ms")
        if wu is not None and wu > self.min_ms:
            # Ids carry the start of their tick: the first tick starting at or after it.
            self.wait_ticks = ceil_div(wu - self.epoch, unit)
            self.gate = (
                float("inf")
                if self.wait_ticks > self.max_ticks
                else self.epoch + self.wait_ticks * unit
            )
        self.stopped = False
        self.unhealthy = False
        self.check_create()

    def ticks(self, ms):
        return floor_div(ms - self.epoch, self.unit)

    def tick_ms(self, t):
        return self.epoch + t * self.unit

    def check_create(self):
        o = self.o
        if not 0 <= o["max_backward_ms"] <= 3_600_000:
            raise Refusal("INVALID_ARGUMENT")
        if not 0 <= o["max_borrow_ms"] <= 1000:
            raise Refusal("INVALID_ARGUMENT")
        if o["random_start_bound"] > (self.seq_max + 1) // 4:
            raise Refusal("INVALID_ARGUMENT")
        if not 10 <= o["fence_window_ms"] <= 3_600_000:
            raise Refusal("INVALID_ARGUMENT")
        now = self.clock.wall
        if self.epoch > now:
            raise Refusal("INVALID_ARGUMENT")
        if self.layout.end_of_life_ms <= now:
            raise Refusal("OUT_OF_RANGE")
        initial = 0
        self.fence_ticks = float("inf")
        if self.fence is not None:
            self.fence_ticks = -1
            if self.fence.stored is not None:
                f = min(self.ticks(self.fence.stored), self.max_ticks)
                if f - self.ticks(now) > self.window + self.backward + self.borrow:
                    raise Refusal("FAILED_PRECONDITION")
                if f >= 0:
                    initial = f
                    self.fence_ticks = f
        self.restart_floor = initial
        ca = o.get("continue_after_ms")
        if ca is not None and ca > self.epoch:
            initial = max(initial, min(self.ticks(ca), self.max_ticks))
        # Starts used up at the initial tick: nothing is issued in it or before it.
        self.last = initial
        self.seq = self.seq_max

    def compose(self, t, seq):
        lay = self.layout
        region = lay.field("region")
        host = lay.field("host")
        v = t << lay.time["shift"]
        if region:
            v |= self.o["region"] << region["shift"]
        if host:
            v |= self.o["host"] << host["shift"]
        return v | seq

    def stopped_code(self):
        return "UNHEALTHY" if self.unhealthy else "FAILED_PRECONDITION"

    def moved_back(self):
        self.unhealthy = True
        self.stopped = True
        raise Refusal("CLOCK_MOVED_BACK")

    def gate_passed(self, now):
        return now >= self.min_ms and (self.wait_ticks is None or self.last >= self.wait_ticks)

    def before_gate(self, now):
        if now < self.min_ms:
            if self.stopped:
                raise Refusal(self.stopped_code())
            if self.last > self.restart_floor and self.last - self.ticks(now) > (
                self.backward + self.borrow
            ):
                self.moved_back()
            raise Refusal("OUT_OF_RANGE")
        if self.stopped:
            raise Refusal(self.stopped_code())
        if self.guard is not None and self.guard.lost:
            raise Refusal("LEASE_LOST")
        if self.wait_ticks is not None and self.wait_ticks > self.max_ticks:
            raise Refusal("OUT_OF_RANGE")
        raise Refusal("CLOCK_BEHIND", self.gate - now)

    def attempt(self, n):
        """(first id, count) or Refusal. The first sequence of a tick is 0 here; cases with
        a random start check a range instead (see first_of_tick)."""
        now = self.clock.wall
        if now < self.gate and not self.gate_passed(now):
            self.before_gate(now)
        if self.stopped:
            raise Refusal(self.stopped_code())
        tnow = self.ticks(now)
        if tnow > self.last:
            t, first = tnow, 0
        else:
            behind = self.last - tnow > self.borrow
            if behind:
                floor_allow = (
                    self.backward
                    if self.last > self.restart_floor
                    else (self.window + self.backward)
                )
                if self.last - tnow > floor_allow + self.borrow:
                    self.moved_back()
            if self.seq < self.seq_max:
                t, first = self.last, self.seq + 1
            elif self.last + 1 - tnow <= self.borrow:
                t, first = self.last + 1, 0
            else:
                wait = self.tick_ms(self.last + 1 - self.borrow) - now
                raise Refusal("CLOCK_BEHIND" if behind else "SEQUENCE_EXHAUSTED", wait)
        if t > self.max_ticks:
            raise Refusal("OUT_OF_RANGE")
        if self.guard is not None and not self.guard.permits(self.clock.mono, self.tick_ms(t)):
            if self.guard.lost:
                raise Refusal("LEASE_LOST")
            raise Refusal("LEASE_UNCERTAIN", LEASE_RETRY_MS)
        if t > self.fence_ticks:
            fence = min(t + self.window, self.max_ticks)
            if not self.fence.store(self.tick_ms(fence)):
                raise Refusal("UNAVAILABLE", FENCE_RETRY_MS)
            self.fence_ticks = fence
        count = min(n, self.seq_max - first + 1)
        self.last, self.seq = t, first + count - 1
        return self.compose(t, first), count

    def waiting(self, n):
        try:
            return self.attempt(n)
        except Refusal as r:
            if r.code not in ("SEQUENCE_EXHAUSTED", "CLOCK_BEHIND"):
                raise
            refusal = r
        start = self.clock.mono
        while True:
            left = self.max_wait - (self.clock.mono - start)
            if left < 0 or refusal.retry_after_ms > left:
                raise refusal
            self.clock.sleep(refusal.retry_after_ms)
            try:
                return self.attempt(n)
            except Refusal as r:
                if r.code not in ("SEQUENCE_EXHAUSTED", "CLOCK_BEHIND"):
                    raise
                refusal = r

    def close(self):
        self.stopped = True
        if self.fence is None:
            return
        if self.last >= self.fence_ticks:
            return
        if self.fence.store(self.tick_ms(self.last)):
            self.fence_ticks = self.last


def run_case(layout, case):
    """Fills in the expectations of `case` (its actions given) by running the model."""
    options = dict(case["options"])
    clock = Clock(case["start_wall_ms"])
    fence = None
    if "fence" in options:
        fence = FenceStore(options["fence"].get("stored_ms"))
    guard = Guard() if options.get("lease") else None
    exact = options["random_start_bound"] == 0

    def create():
        try:
            return Generator(layout, options, clock, fence, guard), "OK"
        except Refusal as r:
            return None, r.code

    gen, outcome = create()
    case["create"] = outcome
    if gen is None:
        case["steps"] = []
        return case
    for step in case["steps"]:
        if "advance_ms" in step:
            clock.sleep(step["advance_ms"])
        elif "set_wall_ms" in step:
            clock.wall = step["set_wall_ms"]
        elif "advance_mono_ms" in step:
            clock.mono += step["advance_mono_ms"]
        elif "lease_extend" in step:
            e = step["lease_extend"]
            if not guard.lost:
                # The guard never moves either bound back.
                d, h = e["deadline_mono_ms"], e["high_water_ms"]
                guard.deadline = d if guard.deadline is None else max(guard.deadline, d)
                guard.high_water = h if guard.high_water is None else max(guard.high_water, h)
        elif "lease_lost" in step:
            guard.lost = True
        elif "fence_fail" in step:
            fence.failing = step["fence_fail"]
        elif "close" in step:
            gen.close()
        elif "restart" in step:
            gen, outcome = create()
            step["create"] = outcome
        elif any(k in step for k in ("try_next", "next", "try_reserve", "reserve")):
            call(gen, step, exact)
        if "fence" in options and "fence_ms" in step:
            step["fence_ms"] = fence.stored
        if "healthy" in step:
            step["healthy"] = not gen.unhealthy
        if "wall_ms" in step:
            step["wall_ms"] = clock.wall
    return case


def call(gen, step, exact):
    for key in ("try_next", "next", "try_reserve", "reserve"):
        if key in step:
            break
    else:
        raise ValueError("unknown step %r" % step)
    waits = key in ("next", "reserve")
    batch = key.endswith("reserve")
    calls = 1 if batch else step[key]
    n = step[key] if batch else 1
    first = None
    for i in range(calls):
        try:
            id_, count = gen.waiting(n) if waits else gen.attempt(n)
        except Refusal as r:
            if calls != 1:
                raise ValueError("a refusal in a step of %d calls: %r" % (calls, step))
            step["error"] = r.code
            if r.code in RETRYABLE:
                step["retry_after_ms"] = r.retry_after_ms
            return
        if first is None:
            first = id_
        elif id_ != first + i:
            raise ValueError("ids of one step must be consecutive: %r" % step)
        if batch:
            step["count"] = count
    if exact:
        step["first_id"] = str(first)
    else:
        # The first id of a tick has a random sequence below the bound.
        if calls != 1:
            raise ValueError("one call per step with a random start: %r" % step)
        step["id_min"] = str(first)
        step["id_max"] = str(first + gen.bound - 1)
