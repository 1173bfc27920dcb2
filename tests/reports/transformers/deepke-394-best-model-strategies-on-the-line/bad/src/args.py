from dataclasses import dataclass, field


@dataclass
class ModelArguments:
    model_name_or_path: str = field(default=None)


@dataclass
class DataArguments:
    train_file: str = field(default=None)
    valid_file: str = field(default=None)
