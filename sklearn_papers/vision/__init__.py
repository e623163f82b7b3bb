"""Instance segmentation: InstanceSegmenter (joint semantic + centre + embedding heads), MaskRCNN (He et al. 2017)."""

__all__ = []
