"""Every bound batchlint's readers and evaluators keep, in one place.

A bound is checked before the work it guards is done. A value past a bound is
`Unknown`; a file past a bound is one BL003 diagnostic (`LimitExceeded`), never
a crash, a hang or an exhausted machine. The README lists these numbers.
"""

# Whole files. Training configs are a few kB; a file larger than this is not one.
MAX_FILE_BYTES = 4 << 20
