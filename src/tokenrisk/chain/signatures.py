"""The event topics, function selectors and storage slots the project matches on, each
defined once.

Written out as hex so that pure modules (:mod:`tokenrisk.simulate.accounting`) can
import them without the hashing library; ``tests/unit/test_rules.py`` checks every one
against the keccak of the signature in its docstring, so none can be mistyped.
Selectors are 0x-prefixed like calldata; compare with ``data[:10]``.
"""

from __future__ import annotations

# event topics (keccak-256 of the event signature)
TRANSFER_TOPIC = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"
"""Transfer(address,address,uint256)"""
APPROVAL_TOPIC = "0x8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b925"
"""Approval(address,address,uint256)"""
PAIR_CREATED = "0x0d3648bd0f6ba80134a33ba9275ac585d9d315f0ad8355cddefde31afa28d0e9"
"""PairCreated(address,address,address,uint256)"""
POOL_CREATED = "0x783cca1c0412dd0d695e784568c96da2e9c22ff989357a2e8b1d9b2b4e6b7118"
"""PoolCreated(address,address,uint24,int24,address)"""
INITIALIZE_TOPIC = "0xdd466e674ea557f56295e2d0218a125ea4b4f0f6f3307b95f85e6110838d6438"
"""Initialize(bytes32,address,address,uint24,int24,address,uint160,int24)"""

# function selectors (the first 4 bytes of keccak-256 of the function signature)
TRANSFER = "0xa9059cbb"
"""transfer(address,uint256)"""
APPROVE = "0x095ea7b3"
"""approve(address,uint256)"""
TRANSFER_FROM = "0x23b872dd"
"""transferFrom(address,address,uint256)"""
BALANCE_OF = "0x70a08231"
"""balanceOf(address)"""
TOTAL_SUPPLY = "0x18160ddd"
"""totalSupply()"""
TOKEN0 = "0x0dfe1681"
"""token0()"""
TOKEN1 = "0xd21220a7"
"""token1()"""
OWNER = "0x8da5cb5b"
"""owner()"""
DEPOSIT = "0xd0e30db0"
"""deposit()"""
ERROR = "0x08c379a0"
"""Error(string)"""
WRAPPED_ERROR = "0x90bfb865"
"""WrappedError(address,bytes4,bytes,bytes)"""
PANIC = "0x4e487b71"
"""Panic(uint256)"""

# EIP-1967 proxy slots (keccak-256 of the label, minus one)
IMPLEMENTATION_SLOT = "0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc"
"""eip1967.proxy.implementation"""
ADMIN_SLOT = "0xb53127684a568b3173ae13b9f8a6016e243e63b6e8ee1178d6a717850b5d6103"
"""eip1967.proxy.admin"""
