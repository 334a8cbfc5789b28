"""The fleet chaos harness (scripts/fleet-chaos): docs/reliability.md, "The chaos harness"."""
