"""Disentanglement, segmentation, detection, image, generated-sample, fingerprint,
continual-learning and missing-label multi-task scores, as metric functions and scorers.

numpy and scikit-learn only: importing this package never imports torch or RDKit.
"""

from sklearn_papers.metrics._continual import backward_transfer
from sklearn_papers.metrics._detection import (
    box_average_precision,
    box_iou,
    detection_box_average_precision,
    matched_mask_iou,
)
from sklearn_papers.metrics._fingerprint import minmax_distances, nearest_tanimoto_similarity
from sklearn_papers.metrics._generated import classifier_two_sample_score, sample_quality
from sklearn_papers.metrics._image import image_sharpness, sharpness_measures
from sklearn_papers.metrics._instances import instance_best_iou, other_class_share
from sklearn_papers.metrics._interventional import (
    beta_vae_score,
    factor_step_distances,
    factor_vae_score,
)
from sklearn_papers.metrics._multitask import masked_roc_auc_score, masked_roc_auc_scorer
from sklearn_papers.metrics._probes import factor_probe_accuracy
from sklearn_papers.metrics._sample_based import (
    dci,
    irs,
    modularity_explicitness,
    mutual_info_gap,
    sap_score,
)
from sklearn_papers.metrics._scorer import make_disentanglement_scorer
from sklearn_papers.metrics._segmentation import (
    boundary_f_score,
    make_segmentation_scorer,
    mask_average_precision,
    semantic_mean_iou,
    symmetric_best_dice,
)

__all__ = [
    "backward_transfer",
    "beta_vae_score",
    "boundary_f_score",
    "box_average_precision",
    "box_iou",
    "classifier_two_sample_score",
    "dci",
    "detection_box_average_precision",
    "factor_probe_accuracy",
    "factor_step_distances",
    "factor_vae_score",
    "image_sharpness",
    "instance_best_iou",
    "irs",
    "make_disentanglement_scorer",
    "make_segmentation_scorer",
    "mask_average_precision",
    "masked_roc_auc_score",
    "masked_roc_auc_scorer",
    "matched_mask_iou",
    "minmax_distances",
    "modularity_explicitness",
    "mutual_info_gap",
    "nearest_tanimoto_similarity",
    "other_class_share",
    "sample_quality",
    "sap_score",
    "semantic_mean_iou",
    "sharpness_measures",
    "symmetric_best_dice",
]
