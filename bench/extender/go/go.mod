module scheduler-build/bench/extender

go 1.26
