"""clean: only what the tool created, planned (pure) then removed."""
