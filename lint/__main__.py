from batchlint.entry import main

main()
