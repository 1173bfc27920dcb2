"""NeMo 1 YAML (trainer: + model:). Not read yet: see the issue tracker."""

NAME = "nemo"
FORMATS = ("yaml",)
MARKERS = (b"micro_batch_size",)


def plan(doc, outside):
    return None
