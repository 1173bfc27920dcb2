from batchlint.entry import run

run()
