"""Instance segmentation: InstanceSegmenter (joint semantic + centre + embedding heads), MaskRCNN (He et al. 2017)."""

from sklearn_papers.vision._instance_segmenter import InstanceSegmenter
from sklearn_papers.vision._mask_rcnn import MaskRCNN
from sklearn_papers.vision._plotting import plot_instances

__all__ = ["InstanceSegmenter", "MaskRCNN", "plot_instances"]
