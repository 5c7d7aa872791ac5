"""The course's static figures (matplotlib): attention heatmaps (``plotting``), grids of heads with
token labels (``heatmap_grid``) and the architecture diagrams (``diagrams``)."""
