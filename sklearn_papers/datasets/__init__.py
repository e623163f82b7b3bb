"""Bundled real data sets, loaded in scikit-learn's ``load_*`` style."""

from sklearn_papers.datasets._coco import load_coco_instances
from sklearn_papers.datasets._molecules import (
    MOLECULEACE_TARGETS,
    load_bbbp,
    load_cep,
    load_delaney,
    load_freesolv,
    load_malaria,
    load_moleculeace,
    load_moses_smiles,
    load_tox21,
)
from sklearn_papers.datasets._scenes import make_scenes
from sklearn_papers.datasets._shapes import Shapes, make_shapes

__all__ = [
    "MOLECULEACE_TARGETS",
    "Shapes",
    "load_bbbp",
    "load_cep",
    "load_coco_instances",
    "load_delaney",
    "load_freesolv",
    "load_malaria",
    "load_moleculeace",
    "load_moses_smiles",
    "load_tox21",
    "make_scenes",
    "make_shapes",
]
