"""A small stand-in for segmentation_models_pytorch.utils (functional + losses), as in the report."""
