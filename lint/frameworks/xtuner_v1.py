"""XTuner v1 Python configs (`from xtuner.v1 ...`). Not read yet: see the issue tracker."""

NAME = "xtuner-v1"
FORMATS = ("python",)
MARKERS = (b"xtuner.v1",)


def plan(doc, outside):
    return None
