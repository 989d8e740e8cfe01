"""bench.perf's output: the side-by-side table, the notes, the PNG chart. Pure but for the chart file."""

from __future__ import annotations

from pathlib import Path

from bench.perf.variants import BY_NAME, DEBUGGABLE, VARIANTS
from scheduler_build.spec import Spec


def notes(spec: Spec, labels: dict[str, str], chosen: tuple[str, ...] | list[str] = ()) -> list[str]:
    """What each variant is, said once with the figures."""
    shown = [v for v in VARIANTS if v.name in chosen] or [v for v in VARIANTS if v.default]
    out = ["; ".join(f"{v.name}: {v.note}" for v in shown) + ". Variants of one harness run the same binary, the "
           "spec's patches included; the batching column is what each run's scheduler logged."]
    if any(BY_NAME[v].harness == DEBUGGABLE for v in chosen if v in BY_NAME):
        d = spec.debuggable
        out.append(f"the recorder records pods labelled {d.pod_label or '(any: every pod)'} with topNodes {d.top_nodes}, "
                   f"rejectedNodes {d.rejected_nodes}. Annotation bytes: its keys and values per recorded pod, read "
                   "after each run")
    if labels:
        out.append("upstream's pods carry no label, so the spec's plugin and the extender pass them through; the "
                   f"*Labelled workload is upstream's first chosen workload with pods labelled {', '.join(sorted(labels))} "
                   "(their opt-in), so both do real work there")
    if spec.extenders:
        out.append(f"the spec's own extenders ({len(spec.extenders)}) are not started by the harness and are left out")
    return out


def _fmt(value: float | None, digits: int = 1) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def markdown(res: dict) -> str:
    lines = [f"scheduler_perf ({res['kubernetes']}), spec {res['spec']}, median of {res['repeats']} interleaved run(s) per cell:",
             "",
             "| workload | variant | batching | pods/s median | min | max | / vanilla | attempt p50 ms | attempt p99 ms | duration s |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for label, rows in res["summary"].items():
        for variant, row in rows.items():
            pps, att = row["pods_per_second"], row["attempt_ms"]
            lines.append(f"| {label} | {variant} | {row.get('batching', '')} | {_fmt(pps.get('median'))} | {_fmt(pps.get('min'))} | {_fmt(pps.get('max'))} | "
                         f"{_fmt(row['ratio_to_vanilla'], 2)} | {_fmt(att.get('Perc50'), 2)} | {_fmt(att.get('Perc99'), 2)} | "
                         f"{_fmt(row.get('duration_s', {}).get('median'), 2)} |")
    if any(not row["pods_per_second"] for rows in res["summary"].values() for row in rows.values()):
        lines += ["", "- an empty pods/s cell: the measured pods were scheduled in under a second, and upstream samples "
                  "throughput once a second; that row's ratio is of scheduling durations (use 500Nodes or larger)"]
    lines.append("")
    for label in res["summary"]:
        threshold = res["thresholds"].get(label)
        lines.append(f"- {label}: upstream's threshold at {res['kubernetes']} is "
                     + (f"{threshold:g} pods/s" if threshold else "none (the workload carries no threshold)")
                     + " (for upstream's CI hardware: the ratio to vanilla is the figure that counts here)")
    lines += (_plugin_lines(res) + _extender_lines(res) + _debuggable_lines(res) + _pgo_lines(res)
              + [f"- {n}" for n in res.get("notes", [])])
    return "\n".join(lines) + "\n"


def _plugin_lines(res: dict) -> list[str]:
    """Where scheduling CPU went, per cell, from the median run's profile (--profile); upstream's per-call
    plugin histogram is not shown: its lowest bucket holds nearly every call, so it says nothing."""
    from bench.perf import profile as cpu

    out = []
    for label, rows in res["summary"].items():
        for variant, row in rows.items():
            if row.get("profile"):
                out.append(cpu.line(label, variant, row["profile"]))
    merged = (res.get("profiles") or {}).get("merged") or {}
    if merged:
        out.append("- merged profiles (`build --pgo` input): " + ", ".join(f"{v} {p}" for v, p in merged.items()))
    if not out and res.get("plugin_names"):
        out.append("- where the spec's plugins spend scheduling CPU: run with --profile (docs/bench-perf.md)")
    return out


def _extender_lines(res: dict) -> list[str]:
    """The extender variant's scheduled-attempt durations beside vanilla's."""
    out = []
    for label, rows in res["summary"].items():
        if "extender" in rows and "vanilla" in rows:
            ext, van = rows["extender"]["attempt_ms"], rows["vanilla"]["attempt_ms"]
            out.append(f"- {label} extender: scheduled attempts p50 {ext['Perc50']:.2f} ms, p99 {ext['Perc99']:.2f} ms; "
                       f"vanilla's {van['Perc50']:.2f} / {van['Perc99']:.2f} ms (upstream's histogram buckets; the "
                       "extender's filter and prioritize calls are inside each attempt)")
    return out


def _debuggable_lines(res: dict) -> list[str]:
    """The recorder's cost (debuggable / spec of pods/s medians) and the annotation bytes per recorded pod."""
    out = []
    for label, rows in res["summary"].items():
        row = rows.get("debuggable")
        if not row or row.get("ratio_to_base") is None:
            continue
        size = row.get("annotation_bytes") or {}
        recorded = (f"; {size['median']:.0f} bytes of annotations per recorded pod (median, max {size['max']}), "
                    f"{', '.join(map(str, size['recorded_pods']))} pods recorded per run") if size else \
            "; no pod recorded (none opted in)"
        out.append(f"- {label} debuggable / spec: {row['ratio_to_base']:.2f} (pods/s medians){recorded}")
    return out


def _pgo_lines(res: dict) -> list[str]:
    """What PGO gains: each *-pgo variant against its baseline, with every run's figure, and the profile."""
    out = []
    for label, rows in res["summary"].items():
        for variant, row in rows.items():
            known = BY_NAME.get(variant)
            base = known.baseline if known is not None and known.pgo else ""
            if not base or base not in rows:
                continue
            ratio = row.get("ratio_to_base", row.get("ratio_to_vanilla"))
            runs = lambda r: ", ".join(f"{x:.1f}" for x in r.get("runs", []))  # noqa: E731
            out.append(f"- {label} {variant} / {base}: {_fmt(ratio, 3)} (pods/s medians; runs {runs(row)} vs "
                       f"{runs(rows[base])})")
    profile = res.get("pgo_profile")
    if out and profile:
        out.append(f"- the *-pgo harness was compiled with -pgo from {profile['path']} (sha256 {profile['sha256'][:16]}...)")
    return out


def chart(res: dict, out: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = list(res["summary"])
    chosen = res["variants"]
    width = 0.8 / max(len(chosen), 1)
    fig, ax = plt.subplots(figsize=(max(5.0, 2.6 * len(labels)), 3.8), dpi=100)
    for i, variant in enumerate(chosen):
        rows = [res["summary"][lb].get(variant) for lb in labels]
        xs = [k + (i - (len(chosen) - 1) / 2) * width for k in range(len(labels))]
        pps = [(r or {}).get("pods_per_second") or {} for r in rows]
        meds = [p.get("median", 0.0) for p in pps]
        err = [[m - p.get("min", 0.0) for m, p in zip(meds, pps)], [p.get("max", 0.0) - m for m, p in zip(meds, pps)]]
        bars = ax.bar(xs, meds, width, yerr=err, capsize=3, label=variant, color=BY_NAME[variant].colour if variant in BY_NAME else None)
        for bar, value in zip(bars, meds):
            ax.annotate(f"{value:.0f}", (bar.get_x() + bar.get_width() / 2, value), ha="center", va="bottom", fontsize=8)
    ax.set_xticks(range(len(labels)), labels, fontsize=8)
    ax.set_ylabel("pods/s (median, min-max)")
    ax.set_title(f"scheduler_perf {res['kubernetes']}: {res['repeats']} interleaved run(s)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, metadata={"Software": None})
    plt.close(fig)
    return out
