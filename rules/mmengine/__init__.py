"""Rules about mmengine's config system as the frameworks built on it load configs."""
