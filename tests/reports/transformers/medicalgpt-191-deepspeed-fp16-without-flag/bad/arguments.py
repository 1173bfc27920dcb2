from dataclasses import dataclass, field


@dataclass
class ModelArguments:
    model_name_or_path: str = field(default=None)


@dataclass
class DataArguments:
    train_file_dir: str = field(default=None)


@dataclass
class ScriptArguments:
    template_name: str = field(default="vicuna")
