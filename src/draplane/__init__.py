"""draplane: Kubernetes Dynamic Resource Allocation (classic DRA) as a Python control plane."""

__version__ = "0.1.0"
