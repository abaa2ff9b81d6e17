"""Chain access: JSON-RPC client, ABI helpers, registry, capabilities, tokens, DEX pairs."""
