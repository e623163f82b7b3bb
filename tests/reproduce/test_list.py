"""``reproduce --list`` reads names and titles without importing the experiment modules."""

import subprocess
import sys

from sklearn_papers.reproduce import get_experiments
from sklearn_papers.reproduce._registry import _static_experiments, list_experiments


def test_list_imports_no_experiment_module_nor_torch():
    code = ("import sys; from sklearn_papers.reproduce._cli import main; "
            "assert main(['reproduce', '--list']) == 0; "
            "heavy = sorted(m for m in sys.modules if m == 'torch' or m == 'rdkit' or "
            "m.startswith('sklearn_papers.reproduce.') and not m.split('.')[-1]"
            ".startswith('_')); print('HEAVY', heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1] == "HEAVY []"
    lines = out.stdout.splitlines()[:-1]
    listed = [line.split()[0] for line in lines]
    assert listed == list(get_experiments())
    # titles start in one column, after the longest name
    titles = {title for title, _ in list_experiments().values()}
    starts = {line.index(next(t for t in titles if t in line)) for line in lines}
    assert starts == {max(map(len, listed)) + 2}


def test_listed_titles_and_papers_are_those_of_the_imported_experiments():
    assert list_experiments() == {name: (exp.title, exp.paper)
                                  for name, exp in get_experiments().items()}


def test_non_literal_fields_fall_back_to_importing(tmp_path):
    path = tmp_path / "m.py"
    path.write_text('PAPER = "P"\nEXPERIMENT = Experiment(name="m", title="T", paper=PAPER,'
                    ' run=None)\n')
    assert _static_experiments(path) == [{"name": "m", "title": "T", "paper": "P"}]
    path.write_text('EXPERIMENT = Experiment(name="m", title="T" + "x", paper="P", run=None)\n')
    assert _static_experiments(path) is None
    path.write_text('PAPER = "P"\nPAPER = PAPER.upper()\n'
                    'EXPERIMENT = Experiment(name="m", title="T", paper=PAPER, run=None)\n')
    assert _static_experiments(path) is None
    path.write_text("X = 1\n")
    assert _static_experiments(path) == []


def test_a_followup_experiment_in_the_same_module_is_listed_and_registered(tmp_path):
    path = tmp_path / "m.py"
    path.write_text('PAPER = "P"\nEXPERIMENT = Experiment(name="m", title="T", paper=PAPER,'
                    ' run=None)\nEXPERIMENT_FOLLOWUP = Experiment(name="m_followup", '
                    'title="F", paper=PAPER, run=None)\nEXPERIMENTAL = 3\n')
    assert _static_experiments(path) == [{"name": "m", "title": "T", "paper": "P"},
                                         {"name": "m_followup", "title": "F", "paper": "P"}]
    path.write_text('EXPERIMENT_FOLLOWUP = Experiment(name=NAME, title="F", paper="P", '
                    'run=None)\n')
    assert _static_experiments(path) is None  # not literal: the module is imported
    followups = [n for n in get_experiments() if n.endswith("_followup")]
    assert "grover_followup" in followups
    assert all(n[:-len("_followup")] in get_experiments() for n in followups)
