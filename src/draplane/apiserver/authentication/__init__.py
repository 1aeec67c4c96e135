"""Authentication: who a request's credentials say it is.

- `sakeys`: the service-account signing key in the data dir (`DIR/sa.key`) and its `kid`;
- `satokens`: `TokenIssuer`, which signs service-account JWTs, and
  `ServiceAccountAuthenticator`, which validates them and yields the service account's user;
- `tokenrequest`: the `serviceaccounts/token` subresource (authentication.k8s.io/v1 TokenRequest).
"""
