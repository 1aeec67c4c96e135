"""`draplane bench`: scheduler_perf-like DRA workloads, metric collection, reports and plots."""
