"""timeline.png: ids per second and refusal windows per daemon, with the faults marked.

matplotlib is the one dependency outside the standard library (Debian's python3-matplotlib,
installed by scripts/install-deps); without it the run still checks and reports, and says so.
"""


def plot_timeline(path, fleet, an, faults, windows):
    """Draws the PNG; returns True, or a sentence saying why it was not drawn."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "not drawn: matplotlib is missing (apt-get install python3-matplotlib)"
    n = len(fleet.slots)
    end = an.run_end or fleet.now()
    seconds = max(int(end), 1)  # whole seconds only: the last, partial one would read as a drop
    fig, axes = plt.subplots(n, 1, figsize=(14, 1.6 * n + 1.2), sharex=True, squeeze=False)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    kinds = sorted({f.kind for f in faults})
    kind_color = {k: colors[i % len(colors)] for i, k in enumerate(kinds)}
    for ax, slot in zip(axes[:, 0], fleet.slots, strict=True):
        per_s = [0] * seconds
        for q in fleet.puller_of(slot).pulls:
            if q.word is None and int(q.received) < seconds:
                per_s[int(q.received)] += q.n
        ax.plot(range(seconds), per_s, color="black", linewidth=0.8)
        for f in faults:
            if f.target == slot.name or f.target == f"region {slot.region}":
                ax.axvspan(f.start, f.end or f.start, color=kind_color[f.kind], alpha=0.15)
        for a, b, _ in windows[slot.name]:
            ax.axvspan(a, b, ymin=0.0, ymax=0.12, color="red", linewidth=0)
            ax.axvline(f.start, color=kind_color[f.kind], linewidth=0.6, linestyle="--")
        ax.set_ylabel(f"{slot.name}\nids/s", fontsize=8)
        ax.tick_params(labelsize=7)
    top = axes[0, 0]
    for f in faults:
        top.annotate(
            f.kind,
            (f.start, 1.0),
            xycoords=("data", "axes fraction"),
            rotation=60,
            fontsize=6,
            color=kind_color[f.kind],
            va="bottom",
        )
    axes[-1, 0].set_xlabel(
        "seconds since the fleet started; red bar: the daemon refused or did not answer; "
        "shaded: a fault on this daemon or its region; dashed: every fault's start"
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True
