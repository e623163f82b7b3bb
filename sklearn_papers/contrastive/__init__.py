"""contrastive family (see DESIGN.md): supervised contrastive learning (Khosla et al. 2020).

The linear probe of the paper is ``make_pipeline(SupConEmbedder(...), LogisticRegression())``.
"""

from sklearn_papers.contrastive._cross_entropy_embedder import CrossEntropyEmbedder
from sklearn_papers.contrastive._supcon_embedder import SupConEmbedder

__all__ = ["CrossEntropyEmbedder", "SupConEmbedder"]
