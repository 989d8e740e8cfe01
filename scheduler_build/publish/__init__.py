"""publish: take an assembled OCI layout to a registry (push) or the local engine (load); never builds."""
