"""CRD validation rules (`x-kubernetes-validations`, CEL) as apiextensions-apiserver runs
them: checked when a CustomResourceDefinition is written (`crd_rule_errors`) and evaluated on
every custom resource write (`rule_errors`). See `env` (the environment and libraries), `rules`
(compiling a node's rules), `crdvalidation` and `evaluate`."""

from draplane.apiserver.crdcel.crdvalidation import crd_rule_errors
from draplane.apiserver.crdcel.evaluate import rule_errors

__all__ = ["crd_rule_errors", "rule_errors"]
