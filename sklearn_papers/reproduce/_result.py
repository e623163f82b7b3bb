"""An experiment's result as data: tables as records, verdicts, figures.

A :class:`Result`'s text is markdown in which each table and verdict is a placeholder
(``[[table:0]]``, ``[[verdict:2]]``) for a record kept beside it, a :class:`Table` or a
:class:`VerdictRecord`; :attr:`Result.markdown` fills them in.
"""

import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from sklearn_papers.reproduce._claims import OUTCOMES, Claim, Verdict, bold_outcome, describe

__all__ = ["Result", "Table", "VerdictRecord", "plain", "to_json"]

#: A placeholder of :attr:`Result.text`: ``[[table:N]]`` or ``[[verdict:N]]``, the latter
#: optionally with a style (``[[verdict:N:outcome]]``, see :meth:`VerdictRecord.render`).
PLACEHOLDER = re.compile(r"\[\[(table|verdict):(\d+)(?::(\w+))?\]\]")

#: A markdown heading of level 2 to 6: its marks and its text.
HEADING = re.compile(r"^(#{2,6})\s+(.*)$")


def plain(text):
    """``text`` as a reader sees it: no code marks, bold marks or escapes."""
    text = str(text).replace("``", "").replace("`", "").replace("**", "")
    text = text.replace("\\|", "|")
    return re.sub(r"\s+", " ", text).strip()


def to_json(value, *, finite=False):
    """``value`` as plain JSON types: tuples and arrays as lists, numpy scalars as Python
    numbers, NaN and inf as None when ``finite``; a TypeError for an object."""
    if isinstance(value, dict):
        return {str(k): to_json(v, finite=finite) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json(v, finite=finite) for v in value]
    if hasattr(value, "tolist"):  # numpy arrays and scalars
        return to_json(value.tolist(), finite=finite)
    if isinstance(value, float) and finite and not math.isfinite(value):
        return None
    if isinstance(value, (bool, int, float, str, type(None))):
        return value
    raise TypeError(f"records hold plain values (numbers, strings, lists, dicts); got "
                    f"{type(value).__name__}: return scores, not objects, from the part")


@dataclass
class Table:
    """One table of a result: ``rows`` (``{column: value}``, a value a number, markdown or
    None for an empty cell), ``columns``, ``floatfmt`` (of float cells) and ``title`` (the
    heading above it, set by :meth:`Result.to_dict`)."""

    rows: list
    columns: list
    floatfmt: str = ".3f"
    title: str = ""

    def cell(self, value):
        """The markdown of one cell."""
        if value is None:
            return ""
        if isinstance(value, (float, np.floating)):
            return "nan" if np.isnan(value) else format(value, self.floatfmt)
        return str(value).replace("|", "\\|")

    def markdown(self):
        """The table as GitHub markdown."""
        lines = ["| " + " | ".join(self.columns) + " |",
                 "|" + "|".join("---" for _ in self.columns) + "|"]
        for row in self.rows:
            lines.append("| " + " | ".join(self.cell(row.get(c)) for c in self.columns)
                         + " |")
        return "\n".join(lines)

    def to_dict(self):
        return {"title": self.title, "columns": list(self.columns),
                "floatfmt": self.floatfmt,
                "rows": [{c: to_json(row.get(c), finite=True) for c in self.columns}
                         for row in self.rows]}

    @classmethod
    def from_dict(cls, data):
        return cls(rows=[dict(r) for r in data["rows"]], columns=list(data["columns"]),
                   floatfmt=data.get("floatfmt", ".3f"), title=data.get("title", ""))


@dataclass
class VerdictRecord:
    """One verdict of a result: a claim, judged.

    ``claim``, ``metric``, ``arms`` (the claimed side first), ``paper``, ``unit`` and
    ``rule`` are the :class:`~._claims.Claim`'s (``rule``: how a claim made of parts
    combines its ``parts``); ``outcome``, ``estimate``, ``interval`` (``[None, None]`` with
    one seed), ``n``, ``wins`` and ``numbers`` (the per-seed values the rule read) the
    :class:`~._claims.Verdict`'s, None for a claim made of parts. ``digits``: those the
    report writes. ``section``: the heading above its first mention (set by
    :meth:`Result.to_dict`). ``wording``: markdown rendered as is, for a verdict without a
    rule's numbers (a page converted from its published text).
    """

    claim: str
    outcome: str
    rule: str
    metric: str = ""
    arms: list = field(default_factory=list)
    paper: str = ""
    estimate: float = None
    interval: list = None
    n: int = None
    wins: int = None
    unit: str = "seeds"
    numbers: dict = field(default_factory=dict)
    parts: list = field(default_factory=list)
    digits: int = 3
    section: str = ""
    wording: str = ""

    def __post_init__(self):
        if self.outcome not in OUTCOMES:
            raise ValueError(f"outcome must be one of {OUTCOMES}, got {self.outcome!r}")

    @classmethod
    def from_verdict(cls, verdict, *, arms=(), claim=None, digits=3, parts=(), rule=None):
        """The record of a :class:`~._claims.Verdict`, or of an outcome string (a claim
        made of parts: give ``claim``, a declared :class:`~._claims.Claim` or its words
        with ``rule``, and ``parts``). ``arms`` default to the claim's."""
        parts = [p if isinstance(p, VerdictRecord) else cls.from_verdict(p, digits=digits)
                 for p in parts if not isinstance(p, str)]
        if isinstance(claim, Claim):
            arms = arms or claim.arms
            rule = rule or claim.rule
            claim = claim.statement
        if isinstance(verdict, str):
            if claim is None:
                raise ValueError("an outcome without its Verdict needs the claim's words")
            return cls(claim=claim, outcome=verdict, rule=rule or "all of", arms=list(arms),
                       parts=parts, digits=digits, unit="")
        if not isinstance(verdict, Verdict):
            raise TypeError(f"expected a Verdict or an outcome string, got {verdict!r}")
        c = verdict.claim
        return cls(claim=claim or c.statement, outcome=verdict.outcome, rule=c.rule,
                   metric=c.metric, arms=list(arms or c.arms), paper=c.paper,
                   estimate=to_json(float(verdict.estimate), finite=True),
                   interval=to_json([float(v) for v in verdict.interval], finite=True),
                   n=int(verdict.n_seeds), wins=int(verdict.wins), unit=c.unit,
                   numbers=to_json(verdict.numbers, finite=True), parts=parts,
                   digits=digits)

    @property
    def judged(self):
        """Whether a rule of :mod:`._claims` reached it (it has numbers)."""
        return self.estimate is not None

    def short(self, digits=None):
        """:meth:`Verdict.short`; the bare outcome for a claim made of parts."""
        if not self.judged:
            return self.outcome
        lo, hi = (np.nan if v is None else v for v in self.interval)
        return describe(self.outcome, self.rule, self.estimate, (lo, hi), self.wins,
                        self.n, self.unit, self.digits if digits is None else digits)

    def render(self, style="bold"):
        """Markdown of the verdict: ``"bold"`` (all in bold), ``"outcome"`` (the outcome
        in bold, then the rule and numbers, or how the parts combine), ``"plain"`` (no
        bold), ``"bare"`` (the outcome alone) or ``"parts"`` (the outcome in bold, then
        each part's :meth:`short`)."""
        if style == "bare":
            return self.outcome
        if self.wording:
            return self.wording
        if not self.judged and style == "outcome":
            return f"**{self.outcome}** ({self.rule})"
        if not self.judged and style == "parts":
            return (f"**{self.outcome}** ("
                    + "; ".join(p.short(self.digits) for p in self.parts) + ")")
        text = self.short()
        if style == "plain":
            return text
        return bold_outcome(text) if style == "outcome" else f"**{text}**"

    def to_dict(self):
        data = {"claim": self.claim, "outcome": self.outcome, "rule": self.rule,
                "metric": self.metric, "arms": list(self.arms), "paper": self.paper,
                "section": self.section}
        if self.judged:
            data.update(estimate=self.estimate, interval=list(self.interval), n=self.n,
                        wins=self.wins, unit=self.unit, numbers=self.numbers)
        if self.parts:
            data["parts"] = [p.to_dict() for p in self.parts]
        data["digits"] = self.digits
        if self.wording:
            data["wording"] = self.wording
        return data

    @classmethod
    def from_dict(cls, data):
        data = dict(data)
        data["parts"] = [cls.from_dict(p) for p in data.get("parts", [])]
        return cls(**data)


@dataclass
class Result:
    """What one experiment returns, its report section as data: ``text`` (markdown with
    placeholders for its ``tables`` and ``verdicts``, headings from level 3), ``figures``
    (PNG files in the output folder) and what ``--quick`` ``shortened``."""

    text: str = ""
    tables: list = field(default_factory=list)
    verdicts: list = field(default_factory=list)
    figures: list = field(default_factory=list)
    shortened: str = ""

    def __post_init__(self):
        self._seen = {}

    # -- building ----------------------------------------------------------------------
    def table(self, rows, columns=None, floatfmt=".3f"):
        """Keep a table (a list of dicts, or a DataFrame); return its placeholder."""
        if hasattr(rows, "to_dict"):
            rows = rows.to_dict(orient="records")
        rows = [dict(r) for r in rows]
        if columns is None:
            columns = list(rows[0]) if rows else []
        self.tables.append(Table(rows=rows, columns=list(columns), floatfmt=floatfmt))
        return f"[[table:{len(self.tables) - 1}]]"

    def verdict(self, verdict, *, arms=(), claim=None, style="bold", digits=3, parts=(),
                rule=None):
        """Keep a verdict once; return its placeholder, rendered as
        :meth:`VerdictRecord.render` with ``style``.

        ``verdict`` is a :class:`~._claims.Verdict`, or the outcome of a claim made of
        ``parts`` (Verdicts), whose ``claim`` is then its declared
        :class:`~._claims.Claim`, or its words with the ``rule`` that combines the parts.
        ``arms`` and ``claim`` default to the verdict's claim's
        (:meth:`VerdictRecord.from_verdict`).
        """
        key = id(verdict) if isinstance(verdict, Verdict) else None
        if key is not None and key in self._seen:
            index = self._seen[key][1]
        else:
            self.verdicts.append(VerdictRecord.from_verdict(
                verdict, arms=arms, claim=claim, digits=digits, parts=parts, rule=rule))
            index = len(self.verdicts) - 1
            if key is not None:  # the Verdict is kept so that its id is not reused
                self._seen[key] = (verdict, index)
        return f"[[verdict:{index}]]" if style == "bold" else f"[[verdict:{index}:{style}]]"

    def verdict_line(self, verdict, style="bold", **kwargs):
        """``"- <claim>: <verdict>"``, the verdict kept (``style`` and ``kwargs`` as
        :meth:`verdict`; a claim made of parts passes its ``claim``)."""
        claim = kwargs.get("claim") or verdict.claim
        words = claim.statement if isinstance(claim, Claim) else claim
        return f"- {words}: {self.verdict(verdict, style=style, **kwargs)}"

    def block(self, caption, rows, verdicts=(), *, style="bold", digits=3, columns=None,
              floatfmt=".3f"):
        """Markdown lines of one table: ``caption``, the table of ``rows``, then a
        :meth:`verdict_line` per verdict of ``verdicts`` (with ``style`` and ``digits``),
        ending with a blank line."""
        lines = [caption, "", self.table(rows, columns, floatfmt), ""]
        lines += [self.verdict_line(v, style, digits=digits) for v in verdicts]
        return lines + [""] if verdicts else lines

    def done(self, text, *, figures=(), shortened=""):
        """Set the text, figures and ``shortened`` note; return ``self``."""
        self.text = text
        self.figures = [Path(f) for f in figures]
        self.shortened = shortened
        self._set_titles()
        return self

    # -- reading -----------------------------------------------------------------------
    @property
    def markdown(self):
        """The section's markdown: the text with every table and verdict filled in."""
        return self.fill(self.text)

    def fill(self, text):
        """``text`` with its tables, then its verdicts (also in table cells), filled in."""
        def fill(match):
            kind, index, style = match.group(1), int(match.group(2)), match.group(3)
            if kind == "table":
                return self.tables[index].markdown()
            return self.verdicts[index].render(style or "bold")

        return PLACEHOLDER.sub(fill, PLACEHOLDER.sub(fill, text))

    def shown(self, table):
        """``(columns, rows)`` of ``table`` as plain strings, verdicts filled in."""
        return ([plain(c) for c in table.columns],
                [[plain(self.fill(plain(table.cell(row.get(c))))) for c in table.columns]
                 for row in table.rows])

    def verdict_rows(self, verdicts, digits=3):
        """Rows of a table of verdicts (claim, metric, paper, ``"outcome"`` style); each
        verdict is kept."""
        return [{"claim": v.claim.statement, "metric": v.claim.metric,
                 "paper": v.claim.paper or "",
                 "here": self.verdict(v, style="outcome", digits=digits)} for v in verdicts]

    def find(self, claim):
        """The one verdict whose claim contains ``claim`` (else a KeyError listing them)."""
        found = [v for v in self.verdicts if claim in v.claim]
        if len(found) != 1:
            raise KeyError(f"{len(found)} verdicts whose claim holds {claim!r}; the claims "
                           f"are {[v.claim for v in self.verdicts]}")
        return found[0]

    def find_table(self, section=None, columns=None):
        """The one table under a heading containing ``section`` that has ``columns`` (else
        a KeyError)."""
        self._set_titles()
        found = [t for t in self.tables
                 if (section is None or section in plain(t.title))
                 and (columns is None or set(columns) <= set(self.shown(t)[0]))]
        if len(found) != 1:
            raise KeyError(f"{len(found)} tables" + (f" under a heading containing "
                                                     f"{section!r}" if section else "")
                           + (f" with the columns {list(columns)}" if columns else "")
                           + "; give a section or columns that single out one")
        return found[0]

    def _set_titles(self):
        """Set each table's title and verdict's section: the heading above its first use."""
        heading, done = "", set()
        for line in self.text.splitlines():
            match = HEADING.match(line.strip())
            if match:
                heading = match.group(2)
            for ph in PLACEHOLDER.finditer(line):
                kind, index = ph.group(1), int(ph.group(2))
                if (kind, index) in done:
                    continue
                done.add((kind, index))
                if kind == "verdict":
                    self.verdicts[index].section = heading
                    continue
                self.tables[index].title = heading
                for inner in PLACEHOLDER.finditer(self.tables[index].markdown()):
                    if inner.group(1) == "verdict":
                        verdict = self.verdicts[int(inner.group(2))]
                        verdict.section = verdict.section or heading

    def to_dict(self, relative_to=None):
        """The result as JSON-ready data (figure paths relative to ``relative_to``)."""
        self._set_titles()
        figures = [Path(f) for f in self.figures]
        if relative_to is not None:
            figures = [Path(_relative(f, relative_to)) for f in figures]
        return {"text": self.text, "tables": [t.to_dict() for t in self.tables],
                "verdicts": [v.to_dict() for v in self.verdicts],
                "figures": [f.as_posix() for f in figures], "shortened": self.shortened}

    @classmethod
    def from_dict(cls, data):
        return cls(text=data["text"], tables=[Table.from_dict(t) for t in data["tables"]],
                   verdicts=[VerdictRecord.from_dict(v) for v in data["verdicts"]],
                   figures=[Path(f) for f in data.get("figures", [])],
                   shortened=data.get("shortened", ""))


def _relative(path, folder):
    try:
        return os.path.relpath(Path(path), Path(folder))
    except ValueError:  # another drive
        return Path(path).name


def dump_json(data, path):
    """Write ``data`` as indented UTF-8 JSON to ``path``; return the path."""
    path = Path(path)
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path
