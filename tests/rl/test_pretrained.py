"""The shipped LPG rule: loading offline, use, persistence, provenance, the docs' table."""

import importlib.util
import json
import pickle
from pathlib import Path

import gymnasium
import numpy as np
import pytest
import torch
from sklearn.base import clone

from sklearn_papers.rl import LearnedPolicyGradient, sample_grid_worlds
from sklearn_papers.rl._learned_policy_gradient import PRETRAINED

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "sklearn_papers" / "rl" / "_pretrained"


def _cliff():  # a reward (-1) on every step: the agents always learn something
    return gymnasium.make("CliffWalking-v1")


@pytest.fixture(scope="module")
def rule():
    return LearnedPolicyGradient(pretrained="lpg-widened").fit()


def test_every_shipped_rule_has_weights_config_and_evaluation():
    for name in PRETRAINED:
        folder = SHIPPED / name
        config = json.loads((folder / "config.json").read_text())
        assert config["format"] == "sklearn_papers.rl.pretrained"
        prov = config["provenance"]
        assert prov["command"].startswith("python -m sklearn_papers.rl._lpg_pretrain")
        sel = prov["selection"]
        scores = {int(k): v for k, v in sel["scores"].items()}
        assert sel["selected_seed"] == max(scores, key=scores.get)
        assert sorted(scores) == prov["candidate_seeds"]
        blob = torch.load(folder / "rule.pt", weights_only=True)
        saved = json.loads(blob["config"])
        assert saved["random_state"] == sel["selected_seed"]
        for key, value in config["params"].items():
            assert saved[key] == value, key
        assert json.loads((folder / "evaluation.json").read_text())["rule"] == name


def test_fit_loads_the_rule_without_meta_training(rule):
    blob = torch.load(SHIPPED / "lpg-widened" / "rule.pt", weights_only=True)
    for key, value in rule.module_.state_dict().items():
        torch.testing.assert_close(value, blob["state_dict"][key], rtol=0, atol=0)
    assert rule.n_iter_ == 0 and rule.loss_curve_ == []
    assert rule._rule_settings() == {"reward_scaling": "max_abs",
                                     "center_policy_target": True}
    assert rule.pretrained_config_["provenance"]["selection"]["protocol"]
    # the environments are not used: any value, or none
    assert LearnedPolicyGradient(pretrained="lpg-widened").fit(
        sample_grid_worlds(2, random_state=0)).n_iter_ == 0


def test_train_agent_and_score_use_the_rule(rule):
    states = np.arange(48)
    a = rule.train_agent(_cliff(), n_updates=30, random_state=0)
    b = LearnedPolicyGradient(pretrained="lpg-widened").fit().train_agent(
        _cliff(), n_updates=30, random_state=0)
    np.testing.assert_array_equal(a.predict_proba(states), b.predict_proba(states))
    untrained = rule.untrained(random_state=0).train_agent(_cliff(), n_updates=30,
                                                           random_state=0)
    assert not np.allclose(a.predict_proba(states), untrained.predict_proba(states))
    est = LearnedPolicyGradient(pretrained="lpg-widened", lifetime=30, random_state=0).fit()
    assert est.score([_cliff()], n_episodes=2) == est.score([_cliff()], n_episodes=2)


def test_clone_get_params_pickle_and_save(rule, tmp_path):
    est = LearnedPolicyGradient(pretrained="lpg-widened", lifetime=20, random_state=0)
    assert clone(est).get_params()["pretrained"] == "lpg-widened"
    est.fit()
    back = pickle.loads(pickle.dumps(est))
    assert back.pretrained_config_ == est.pretrained_config_
    assert back.lifetime_returns([_cliff()]) == pytest.approx(
        est.lifetime_returns([_cliff()]))
    loaded = LearnedPolicyGradient.load(est.save(tmp_path / "rule.pt"))
    assert loaded._rule_settings() == est._rule_settings()
    assert loaded.lifetime_returns([_cliff()]) == pytest.approx(
        est.lifetime_returns([_cliff()]))


def test_sklearn_api_checks_with_pretrained():
    from sklearn_papers.chem.estimator_checks import _SKLEARN_API_CHECKS

    for check in _SKLEARN_API_CHECKS:
        check("LearnedPolicyGradient", LearnedPolicyGradient(pretrained="lpg-widened"))


def test_bad_pretrained_values_are_named():
    with pytest.raises(ValueError, match=r"pretrained='nope' is not a rule shipped.*"
                                         r"lpg-widened"):
        LearnedPolicyGradient(pretrained="nope").fit()
    with pytest.raises(ValueError, match="restart_environments"):
        LearnedPolicyGradient(pretrained="lpg-widened").fit(
            restart_environments=sample_grid_worlds(2, random_state=0))
    with pytest.raises(ValueError, match="fit needs environments"):
        LearnedPolicyGradient().fit()


def test_ignored_rule_parameters_warn():
    with pytest.warns(UserWarning, match=r"hidden_size=8 \(the rule's: 32\) not used"):
        LearnedPolicyGradient(pretrained="lpg-widened", hidden_size=8).fit()


def _bench():
    path = ROOT / "benchmarks" / "bench_lpg_pretrained.py"
    spec = importlib.util.spec_from_file_location("bench_lpg_pretrained", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_environments_page_table_is_the_evaluation():
    bench = _bench()
    result = json.loads((SHIPPED / "lpg-widened" / "evaluation.json").read_text())
    page = (ROOT / "docs" / "user_guide" / "environments.rst").read_text()
    assert "\n".join(bench.table_lines(result)) in page
    config = json.loads((SHIPPED / "lpg-widened" / "config.json").read_text())
    settings = config["provenance"]["meta_training"]["settings"]
    assert f"({settings['max_meta_steps']:,} meta-steps" in page
    seeds = config["provenance"]["candidate_seeds"]
    assert seeds == list(range(len(seeds))) and f"(seeds 0 to {seeds[-1]})" in page
    assert f"{settings['n_agents']} agents, lifetimes of {settings['lifetime']} updates" in page
    reached = [c for c in bench.TARGET
               if result["normalized"][c]["LPG, shipped rule"] >= 0.8]
    assert result["target"]["reached_on"] == reached


@pytest.mark.parametrize("value", [-1.0, "x"])
def test_agent_parameters_set_after_fit_are_checked(value):
    rule = LearnedPolicyGradient(pretrained="lpg-widened").fit()
    rule.agent_lr = value
    with pytest.raises((ValueError, TypeError), match="agent_lr"):
        rule.train_agent(_cliff())
