"""Worker-id leases in etcd, through its v3 JSON gateway (docs/leases.md)."""
