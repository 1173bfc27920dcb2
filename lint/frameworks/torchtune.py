"""torchtune YAML recipes (`tune run`). Not read yet: see the issue tracker."""

NAME = "torchtune"
FORMATS = ("yaml",)
MARKERS = (b"_component_",)


def plan(doc, outside):
    return None
