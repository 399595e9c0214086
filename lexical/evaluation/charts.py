"""Server-side charts of an evaluation (matplotlib to SVG, ``core.charts``).

* :func:`accuracy_chart_svg`: the layout of seed 004 Fig. 2: one panel per language, grouped
  bars (models on the x axis, one bar per setting: no rules, self-generated rules, rules from
  another generator, NMT), error bars = sd over runs, the frequency baseline as a dashed line.
* :func:`position_bias_svg`: App. Figs. 5–6: the share of answers at each option position,
  for concepts shown with ``size`` options, one group of bars per entry.

Only numbers and names go into the figures.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core import charts

__all__ = ["Bar", "Panel", "accuracy_chart_svg", "position_bias_svg"]

# One colour per setting, in the paper's order; "other" settings share a colour per generator.
SETTING_COLOURS = {"none": "#8faadc", "self": "#3465a4", "other": "#f57900", "translate": "#4e9a06"}
EXTRA_COLOURS = ("#cc0000", "#75507b", "#c4a000", "#06989a", "#555753")


@dataclass(frozen=True)
class Bar:
    model: str
    setting: str  # none | self | other | translate
    label: str  # the legend's name for the setting ("rules from gpt-4")
    mean: float  # 0–1
    sd: float


@dataclass(frozen=True)
class Panel:
    language: str
    bars: Sequence[Bar]
    baseline: float | None = None


def _colours(labels: Sequence[tuple[str, str]]) -> dict[str, str]:
    colours: dict[str, str] = {}
    extra = iter(EXTRA_COLOURS * 4)
    for setting, label in labels:
        if label in colours:
            continue
        used = set(colours.values())
        colour = SETTING_COLOURS.get(setting, "#555753")
        colours[label] = colour if colour not in used else next(extra)
    return colours


def accuracy_chart_svg(panels: Sequence[Panel]) -> bytes:
    count = max(1, len(panels))
    columns = min(3, count)
    rows = (count + columns - 1) // columns
    with charts.figure(4.2 * columns, 3.3 * rows + 0.6) as figure:
        axes_list = figure.subplots(rows, columns, squeeze=False).ravel()
        labels = list(dict.fromkeys((b.setting, b.label) for p in panels for b in p.bars))
        colours = _colours(labels)
        order = [label for _, label in labels]
        for axes, panel in zip(axes_list, panels, strict=False):
            models = list(dict.fromkeys(b.model for b in panel.bars))
            width = 0.8 / max(1, max(sum(b.model == m for b in panel.bars) for m in models))
            drawn: set[str] = set()
            for i, model in enumerate(models):
                # Each model's bars centred on its tick, in the legend's order of settings.
                own = sorted(
                    (b for b in panel.bars if b.model == model), key=lambda b: order.index(b.label)
                )
                for slot, bar in enumerate(own):
                    x = i + (slot - (len(own) - 1) / 2) * width
                    axes.bar(x, 100 * bar.mean, width * 0.95, yerr=100 * bar.sd, capsize=2,
                             color=colours[bar.label], error_kw={"elinewidth": 0.8},
                             label=None if bar.label in drawn else bar.label)  # fmt: skip
                    drawn.add(bar.label)
            if panel.baseline is not None:
                axes.axhline(100 * panel.baseline, color="#555753", linestyle="--", linewidth=1,
                             label="frequency baseline")  # fmt: skip
            axes.set_title(panel.language, loc="left")
            axes.set_xticks(range(len(models)), models, rotation=20, ha="right")
            axes.set_ylim(0, 100)
            axes.set_ylabel("accuracy (%)")
        for axes in axes_list[len(panels) :]:
            axes.set_visible(False)
        if not panels:
            axes_list[0].set_visible(True)
            charts.no_data(axes_list[0], "no answers yet")
        handles, names = [], []
        for axes in axes_list:
            for handle, name in zip(*axes.get_legend_handles_labels(), strict=True):
                if name not in names:
                    handles.append(handle)
                    names.append(name)
        figure.subplots_adjust(hspace=0.6, wspace=0.3)
        if handles:
            # Below the panels; the tight bounding box of the saved figure takes it in.
            figure.legend(
                handles,
                names,
                frameon=False,
                loc="upper center",
                bbox_to_anchor=(0.5, 0.0),
                ncol=min(5, len(names)),
                fontsize=9,
            )
        return charts.svg(figure)


def position_bias_svg(size: int, series: Sequence[tuple[str, Sequence[int]]]) -> bytes:
    """``series``: (entry, answers per position) for concepts shown with ``size`` options."""
    with charts.figure(6.0, 2.8) as figure:
        axes = figure.add_subplot()
        width = 0.8 / max(1, len(series))
        for i, (name, counts) in enumerate(series):
            total = sum(counts) or 1
            xs = [p + (i - (len(series) - 1) / 2) * width for p in range(size)]
            axes.bar(xs, [100 * c / total for c in counts], width * 0.95, label=name,
                     color=EXTRA_COLOURS[i % len(EXTRA_COLOURS)] if i >= 4 else
                     list(SETTING_COLOURS.values())[i])  # fmt: skip
        axes.axhline(100 / size, color="#555753", linestyle=":", linewidth=1, label="uniform")
        axes.set_xticks(range(size), [f"position {p + 1}" for p in range(size)])
        axes.set_ylabel("answers (%)")
        axes.set_title(f"Concepts with {size} variations", loc="left")
        if not series:
            charts.no_data(axes, "no answers")
        axes.legend(frameon=False, fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
        return charts.svg(figure)
