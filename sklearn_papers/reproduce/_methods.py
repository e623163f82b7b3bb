"""The registry of methods: one key per paper, which starts every name of the method.

Its experiments (``KEY``, ``KEY_followup``), paper pages (``docs/papers/KEY[_<part>].rst``),
examples (``examples/plot_KEY[_<topic>].py``) and benchmarks (``bench_KEY[_<topic>].py``).
README's methods table and the results index are generated from it. Strings only
(``--list`` reads it without torch or RDKit).
"""

import json
from dataclasses import dataclass
from pathlib import Path

__all__ = ["METHODS", "SHARED_BENCHMARKS", "Method", "method_of", "methods_table",
           "results_index"]

_MOLECULES = (("molecule input", "docs/molecules.rst"),
              ("your own molecules", "docs/user_guide/molecules_own_data.rst"))
_IMAGES = (("your own images", "docs/user_guide/images.rst"),
           ("metrics", "docs/user_guide/metrics.rst"))


@dataclass(frozen=True)
class Method:
    """One method of the package (one paper, or two that share an experiment).

    Attributes
    ----------
    key : str
        Its one name, which starts every other name below.
    name, paper, estimators, sentence : str
        README's name, authors and year, public estimators (markdown), one sentence.
    guides : tuple of (str, str)
        User-guide pages: ``(label, path)``.
    experiments : tuple of (str, str)
        ``(label, experiment name)`` README links (an empty label reads "results").
    followups, examples, benchmarks : tuple of str
        Its follow-up experiments, ``examples/`` and ``benchmarks/`` scripts.
    results_note : str
        README's results cell when it has no experiment of its own.
    pages : tuple of (str, str)
        With two papers, ``(label, page stem)`` of each page; else ``docs/papers/<key>.rst``.
    """

    key: str
    name: str
    paper: str
    estimators: str
    sentence: str
    guides: tuple
    experiments: tuple = ()
    followups: tuple = ()
    examples: tuple = ()
    benchmarks: tuple = ()
    results_note: str = ""
    pages: tuple = ()

    def experiment_names(self):
        """Every experiment of the method, follow-ups included."""
        return tuple(name for _, name in self.experiments) + tuple(self.followups)

    def page_stems(self):
        """Stems of its paper pages (``docs/papers/<stem>.rst``)."""
        return tuple(stem for _, stem in self.pages) or (self.key,)


#: The methods, in README's order.
METHODS = (
    Method("ecfp", "Circular fingerprints (ECFP/FCFP)", "Rogers & Hahn 2010",
           "`chem.CircularFingerprint`",
           "Morgan fingerprints as a transformer, bit-for-bit RDKit's, with `n_jobs`.",
           _MOLECULES + (("scaling out", "docs/user_guide/scaling_out.rst"),),
           examples=("plot_ecfp.py",), benchmarks=("bench_ecfp.py", "bench_ecfp_sparse.py"),
           results_note="the Duvenaud et al. baseline rows (next row)"),
    Method("duvenaud", "Neural graph fingerprints", "Duvenaud et al. 2015",
           "`chem.NeuralFingerprint`, `NeuralFingerprintRegressor`, "
           "`NeuralFingerprintClassifier`",
           "A differentiable fingerprint learnt end to end with its prediction head.",
           _MOLECULES, (("", "duvenaud"),), followups=("duvenaud_followup",),
           examples=("plot_duvenaud.py",),
           benchmarks=("bench_duvenaud.py", "bench_duvenaud_defaults.py")),
    Method("gilmer", "Message passing neural networks", "Gilmer et al. 2017",
           "`chem.MPNN`, `MPNNRegressor`, `MPNNClassifier`",
           "Edge-network messages and a set2set readout, or chemprop-style directed "
           "messages.", _MOLECULES, (("", "gilmer"),), examples=("plot_gilmer.py",),
           benchmarks=("bench_gilmer.py", "bench_gilmer_defaults.py", "bench_gilmer_blend.py")),
    Method("grover", "GROVER", "Rong et al. 2020",
           "`chem.GroverFeaturizer`, `GroverRegressor`, `GroverClassifier`, `ScaffoldSplit`, "
           "`ScaffoldKFold`",
           "A graph transformer pretrained on unlabelled molecules (shipped checkpoints), "
           "used frozen or fine-tuned.", _MOLECULES, (("", "grover"),),
           followups=("grover_followup",), examples=("plot_grover.py",),
           benchmarks=("bench_grover.py", "bench_grover_defaults.py",
                       "bench_grover_finetune.py", "bench_grover_scaffold_defaults.py")),
    Method("lee_seung", "Non-negative matrix factorization", "Lee & Seung 2001",
           "`decomposition.NMF`",
           "Multiplicative updates for Frobenius and KL losses in torch, iterate for iterate "
           "scikit-learn's.", (("decomposition", "docs/user_guide/decomposition.rst"),),
           (("", "lee_seung"),), examples=("plot_lee_seung_digits.py",),
           benchmarks=("bench_lee_seung.py",)),
    Method("supcon", "Supervised contrastive learning", "Khosla et al. 2020",
           "`contrastive.SupConEmbedder`, `CrossEntropyEmbedder`",
           "Embeddings trained with the SupCon loss, or cross-entropy, probed by a linear "
           "model.", (("contrastive learning", "docs/user_guide/contrastive.rst"),),
           (("", "supcon"),), followups=("supcon_followup",),
           examples=("plot_supcon_digits.py",), benchmarks=("bench_supcon.py",)),
    Method("group_norm", "Group Normalization", "Wu & He 2018",
           "`norm=\"group\"` of `contrastive.SupConEmbedder`, `CrossEntropyEmbedder`, "
           "`decomposition.BetaVAE`",
           "Normalisation over groups of channels per sample, independent of the batch "
           "size.", (("contrastive learning", "docs/user_guide/contrastive.rst"),),
           (("", "group_norm"),), followups=("group_norm_followup",)),
    Method("sumo", "SUMO", "Luo et al. 2020",
           "`estimation.LogPartitionEstimator`, `SUMOVAE`, `elbo`, `iwae`, `sumo`",
           "Unbiased estimates of log Z and log-likelihoods by randomized telescoping sums.",
           (("estimation", "docs/user_guide/estimation.rst"),), (("", "sumo"),),
           followups=("sumo_followup",), examples=("plot_sumo.py",),
           benchmarks=("bench_sumo.py",)),
    Method("disentanglement", "Disentanglement scores",
           "van Steenkiste et al. 2019 and the scores it compares",
           "`metrics.*`, `make_disentanglement_scorer`, `datasets.Shapes`, "
           "`decomposition.BetaVAE`",
           "Seven disentanglement scores as metrics and scorers, a ground-truth image set, a "
           "beta-VAE.", (("metrics", "docs/user_guide/metrics.rst"),
                         ("beta-VAE", "docs/user_guide/decomposition.rst")),
           (("", "disentanglement"),), examples=("plot_disentanglement_metrics.py",),
           benchmarks=("bench_disentanglement.py",)),
    Method("deepsim", "DeePSiM", "Dosovitskiy & Brox 2016",
           "`generative.DeePSiMAutoencoder`, `FeatureInverter`; `nn.DeePSiMLoss`",
           "Autoencoders and feature inverters trained with pixel, feature and adversarial "
           "losses.", (("generative models", "docs/user_guide/generative.rst"),),
           (("", "deepsim"),), followups=("deepsim_followup",),
           examples=("plot_deepsim_digits.py",), benchmarks=("bench_deepsim.py",)),
    Method("instance_segmentation", "Joint semantic + instance segmentation",
           "Milioto et al. 2019; De Brabandere et al. 2017",
           "`vision.InstanceSegmenter`, `nn.DiscriminativeLoss`, segmentation metrics",
           "One network for semantics, instance centres and pixel embeddings; instances "
           "without clustering.", _IMAGES, (("", "instance_segmentation"),),
           followups=("instance_segmentation_followup",),
           examples=("plot_instance_segmentation.py", "plot_instance_segmentation_coins.py"),
           benchmarks=("bench_instance_segmentation.py",
                       "bench_instance_segmentation_coins.py")),
    Method("mask_rcnn", "Mask R-CNN", "He et al. 2017",
           "`vision.MaskRCNN`; `nn.RoIAlign`, `RoIPool`, `nms`, `batched_nms`",
           "A two-stage detector with per-instance masks, in pure torch.", _IMAGES,
           (("", "mask_rcnn"),), followups=("mask_rcnn_followup",),
           examples=("plot_mask_rcnn.py",),
           benchmarks=("bench_mask_rcnn.py",)),
    Method("lpg", "Learned Policy Gradient", "Oh et al. 2020",
           "`rl.LearnedPolicyGradient`, `A2C`, `GridWorld`, `DelayedChain`",
           "A reinforcement-learning update rule meta-learnt on simple environments.",
           (("your own environments", "docs/user_guide/environments.rst"),),
           (("grid worlds", "lpg"), ("stock environments", "lpg_stock")),
           followups=("lpg_followup",), examples=("plot_lpg.py",),
           benchmarks=("bench_lpg.py", "bench_lpg_a2c.py", "bench_lpg_pretrained.py",
                       "bench_lpg_stock_lakes.py")),
    Method("continual", "Progressive networks, generative replay",
           "Rusu et al. 2016; Farquhar & Gal 2018",
           "`continual.ProgressiveNetworkClassifier`, `GenerativeReplayClassifier`",
           "Learning tasks one after another without forgetting, by new columns or by "
           "replayed samples.", (("continual learning", "docs/continual.rst"),),
           (("", "continual"),), followups=("continual_followup",),
           examples=("plot_continual_split_digits.py",), benchmarks=("bench_continual.py",),
           pages=(("progressive", "continual_progressive"), ("replay", "continual_replay"))),
)

#: Benchmarks of the shared machinery, which measure several methods and carry no key.
SHARED_BENCHMARKS = ("bench_descriptors.py", "bench_featurization_cache.py",
                     "bench_featurization_n_jobs.py", "bench_graph_descriptors.py",
                     "bench_molecule_cost.py", "bench_moleculeace.py",
                     "bench_featurizer_moleculeace.py", "bench_quality.py", "bench_scaffold.py",
                     "bench_standardize.py", "bench_vision_memory.py",
                     "bench_vision_page.py")


def method_of(experiment):
    """The :class:`Method` an experiment belongs to (a KeyError when none names it)."""
    for method in METHODS:
        if experiment in method.experiment_names():
            return method
    raise KeyError(f"no method in reproduce/_methods.py names the experiment {experiment!r}; "
                   "add it to its method's experiments or followups")


def _link(label, path):
    """A markdown link."""
    return f"[{label}]({path})"


def methods_table():
    """README's methods table (markdown), one row per method."""
    lines = ["| Method | Paper | Estimators | In one sentence | User guide | Results |",
             "|---|---|---|---|---|---|"]
    for m in METHODS:
        if m.pages:
            name = f"{m.name} (" + ", ".join(_link(label, f"docs/papers/{stem}.rst")
                                             for label, stem in m.pages) + ")"
        else:
            name = _link(m.name, f"docs/papers/{m.key}.rst")
        guides = ", ".join(_link(label, path) for label, path in m.guides)
        results = ", ".join(_link(label or "results", f"docs/results/{name_}.rst")
                            for label, name_ in m.experiments) or m.results_note
        lines.append(f"| {name} | {m.paper} | {m.estimators} | {m.sentence} | {guides} | "
                     f"{results} |")
    return "\n".join(lines)


def results_index(to_dir):
    """The results index (reStructuredText) read from the pages' JSON of ``to_dir``: the
    pages by method, how many claims of each hold, do not hold or are inconclusive, and
    every verdict with its rule (a KeyError for a page of no method)."""
    from sklearn_papers.reproduce._claims import OUTCOMES
    from sklearn_papers.reproduce._publish import _inline, list_table

    pages = {p.stem: json.loads(p.read_text(encoding="utf-8"))
             for p in sorted(Path(to_dir).glob("*.json"))}
    order = [n for m in METHODS for n in m.experiment_names() if n in pages]
    order += sorted(set(pages) - set(order), key=lambda n: method_of(n).key)
    lines = ["Results of full runs", "====================", "",
             "Each page is the report of one run of ``sklearn-papers reproduce``, with the "
             "command, commit and machine it ran on. Published with ``sklearn-papers publish "
             "--report DIR --to docs/results``; each page's records are in the JSON file "
             "beside it.", "", ".. toctree::", "   :maxdepth: 1", ""]
    lines += [f"   {name}" for name in order]
    summary = [["method", "experiment", *OUTCOMES]]
    verdicts = [["experiment", "claim", "rule", "outcome"]]
    for name in order:
        method, ref = method_of(name), f":ref:`{name} <results-{name}>`"
        outcomes = [v["outcome"] for v in pages[name]["result"]["verdicts"]]
        summary.append([f":doc:`{method.name} </papers/{method.page_stems()[0]}>`", ref,
                        *(str(outcomes.count(o)) for o in OUTCOMES)])
        verdicts += [[ref, _inline(v["claim"]) or "(see the page)", _inline(v["rule"]),
                      v["outcome"]] for v in pages[name]["result"]["verdicts"]]
    lines += ["", "Summary", "-------", "",
              "How many of each experiment's claims hold, do not hold or are inconclusive.", "",
              *list_table(summary), "", "Verdicts", "--------", "",
              "Every claim the published runs judged, with the rule that judged it.", "",
              *list_table(verdicts)]
    return "\n".join(lines) + "\n"
