from scheduler_build.cli import main

main()
