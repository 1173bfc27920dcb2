from batchlint.cli import main

main()
