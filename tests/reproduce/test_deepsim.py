"""The ``deepsim`` experiment end to end on a tiny configuration."""

from sklearn_papers.reproduce import deepsim, deepsim_followup
from sklearn_papers.reproduce._common import Protocol
from sklearn_papers.reproduce._registry import RunContext


def _tiny(quick):
    return dict(seeds=1, n_jobs=1, max_train=60,
                digits=dict(epochs=1, channels=4, code=2, layer="head", comparator_epochs=2),
                shapes=dict(n=120, epochs=1, channels=4, code=2, layer="relu2",
                            comparator_epochs=2),
                inversion=dict(epochs=1, channels=4), iterations=2)


def test_deepsim_experiment_tiny(tmp_path, monkeypatch):
    monkeypatch.setattr(deepsim, "PROTOCOL", Protocol(full=_tiny(False),
                                                      shortened="tiny"))
    # the quick run leaves follow-up 3 to the full mode: put its arms back to test it
    followup_config = deepsim_followup._followup_config
    monkeypatch.setattr(deepsim_followup, "_followup_config", lambda quick, cfg: dict(
        followup_config(quick, cfg), iterate=deepsim_followup.ITERATE_CONFIGS))
    ctx = RunContext(quick=True, out_dir=tmp_path, verbose=0, experiment="deepsim")
    section = deepsim.EXPERIMENT.run(ctx)
    md = section.markdown
    for heading in ("digits: autoencoders", "shapes: autoencoders", "Feature inversion",
                    "Iterated encoding-decoding", "`deepsim_followup`"):
        assert heading in md
    # 6 claims per dataset, inversion and iteration
    assert len(section.verdicts) == 2 * 6 + 2
    assert all(v.section for v in section.verdicts)  # the parts of combined claims too
    combined = section.find("digits: target: C sharpness >= 0.90 and > A on every seed")
    assert [p.rule for p in combined.parts] == ["every seed", "every seed"]
    assert section.find("digits: C costs pixel MSE").arms == []
    assert section.find("earlier layer reconstructed more exactly").arms == ["pool1",
                                                                             "relu3"]
    assert "logistic regression (standardised codes)" in md  # the shapes code probes
    assert len(section.figures) == 4 and all(p.exists() for p in section.figures)
    assert section.shortened

    # the follow-ups, an experiment of their own, read deepsim's parts kept in this run
    ctx.experiment, ctx.computed = "deepsim_followup", []
    follow = deepsim_followup.EXPERIMENT_FOLLOWUP.run(ctx)
    assert sorted(ctx.computed) == sorted(k for k in ctx.computed if k.startswith("followup/"))
    assert len(ctx.computed) == len(deepsim_followup.ITERATE_CONFIGS) + len(
        deepsim_followup.SHARPNESS_ARMS) + 1
    md = follow.markdown
    for heading in ("Follow-up 1 (digits)", "Follow-up 2 (shapes)", "Follow-up 3 (digits)"):
        assert heading in md
    n_followup = 3 + 2 * (len(deepsim_followup.SHARPNESS_ARMS) - 1) + 2 + 5
    assert len(follow.verdicts) == n_followup
    # every verdict names the rule that reached it; a combined one, how its parts combine
    from sklearn_papers.reproduce._claims import RULES

    for v in section.verdicts + follow.verdicts:
        assert v.rule in RULES or v.rule == "all of" or "measured once" in v.rule \
            or "paired interval" in v.rule, (v.claim, v.rule)
        assert v.outcome in ("holds", "does not hold", "inconclusive")
    # the refitted arm-C autoencoder of the iteration follow-up is the main one
    assert "reproduces the main section's iteration exactly: yes" in md
    assert len(follow.figures) == 3 and all(p.exists() for p in follow.figures)


def test_quick_followups_leave_the_iteration_to_the_full_mode(tmp_path):
    cfg = _tiny(True)
    followup = deepsim_followup
    assert followup._followup_config(True, cfg)["iterate"] == ()
    assert followup._followup_config(False, cfg)["iterate"] == followup.ITERATE_CONFIGS
    parts = followup._followup_parts(cfg, followup._followup_config(True, cfg), [0], 0,
                                    {"digits": None, "shapes": None}, {})
    assert parts and not any(name[0] == "iterate" for name, _, _ in parts)
