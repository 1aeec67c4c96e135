"""Client side of the API: the `Client` protocol, LocalClient, RESTClient, informers, workqueue."""
