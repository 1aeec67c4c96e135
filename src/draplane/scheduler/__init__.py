"""kube-scheduler: scheduling queue, framework runtime, in-tree plugins, the schedule_one loop."""
