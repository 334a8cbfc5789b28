"""The scripts of generator.json: actions only; generator_model fills in what they must give."""

from generator_model import run_case

E = 1767225600000  # the snowid layout's epoch, 2026-01-01
E10 = 1704067200000  # custom_10ms's epoch, 2024-01-01
SNOWID_END = 3966248855552  # the snowid layout's end of life


def opts(**kw):
    o = {
        "region": 1,
        "host": 17,
        "random_start_bound": 0,
        "max_backward_ms": 100,
        "max_borrow_ms": 0,
        "fence_window_ms": 1000,
    }
    o.update(kw)
    o.setdefault("max_wait_ms", o["max_backward_ms"] + 50)
    return o


def case(name, description, steps, start, layout="snowid", **options):
    return {
        "name": name,
        "description": description,
        "layout": layout,
        "options": opts(**options),
        "start_wall_ms": start,
        "create": None,
        "steps": steps,
    }


# An expectation the model fills in; the value here is a placeholder.
CHECK = None


def scripts():
    return [
        case(
            "sequence_exhausted_then_next_tick",
            "4,096 ids in one tick, then SEQUENCE_EXHAUSTED until the next; never wraps",
            [
                {"try_next": 4096},
                {"try_next": 1},
                {"try_next": 1},
                {"advance_ms": 1},
                {"try_next": 1},
            ],
            E + 1000,
        ),
        case(
            "next_waits_for_the_next_tick",
            "next() after a used-up tick sleeps until the next one",
            [
                {"try_next": 4096},
                {"next": 1, "wall_ms": CHECK},
                {"next": 4095},
                {"next": 1, "wall_ms": CHECK},
            ],
            E + 1000,
        ),
        case(
            "the_first_tick_after_creation",
            "a generator starts as if its initial tick were used up: the first id is in the "
            "clock's tick, unless that is the epoch's tick 0",
            [{"try_next": 1}, {"advance_ms": 1}, {"try_next": 1}],
            E,
        ),
        case(
            "small_step_back_continues_the_last_tick",
            "50 ms back: the last tick is used until its sequence runs out, then CLOCK_BEHIND "
            "with the time until the clock passes it; next() waits it out",
            [
                {"try_next": 10},
                {"set_wall_ms": E + 950},
                {"try_next": 4086},
                {"try_next": 1},
                {"next": 1, "wall_ms": CHECK, "healthy": CHECK},
            ],
            E + 1000,
        ),
        case(
            "step_back_of_exactly_max_backward",
            "a step back of exactly max_backward is still waited out",
            [
                {"try_next": 1},
                {"set_wall_ms": E + 900},
                {"try_next": 1},
                {"try_next": 4094},
                {"try_next": 1, "healthy": CHECK},
            ],
            E + 1000,
        ),
        case(
            "step_back_beyond_max_backward",
            "101 ms back: CLOCK_MOVED_BACK, unhealthy for good, UNHEALTHY afterwards whatever "
            "the clock does",
            [
                {"try_next": 1},
                {"set_wall_ms": E + 899},
                {"try_next": 1, "healthy": CHECK},
                {"set_wall_ms": E + 2000},
                {"try_next": 1},
                {"next": 1},
            ],
            E + 1000,
        ),
        case(
            "next_gives_up_beyond_max_wait",
            "a wait longer than max_wait is given up at once, without sleeping",
            [
                {"try_next": 1},
                {"set_wall_ms": E + 900},
                {"try_next": 4095},
                {"next": 1, "wall_ms": CHECK},
            ],
            E + 1000,
            max_wait_ms=50,
        ),
        case(
            "next_waits_a_step_back_within_max_wait",
            "the same step back waited out by next() within max_wait",
            [
                {"try_next": 1},
                {"set_wall_ms": E + 900},
                {"try_next": 4095},
                {"next": 1, "wall_ms": CHECK},
            ],
            E + 1000,
            max_wait_ms=150,
        ),
        case(
            "creating_before_the_epoch",
            "a clock before the layout's epoch: the layout check refuses",
            [],
            E - 1,
        ),
        case(
            "clock_before_the_epoch_after_ids",
            "ids were issued: a clock before the epoch within max_backward is OUT_OF_RANGE, "
            "beyond it a backward step",
            [
                {"try_next": 1},
                {"set_wall_ms": E - 10},
                {"try_next": 1, "healthy": CHECK},
                {"set_wall_ms": E - 200},
                {"try_next": 1, "healthy": CHECK},
            ],
            E + 5,
        ),
        case(
            "not_before",
            "no id before not_before (a layout era's cut-over): OUT_OF_RANGE until then",
            [{"try_next": 1}, {"next": 1}, {"advance_ms": 4000}, {"try_next": 1}],
            E + 1000,
            not_before_ms=E + 5000,
        ),
        case(
            "end_of_life",
            "the last ticks of the layout, then OUT_OF_RANGE",
            [
                {"try_next": 1},
                {"advance_ms": 2},
                {"try_next": 1},
                {"advance_ms": 1},
                {"try_next": 1},
                {"next": 1},
            ],
            SNOWID_END - 3,
        ),
        case("creating_at_the_end_of_life", "the layout check refuses", [], SNOWID_END),
        case(
            "borrowing_ahead",
            "with max_borrow 2 ms, used-up ticks move on up to 2 ms ahead of the clock, then "
            "SEQUENCE_EXHAUSTED until the clock catches up",
            [
                {"try_next": 4096},
                {"try_next": 4096},
                {"try_next": 4096},
                {"try_next": 1},
                {"advance_ms": 1},
                {"try_next": 1},
            ],
            E + 1000,
            max_borrow_ms=2,
        ),
        case(
            "borrowing_widens_the_backward_allowance",
            "the last tick may be max_borrow ahead of the clock: behind it by max_backward + "
            "max_borrow is waited out, by more is a backward step",
            [
                {"try_next": 4096},
                {"try_next": 4096},
                {"try_next": 4096},
                {"set_wall_ms": E + 898},
                {"try_next": 1, "healthy": CHECK},
                {"set_wall_ms": E + 897},
                {"try_next": 1, "healthy": CHECK},
            ],
            E + 1000,
            max_borrow_ms=2,
        ),
        case(
            "reserve_batches",
            "reserve(n) gives consecutive ids of one tick, at most what is left of it",
            [
                {"try_reserve": 100},
                {"try_reserve": 5000},
                {"try_reserve": 1},
                {"reserve": 10, "wall_ms": CHECK},
            ],
            E + 1000,
        ),
        case(
            "ten_ms_ticks",
            "a 10 ms unit: ticks of 8,192 ids and retry hints to the next tick's start",
            [
                {"try_next": 8192},
                {"try_next": 1},
                {"advance_ms": 6},
                {"try_next": 1},
                {"advance_ms": 1},
                {"try_next": 1},
            ],
            E10 + 10003,
            layout="custom_10ms",
            region=5,
            host=200,
        ),
        case(
            "random_start",
            "the default random start: each tick's first sequence is below 16",
            [
                {"try_next": 1},
                {"advance_ms": 1},
                {"try_next": 1},
                {"advance_ms": 7},
                {"try_next": 1},
            ],
            E + 1000,
            random_start_bound=16,
        ),
        case(
            "wait_until_at_a_tick_start",
            "wait_until: CLOCK_BEHIND with the time left, then ids from its tick",
            [
                {"try_next": 1},
                {"next": 1, "wall_ms": CHECK},
                {"set_wall_ms": E + 950},
                {"try_next": 1},
            ],
            E + 990,
            wait_until_ms=E + 1000,
        ),
        case(
            "wait_until_inside_a_tick",
            "10 ms ticks: the first tick used is the first that starts at or after wait_until",
            [
                {"try_next": 1},
                {"advance_ms": 2},
                {"try_next": 1},
                {"advance_ms": 5},
                {"try_next": 1},
            ],
            E10 + 10003,
            layout="custom_10ms",
            wait_until_ms=E10 + 10005,
        ),
        case(
            "wait_until_beyond_max_wait",
            "a wait_until further than max_wait: next() gives up at once",
            [{"next": 1, "wall_ms": CHECK}, {"set_wall_ms": E + 2000}, {"try_next": 1}],
            E + 1000,
            wait_until_ms=E + 2000,
        ),
        case(
            "wait_until_past_the_end_of_life",
            "no tick starts at or after it: OUT_OF_RANGE",
            [{"try_next": 1}],
            E + 1000,
            wait_until_ms=SNOWID_END + 5,
        ),
        case(
            "continue_after_a_replaced_generator",
            "continue_after: no id in that tick or before; a clock behind it within "
            "max_backward waits",
            [
                {"try_next": 1},
                {"advance_ms": 10},
                {"try_next": 1},
                {"advance_ms": 1},
                {"try_next": 1},
            ],
            E + 990,
            continue_after_ms=E + 1000,
        ),
        case(
            "continue_after_beyond_max_backward",
            "a clock behind continue_after by more than max_backward went back for real",
            [{"try_next": 1, "healthy": CHECK}],
            E + 899,
            continue_after_ms=E + 1000,
        ),
        case(
            "lease_deadline",
            "a guard permits nothing until extended, then ids while the monotonic clock is "
            "before the deadline: allowed just before it, refused at and after it",
            [
                {"try_next": 1},
                {"lease_extend": {"deadline_mono_ms": 8000, "high_water_ms": E + 9000}},
                {"try_next": 1},
                {"advance_mono_ms": 7999},
                {"try_next": 1},
                {"advance_mono_ms": 1},
                {"try_next": 1},
                {"next": 1},
                {"lease_extend": {"deadline_mono_ms": 11000, "high_water_ms": E + 12000}},
                {"try_next": 1},
            ],
            E + 1000,
            lease=True,
        ),
        case(
            "lease_mark",
            "ids whose tick starts at or before the mark are allowed; after it LEASE_UNCERTAIN "
            "although the deadline is far",
            [
                {"lease_extend": {"deadline_mono_ms": 60000, "high_water_ms": E + 1500}},
                {"try_next": 1},
                {"set_wall_ms": E + 1500},
                {"try_next": 1},
                {"set_wall_ms": E + 1501},
                {"try_next": 1},
                {"lease_extend": {"deadline_mono_ms": 50000, "high_water_ms": E + 1400}},
                {"try_next": 1},
                {"lease_extend": {"deadline_mono_ms": 60000, "high_water_ms": E + 1501}},
                {"try_next": 1},
            ],
            E + 1000,
            lease=True,
        ),
        case(
            "lease_mark_and_borrowing",
            "a borrowed tick past the mark is refused, though the clock is not past it",
            [
                {"lease_extend": {"deadline_mono_ms": 60000, "high_water_ms": E + 1000}},
                {"try_next": 4096},
                {"try_next": 1},
                {"try_reserve": 10},
            ],
            E + 1000,
            lease=True,
            max_borrow_ms=1,
        ),
        case(
            "lease_lost",
            "LEASE_LOST for good once the guard is marked lost; extending changes nothing",
            [
                {"lease_extend": {"deadline_mono_ms": 60000, "high_water_ms": E + 60000}},
                {"try_next": 1},
                {"lease_lost": True},
                {"try_next": 1},
                {"lease_extend": {"deadline_mono_ms": 90000, "high_water_ms": E + 90000}},
                {"try_next": 1},
                {"healthy": CHECK},
            ],
            E + 1000,
            lease=True,
        ),
        case(
            "lease_lost_while_waiting_for_wait_until",
            "LEASE_LOST also before wait_until is reached",
            [{"try_next": 1}, {"lease_lost": True}, {"try_next": 1}],
            E + 1000,
            lease=True,
            wait_until_ms=E + 1100,
        ),
        case(
            "fence_written_ahead",
            "a fence is stored fence_window ahead before the first id past the stored one",
            [
                {"try_next": 1, "fence_ms": CHECK},
                {"advance_ms": 999},
                {"try_next": 1, "fence_ms": CHECK},
                {"advance_ms": 1},
                {"try_next": 1, "fence_ms": CHECK},
                {"advance_ms": 1},
                {"try_next": 1, "fence_ms": CHECK},
            ],
            E + 1000,
            fence={},
        ),
        case(
            "fence_restart_within_the_window",
            "a crash, then a restart behind the fence by less than window + max_backward: "
            "waits until the clock passes the fence, which counts as used up",
            [
                {"try_next": 1},
                {"advance_ms": 1001},
                {"try_next": 1, "fence_ms": CHECK},
                {"restart": True, "create": CHECK},
                {"try_next": 1},
                {"set_wall_ms": E + 3001},
                {"try_next": 1},
                {"advance_ms": 1},
                {"try_next": 1, "fence_ms": CHECK},
            ],
            E + 1000,
            fence={},
        ),
        case(
            "fence_restart_at_the_allowance",
            "stored fence E+3001; a clock 1,100 ms behind it (window + max_backward) starts",
            [{"try_next": 1}, {"next": 1, "wall_ms": CHECK}],
            E + 1901,
            fence={"stored_ms": E + 3001},
        ),
        case(
            "fence_restart_beyond_the_allowance",
            "stored fence E+3001; a clock 1,101 ms behind it went back for real",
            [],
            E + 1900,
            fence={"stored_ms": E + 3001},
        ),
        case(
            "fence_restart_with_borrowing",
            "max_borrow widens the restart allowance too",
            [{"try_next": 1}],
            E + 1900,
            fence={"stored_ms": E + 3001},
            max_borrow_ms=1,
        ),
        case(
            "fence_restart_past_the_fence",
            "a clock past the stored fence issues at once",
            [{"try_next": 1, "fence_ms": CHECK}],
            E + 3002,
            fence={"stored_ms": E + 3001},
        ),
        case(
            "fence_close_records_the_last_tick",
            "close() stops issuing and stores the exact last tick; a restart then waits no "
            "more than a tick",
            [
                {"try_next": 1},
                {"advance_ms": 5},
                {"try_next": 1},
                {"close": True, "fence_ms": CHECK},
                {"try_next": 1},
                {"restart": True, "create": CHECK},
                {"try_next": 1},
                {"advance_ms": 1},
                {"try_next": 1},
            ],
            E + 1000,
            fence={},
        ),
        case(
            "fence_write_failure",
            "while the fence cannot be stored: UNAVAILABLE and nothing past the old fence; ids "
            "within it go on",
            [
                {"fence_fail": True},
                {"try_next": 1, "fence_ms": CHECK},
                {"fence_fail": False},
                {"try_next": 1, "fence_ms": CHECK},
                {"fence_fail": True},
                {"advance_ms": 1000},
                {"try_next": 1},
                {"advance_ms": 1},
                {"try_next": 1, "fence_ms": CHECK},
                {"set_wall_ms": E + 1990},
                {"try_next": 1},
                {"fence_fail": False},
                {"set_wall_ms": E + 2001},
                {"try_next": 1, "fence_ms": CHECK},
            ],
            E + 1000,
            fence={},
        ),
        case(
            "invalid_random_start_bound",
            "over a quarter of the sequence capacity",
            [],
            E + 1000,
            random_start_bound=1025,
        ),
        case(
            "largest_random_start_bound",
            "a quarter of the sequence capacity",
            [{"try_next": 1}],
            E + 1000,
            random_start_bound=1024,
        ),
        case("invalid_fence_window", "below 10 ms", [], E + 1000, fence_window_ms=9),
        case("invalid_max_borrow", "above 1 second", [], E + 1000, max_borrow_ms=1001),
        case("invalid_max_backward", "negative", [], E + 1000, max_backward_ms=-1, max_wait_ms=50),
        case("invalid_worker", "a host outside the layout's 8 bits", [], E + 1000, host=256),
    ]


def generator_cases(layouts):
    out = []
    for c in scripts():
        layout = layouts[c["layout"]]
        h = c["options"]["host"]
        if h >= 2 ** layout.width_of("host") or c["options"]["region"] >= 2 ** layout.width_of(
            "region"
        ):
            c["create"] = "INVALID_ARGUMENT"
            c["steps"] = []
            out.append(c)
            continue
        out.append(run_case(layout, c))
    return out
