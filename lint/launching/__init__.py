"""Launch resolution: from the project's launch lines to the jobs the engine judges.

- `lines`: the launch reader. A command of a script (a launcher, a job scheduler's, a
  framework's CLI) becomes a frozen `Launch`: its launcher, W, the program, the configs and
  settings it names.
- `jobs`: resolving. Each line's files are found in the project and its W read; what comes out
  is immutable `Job`s, one per config a line runs. `ProjectJobs` holds, for one run, which
  launch lines run each file.
- `callers`: which files in view name a file (the inverse a config linted alone needs).
"""
