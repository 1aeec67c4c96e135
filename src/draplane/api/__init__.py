"""Wire-level Kubernetes API: kinds, objects as dicts, Status errors, validation, patches."""
