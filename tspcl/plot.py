"""Pictures: a tour over its cities, and best length (or gap) against time.

Drawing needs matplotlib (the optional extra ``tspcl[plot]``); it is imported only when
a picture is drawn, so importing this module costs nothing without it, and a missing
matplotlib is a :class:`~tspcl.errors.UsageError` that says how to install it.  Figures
are made with matplotlib's object API (``matplotlib.figure.Figure``, no pyplot), so no
display and no global backend are involved.

The picture's format comes from the file's suffix (:data:`FORMATS`).  A picture is drawn
in memory and then written like every other output (:mod:`tspcl.output`): a temporary
file beside the target renamed onto it, so a failure leaves no partial file and an old
file as it was; a picture never replaces one of its inputs.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .errors import UsageError
from .instance import Instance
from .output import Target, output_target, same_file, write_outputs
from .tsplib import RunLog

FORMATS = (".png", ".svg", ".pdf")
INSTALL_HINT = "pip install 'tspcl[plot]'"
PNG_DPI = 150
TOUR_INCHES = (8.0, 8.0)
CURVE_INCHES = (8.0, 5.0)
MAX_DOTTED = 5000          # cities drawn as dots up to this many; beyond, the tour alone
LOG_TIME_SPAN = 100.0      # a time axis spanning more than this ratio is logarithmic
TOUR_GID = "tour"          # SVG ids of the drawn elements (the tests count them)
CITIES_GID = "cities"
CURVE_GID = "curve-"       # + the curve's index


@dataclass(frozen=True)
class Series:
    """One labelled curve against time: ``values`` at ``seconds`` (same length).
    ``steps``: a best-so-far line (each value holds until the next); otherwise
    separate points (e.g. one per run)."""

    label: str
    seconds: np.ndarray
    values: np.ndarray
    steps: bool = True


def available() -> bool:
    """Whether matplotlib can be imported (pictures can be drawn)."""
    try:
        matplotlib_figure()
    except UsageError:
        return False
    return True


def figure_target(path: str, inputs: tuple[str, ...] = ()) -> Target:
    """The checked output target of a picture: UsageError for a suffix other than
    :data:`FORMATS` or a path that names one of ``inputs`` (files read to draw it);
    OutputError for a file that cannot be created (see :func:`tspcl.output.output_target`)."""
    fmt = Path(path).suffix.lower()
    if fmt not in FORMATS:
        raise UsageError(f"-o {path}: a picture's name must end in {', '.join(FORMATS)} "
                         "(the suffix picks the format)")
    target = output_target(path, "-o")
    for other in inputs:
        if other and other != "-" and not other.startswith("<") and same_file(target, other):
            raise UsageError(f"-o {path}: that is {other}, an input the picture is drawn "
                             "from; give another name")
    return target


def plot_tour(inst: Instance, order: np.ndarray, path: str, title: str | None = None) -> int:
    """Draw the closed tour ``order`` (0-based cities) of ``inst`` into ``path`` and
    return the number of edges drawn (n).

    Positions are the problem's x and y (a 3-D problem seen from above; GEO's latitude
    up and longitude across), else its DISPLAY_DATA_SECTION.  The tour is one closed
    line (one path for all n edges: fast to draw and small to store for 100,000+
    cities); cities are dots up to :data:`MAX_DOTTED` of them.  The default title says
    the name, the number of cities and the exact length."""
    xy = inst.planar_coords
    if xy is None:
        raise UsageError(f"{inst.name} has no coordinates to draw (EXPLICIT without "
                         "DISPLAY_DATA_SECTION)")
    try:
        length = inst.tour_length(order)
    except ValueError as e:
        raise UsageError(f"not a tour of {inst.name}: {e}") from None
    target = figure_target(path, (inst.source,))
    if inst.weight_type == "GEO":
        xy = xy[:, ::-1]
    closed = xy[np.append(order, order[:1])]
    fig = matplotlib_figure()(figsize=TOUR_INCHES)
    ax = fig.add_subplot()
    width = 1.0 if inst.n <= 1000 else 0.5 if inst.n <= 10_000 else 0.25
    ax.plot(closed[:, 0], closed[:, 1], linewidth=width, color="C0", gid=TOUR_GID)
    if inst.n <= MAX_DOTTED:
        ax.plot(xy[:, 0], xy[:, 1], linestyle="none", marker="o", color="C3",
                markersize=3.0 if inst.n <= 200 else 1.0, gid=CITIES_GID)
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_title(title if title is not None else
                 f"{inst.name}: {inst.n} cities, length {length}")
    _save(fig, target)
    return inst.n


def plot_curves(logs: list[tuple[str, RunLog]], path: str, optimum: int | None = None) -> int:
    """Draw each log's best length against seconds (a step line) into ``path``, labelled
    as given; with ``optimum`` the y axis is the gap in % instead.  Logs without progress
    lines are left out (UsageError if all are); returns the number of curves drawn."""
    series = [Series(label, np.array([p[0] for p in log.progress], float),
                     _gaps(np.array([p[2] for p in log.progress], float), optimum))
              for label, log in logs if log.progress]
    if not series:
        raise UsageError("the logs have no progress lines: nothing to draw")
    names = sorted({log.name for _, log in logs if log.name})
    ylabel = f"gap % (optimum {optimum})" if optimum else "best tour length"
    return plot_series(series, path, ylabel,
                       f"{', '.join(names) or 'runs'}: best tour against time")


def plot_series(series: list[Series], path: str, ylabel: str, title: str) -> int:
    """Draw the series against seconds into ``path``; the time axis is logarithmic when
    it spans more than :data:`LOG_TIME_SPAN` (times at 0 are drawn at the first positive
    time).  Returns the number of series drawn."""
    target = figure_target(path)
    positive = [s.seconds[s.seconds > 0] for s in series]
    first = min((float(p.min()) for p in positive if p.size), default=0.0)
    last = max((float(p.max()) for p in positive if p.size), default=0.0)
    logarithmic = first > 0 and last / first > LOG_TIME_SPAN
    fig = matplotlib_figure()(figsize=CURVE_INCHES)
    ax = fig.add_subplot()
    for i, s in enumerate(series):
        seconds = np.maximum(s.seconds, first) if logarithmic else s.seconds
        if s.steps:
            ax.plot(seconds, s.values, drawstyle="steps-post", label=s.label,
                    marker="o" if len(seconds) == 1 else None, gid=f"{CURVE_GID}{i}")
        else:
            ax.plot(seconds, s.values, linestyle="none", marker="o", label=s.label,
                    gid=f"{CURVE_GID}{i}")
    if logarithmic:
        ax.set_xscale("log")
    ax.set_xlabel("seconds")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    _save(fig, target)
    return len(series)


def _gaps(lengths: np.ndarray, optimum: int | None) -> np.ndarray:
    """Lengths as gaps in % to ``optimum``; the lengths themselves without one."""
    return 100.0 * (lengths - optimum) / optimum if optimum else lengths


def matplotlib_figure():
    """matplotlib's Figure class, imported now; UsageError without matplotlib."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise UsageError(f"drawing needs matplotlib, which is not installed: "
                         f"{INSTALL_HINT}") from None
    return Figure


def _save(fig, target: Target) -> None:
    """Render ``fig`` in the target's format and write it atomically."""
    buf = io.BytesIO()
    fig.savefig(buf, format=Path(target.name).suffix.lower()[1:], dpi=PNG_DPI,
                bbox_inches="tight")
    # write_outputs takes text and writes it as UTF-8 with surrogateescape: decoding
    # with the same handler gives back exactly these bytes (PEP 383).
    write_outputs([(target, buf.getvalue().decode("utf-8", "surrogateescape"))])


__all__ = ["FORMATS", "Series", "available", "figure_target", "matplotlib_figure", "plot_curves",
           "plot_series", "plot_tour"]
