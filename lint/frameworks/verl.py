"""verl YAML (Hydra) configs. Not read yet: see the issue tracker."""

NAME = "verl"
FORMATS = ("yaml",)
MARKERS = (b"actor_rollout_ref",)


def plan(doc, outside):
    return None
