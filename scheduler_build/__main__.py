from scheduler_build.cli.entry import main

main()
