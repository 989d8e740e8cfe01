from scheduler_build.entry import main

main()
