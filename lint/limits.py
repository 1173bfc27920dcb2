"""Every bound batchlint's readers and evaluators keep, in one place.

A bound is checked before the work it guards is done. A value past a bound is
`Unknown`; a file past a bound is one BL003 diagnostic (`LimitExceeded`), never
a crash, a hang or an exhausted machine. The README lists these numbers.
"""

# Whole files. Training configs are a few kB; a file larger than this is not one.
MAX_FILE_BYTES = 4 << 20

# -- values: an Unknown past these ----------------------------------------------------

# Integer digits: products of a few such numbers stay far inside int/str's 4,300 digits and a float's range.
MAX_NUMBER_DIGITS = 30
# Characters of a computed string (Python, shell) or items of a computed list: doubling must not reach gigabytes.
MAX_LENGTH = 65_536
# Names a Python value records as derived from: a chain of 10,000 assignments would otherwise be quadratic.
MAX_DEPS = 64

# -- whole files: LimitExceeded past these --------------------------------------------

# Nesting of values in every format: configs nest a dozen levels; readers and rules spend stack per level.
MAX_DEPTH = 200
# Values in a document, a YAML alias counted at each use: configs hold thousands; a million costs seconds and GBs.
MAX_NODES = 50_000
# Python tokens (a string counts once, a line break once), estimated before ast.parse spends ~4 us and ~1 kB on each.
MAX_PYTHON_TOKENS = 100_000
# Fields in one Python f-string: Python 3.10 and 3.11 parse them in more than linear time.
MAX_FSTRING_FIELDS = 2_000
# Python evaluation steps (expressions, syntax nodes walked, items copied or compared): configs take thousands.
MAX_EVAL_STEPS = 500_000
# Parts of one TOML key (`a.b.c = 1`, `[a.b.c]`): tomllib's work grows with their square (40 kB took 12 s, 3 GB).
MAX_TOML_KEY_PARTS = 32
# Characters all expansions of one launch script produce: a short script can expand a long value many times.
MAX_SHELL_OUTPUT = 8 << 20
# Blocks (if/case/loops/{ }) nested in a launch script: scripts nest a few; each level is a level of recursion.
MAX_SHELL_NESTING = 64
# Branches of a launch script run apart (if/case not decided, `a && b`): each costs what it changes.
MAX_SHELL_BRANCHES = 20_000

# -- references between files: not followed past these (the file is read alone, with a notice) ----

# mmengine config inheritance (`_base_`, `with read_base()`): files read for one config, every read
# counted (a base two others share is read twice), and how deep bases may nest. Real chains are 1-3 deep.
MAX_BASE_FILES = 32
MAX_BASE_DEPTH = 8
# Hydra composition (`defaults:` lists): configs read for one composition (verl's PPO trainer
# composes about 25) and how deep defaults lists nest (real ones: 3).
MAX_COMPOSED_CONFIGS = 128
MAX_COMPOSE_DEPTH = 16
