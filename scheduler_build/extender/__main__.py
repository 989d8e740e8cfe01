from scheduler_build.extender.cli import main

main()
