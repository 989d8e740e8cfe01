module scheduler-build.io/perf-shard

go 1.22
