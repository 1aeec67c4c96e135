"""kube-controller-manager's controllers: resource claim, garbage collector, namespace.

Each controller module has the same shape: informer handlers only enqueue an `ObjectKey`;
workers run the level-triggered `sync(key)`; `ControllerManager` (manager.py) runs them all.
"""
