"""The `draplane` command: one subcommand module per component."""
