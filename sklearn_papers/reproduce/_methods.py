"""The registry of methods: one entry per method, naming everything that belongs to it.

Each :class:`Method` names its paper pages (``docs/papers/<page>.rst``), its estimators, its
user-guide pages, its experiments (``sklearn-papers reproduce --only NAME``, published as
``docs/results/NAME.rst``), its gallery examples (``examples/*.py``) and its benchmarks
(``benchmarks/*.py``). README's methods table is generated from it (:func:`methods_table`),
``sklearn-papers reproduce --list`` prints each experiment's method, and
``tests/reproduce/test_methods.py`` checks that README, the paper pages, the results pages,
the examples and the benchmarks agree with it.

Strings only, no imports: ``--list`` reads it without importing torch or RDKit.
"""

from dataclasses import dataclass

__all__ = ["METHODS", "Method", "method_of", "methods_table"]

_MOLECULES = (("molecule input", "docs/molecules.rst"),
              ("your own molecules", "docs/user_guide/molecules_own_data.rst"))
_IMAGES = (("your own images", "docs/user_guide/images.rst"),
           ("metrics", "docs/user_guide/metrics.rst"))


@dataclass(frozen=True)
class Method:
    """One method of the package, with everything named after it.

    Attributes
    ----------
    key : str
        Its one name: the stem of its first paper page.
    name : str
        The method's name, as README's table shows it.
    paper : str
        Authors and year of its paper(s).
    estimators : str
        Its public estimators and functions (markdown).
    sentence : str
        What it does, in one sentence.
    guides : tuple of (str, str)
        User-guide pages: ``(label, path)``.
    pages : tuple of str
        Its paper pages (stems of ``docs/papers/*.rst``); the first is :attr:`key`.
    experiments : tuple of (str, str)
        ``(label, experiment name)`` of the results README links; an empty label links
        the page as "results".
    followups : tuple of str
        Its other experiments (follow-ups), published beside them.
    examples : tuple of str
        Its gallery examples (``examples/<name>``).
    benchmarks : tuple of str
        Its benchmark scripts (``benchmarks/<name>``).
    results_note : str
        README's results cell when it has no experiment of its own.
    page_labels : tuple of str
        With several paper pages, the label of each page's link.
    """

    key: str
    name: str
    paper: str
    estimators: str
    sentence: str
    guides: tuple
    pages: tuple
    experiments: tuple = ()
    followups: tuple = ()
    examples: tuple = ()
    benchmarks: tuple = ()
    results_note: str = ""
    page_labels: tuple = ()

    def experiment_names(self):
        """Every experiment of the method, follow-ups included."""
        return tuple(name for _, name in self.experiments) + tuple(self.followups)


#: The methods, in README's order.
METHODS = (
    Method("duvenaud_ecfp", "Circular fingerprints (ECFP/FCFP)", "Rogers & Hahn 2010",
           "`chem.CircularFingerprint`",
           "Morgan fingerprints as a transformer, bit-for-bit RDKit's, with `n_jobs`.",
           _MOLECULES + (("scaling out", "docs/user_guide/scaling_out.rst"),),
           ("duvenaud_ecfp",),
           examples=("plot_circular_fingerprint.py",),
           benchmarks=("bench_ecfp.py", "bench_featurization_cache.py",
                       "bench_featurization_n_jobs.py", "bench_standardize.py",
                       "bench_scaffold.py", "bench_descriptors.py"),
           results_note="the Duvenaud et al. baseline rows (next row)"),
    Method("duvenaud_neural_fingerprint", "Neural graph fingerprints", "Duvenaud et al. 2015",
           "`chem.NeuralFingerprint`, `NeuralFingerprintRegressor`, "
           "`NeuralFingerprintClassifier`",
           "A differentiable fingerprint learnt end to end with its prediction head.",
           _MOLECULES, ("duvenaud_neural_fingerprint",), (("", "duvenaud"),),
           followups=("duvenaud_followup",),
           examples=("plot_neural_fingerprint.py",),
           benchmarks=("bench_neural_fingerprint.py", "bench_nf_defaults.py")),
    Method("gilmer_mpnn", "Message passing neural networks", "Gilmer et al. 2017",
           "`chem.MPNN`, `MPNNRegressor`, `MPNNClassifier`",
           "Edge-network messages and a set2set readout, or chemprop-style directed "
           "messages.", _MOLECULES, ("gilmer_mpnn",), (("", "gilmer"),),
           examples=("plot_mpnn.py",), benchmarks=("bench_mpnn.py", "bench_mpnn_defaults.py")),
    Method("rong_grover", "GROVER", "Rong et al. 2020",
           "`chem.GroverFeaturizer`, `GroverRegressor`, `GroverClassifier`, `ScaffoldSplit`, "
           "`ScaffoldKFold`",
           "A graph transformer pretrained on unlabelled molecules (shipped checkpoints), "
           "used frozen or fine-tuned.", _MOLECULES, ("rong_grover",), (("", "grover"),),
           followups=("grover_followup",), examples=("plot_grover.py",),
           benchmarks=("bench_grover.py", "bench_grover_defaults.py",
                       "bench_grover_finetune.py", "bench_graph_descriptors.py")),
    Method("lee_seung_nmf", "Non-negative matrix factorization", "Lee & Seung 2001",
           "`decomposition.NMF`",
           "Multiplicative updates for Frobenius and KL losses in torch, iterate for iterate "
           "scikit-learn's.", (("decomposition", "docs/user_guide/decomposition.rst"),),
           ("lee_seung_nmf",), (("", "lee_seung"),), examples=("plot_nmf_digits.py",),
           benchmarks=("bench_nmf.py",)),
    Method("khosla_supcon", "Supervised contrastive learning, Group Normalization",
           "Khosla et al. 2020; Wu & He 2018",
           "`contrastive.SupConEmbedder`, `CrossEntropyEmbedder`",
           "Embeddings trained with the SupCon loss (or cross-entropy), with batch, group or "
           "layer norm.", (("contrastive learning", "docs/user_guide/contrastive.rst"),),
           ("khosla_supcon",), (("SupCon", "supcon"), ("group norm", "group_norm")),
           followups=("supcon_followup", "group_norm_followup"),
           examples=("plot_supcon_digits.py",), benchmarks=("bench_supcon.py",)),
    Method("luo_sumo", "SUMO", "Luo et al. 2020",
           "`estimation.LogPartitionEstimator`, `SUMOVAE`, `elbo`, `iwae`, `sumo`",
           "Unbiased estimates of log Z and log-likelihoods by randomized telescoping sums.",
           (("estimation", "docs/user_guide/estimation.rst"),), ("luo_sumo",),
           (("", "sumo"),), followups=("sumo_followup",), examples=("plot_sumo.py",),
           benchmarks=("bench_sumo.py",)),
    Method("disentanglement", "Disentanglement scores",
           "van Steenkiste et al. 2019 and the scores it compares",
           "`metrics.*`, `make_disentanglement_scorer`, `datasets.Shapes`, "
           "`decomposition.BetaVAE`",
           "Seven disentanglement scores as metrics and scorers, a ground-truth image set, a "
           "beta-VAE.", (("metrics", "docs/user_guide/metrics.rst"),
                         ("beta-VAE", "docs/user_guide/decomposition.rst")),
           ("disentanglement",), (("", "disentanglement"),),
           examples=("plot_disentanglement_metrics.py",),
           benchmarks=("bench_disentanglement.py",)),
    Method("dosovitskiy_deepsim", "DeePSiM", "Dosovitskiy & Brox 2016",
           "`generative.DeePSiMAutoencoder`, `FeatureInverter`; `nn.DeePSiMLoss`",
           "Autoencoders and feature inverters trained with pixel, feature and adversarial "
           "losses.", (("generative models", "docs/user_guide/generative.rst"),),
           ("dosovitskiy_deepsim",), (("", "deepsim"),), examples=("plot_deepsim_digits.py",),
           benchmarks=("bench_deepsim.py",), followups=("deepsim_followup",)),
    Method("milioto_instance_segmentation", "Joint semantic + instance segmentation",
           "Milioto et al. 2019; De Brabandere et al. 2017",
           "`vision.InstanceSegmenter`, `nn.DiscriminativeLoss`, segmentation metrics",
           "One network for semantics, instance centres and pixel embeddings; instances "
           "without clustering.", _IMAGES, ("milioto_instance_segmentation",),
           (("", "instance_segmentation"),),
           examples=("plot_instance_segmentation.py", "plot_coins.py"),
           benchmarks=("bench_segmentation.py", "bench_coins.py", "bench_quality.py")),
    Method("he_mask_rcnn", "Mask R-CNN", "He et al. 2017",
           "`vision.MaskRCNN`; `nn.RoIAlign`, `RoIPool`, `nms`, `batched_nms`",
           "A two-stage detector with per-instance masks, in pure torch.", _IMAGES,
           ("he_mask_rcnn",), (("", "mask_rcnn"),), examples=("plot_mask_rcnn.py",),
           benchmarks=("bench_mask_rcnn.py",)),
    Method("oh_lpg", "Learned Policy Gradient", "Oh et al. 2020",
           "`rl.LearnedPolicyGradient`, `A2C`, `GridWorld`, `DelayedChain`",
           "A reinforcement-learning update rule meta-learnt on simple environments.",
           (("your own environments", "docs/user_guide/environments.rst"),), ("oh_lpg",),
           (("grid worlds", "lpg"), ("stock environments", "lpg_stock")),
           followups=("lpg_followup",), examples=("plot_lpg.py",), benchmarks=("bench_lpg.py", "bench_lpg_stock_lakes.py")),
    Method("rusu_progressive", "Progressive networks, generative replay",
           "Rusu et al. 2016; Farquhar & Gal 2018",
           "`continual.ProgressiveNetworkClassifier`, `GenerativeReplayClassifier`",
           "Learning tasks one after another without forgetting, by new columns or by "
           "replayed samples.", (("continual learning", "docs/continual.rst"),),
           ("rusu_progressive", "farquhar_vger"), (("", "continual"),),
           followups=("continual_followup",),
           examples=("plot_continual_split_digits.py",), benchmarks=("bench_continual.py",),
           page_labels=("progressive", "replay")),
)


def method_of(experiment):
    """The :class:`Method` an experiment belongs to.

    Raises
    ------
    KeyError
        When no method names ``experiment`` (register it in :data:`METHODS`).
    """
    for method in METHODS:
        if experiment in method.experiment_names():
            return method
    raise KeyError(f"no method in reproduce/_methods.py names the experiment {experiment!r}; "
                   "add it to its method's experiments or followups")


def _link(label, path):
    return f"[{label}]({path})"


def methods_table():
    """README's methods table (markdown), one row per method."""
    lines = ["| Method | Paper | Estimators | In one sentence | User guide | Results |",
             "|---|---|---|---|---|---|"]
    for m in METHODS:
        pages = [f"docs/papers/{p}.rst" for p in m.pages]
        if len(pages) == 1:
            name = _link(m.name, pages[0])
        else:
            name = f"{m.name} (" + ", ".join(_link(label, p) for label, p in
                                             zip(m.page_labels, pages)) + ")"
        guides = ", ".join(_link(label, path) for label, path in m.guides)
        results = ", ".join(_link(label or "results", f"docs/results/{name_}.rst")
                            for label, name_ in m.experiments) or m.results_note
        lines.append(f"| {name} | {m.paper} | {m.estimators} | {m.sentence} | {guides} | "
                     f"{results} |")
    return "\n".join(lines)
