"""GoPlus-compatible ``token_security`` answers: what one entry is rendered from
(:class:`Facts`, gathered by :mod:`.goplus_facts`), GoPlus's envelope and entry, and the
rendering (pure: no node call, no check run).

GoPlus's envelope is ``{"code", "message", "result"}`` with ``result`` keyed by the
lower-case token address; flags are the strings ``"1"`` / ``"0"``, taxes fractions
(``"0.05"`` is 5%), amounts decimal strings in token units, percentages fractions of the
total supply.  Each field here is derived from tokenrisk's own measurements (the
simulated buyer's journey, the owner-power scan, the call trace and verification, the
holder index, the node); a field tokenrisk cannot know for a token is omitted, never
guessed (docs/goplus.md lists the derivations and the fields never sent).

Error codes are GoPlus's (its SDKs' ``ErrorCode``): 1 success, 2004 a bad address,
2018 a chain not supported, 5006 a bad parameter.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tokenrisk.checks.results import HoneypotResult, PairRow, TopHoldersResult
from tokenrisk.findings import OwnerPowers
from tokenrisk.model import Analysis, Pool, SimulationReport, TokenInfo
from tokenrisk.risk import leg_tax, usable_simulation

SUCCESS, ADDRESS_FORMAT_ERROR, CHAIN_NOT_SUPPORTED, PARAM_ERROR = 1, 2004, 2018, 5006

ONE, ZERO = "1", "0"

POWERS = {  # GoPlus field -> the owner-power findings that set it to "1"
    "is_mintable": ("owner_can_mint",),
    "owner_change_balance": ("owner_can_move_balances",),
    "transfer_pausable": ("owner_can_pause_trading", "owner_can_block_transfers"),
    "is_blacklisted": ("owner_can_blacklist",),
    "slippage_modifiable": (
        "owner_can_set_sell_tax",
        "owner_can_set_buy_tax",
        "owner_can_adjust_fees",
    ),
    "anti_whale_modifiable": ("owner_can_limit_transactions",),
}


# WHAT AN ENTRY IS RENDERED FROM


@dataclass(frozen=True)
class People:
    """The token's creator and the raw balances of its owner and creator (lower-case
    address -> balance; an address whose balanceOf reverted is absent)."""

    creator: str | None = None
    balances: dict[str, int] = field(default_factory=dict)
    code: str | None = None  # runtime code, 0x-hex; None when unread


@dataclass(frozen=True)
class Facts:
    """Everything one entry is rendered from.  ``result`` is None when the token has no
    pool (IsHoneypot's "No pairs found"): then only the token's own facts are known."""

    token: TokenInfo
    result: HoneypotResult | None
    pairs: tuple[PairRow, ...]
    holders: TopHoldersResult | None
    lp_holders: TopHoldersResult | None
    lp_holder_count: int | None
    people: People


SELFDESTRUCT = 0xFF
PUSH1, PUSH32 = 0x60, 0x7F


def has_selfdestruct(code_hex: str) -> bool:
    """Whether the runtime code contains a SELFDESTRUCT instruction (push data skipped,
    so a 0xff inside a constant does not count).  Reachability is not proven: GoPlus's
    ``selfdestruct`` is likewise "the contract can self-destruct"."""
    code = bytes.fromhex(code_hex[2:] if code_hex.startswith("0x") else code_hex)
    i = 0
    while i < len(code):
        op = code[i]
        if op == SELFDESTRUCT:
            return True
        i += 1 + (op - PUSH1 + 1 if PUSH1 <= op <= PUSH32 else 0)
    return False


# THE ENVELOPE AND THE ENTRY


class GoPlusModel(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Holder(GoPlusModel):
    address: str = Field(description="Holder address (lower case).")
    tag: str = Field(default="", description="Always empty: tokenrisk labels no address.")
    is_contract: int = Field(description="1 when the holder is a contract, else 0.")
    balance: str = Field(description="Balance in token units (decimal string).")
    percent: str = Field(description="Share of the total supply as a fraction (0.05 = 5%).")


class Dex(GoPlusModel):
    name: str = Field(description="DEX and version, e.g. UniswapV2.")
    liquidity: str | None = Field(default=None, description="USD liquidity; absent if unknown.")
    pair: str = Field(description="Pair or pool address.")


class TokenSecurity(GoPlusModel):
    """One token's entry; every field is optional (omitted when not known)."""

    token_name: str | None = None
    token_symbol: str | None = None
    total_supply: str | None = None
    holder_count: str | None = None
    holders: list[Holder] | None = None
    lp_holder_count: str | None = None
    lp_total_supply: str | None = None
    lp_holders: list[Holder] | None = None
    is_in_dex: str | None = None
    dex: list[Dex] | None = None
    is_honeypot: str | None = None
    buy_tax: str | None = None
    sell_tax: str | None = None
    cannot_buy: str | None = None
    cannot_sell_all: str | None = None
    trading_cooldown: str | None = None
    is_anti_whale: str | None = None
    anti_whale_modifiable: str | None = None
    is_open_source: str | None = None
    is_proxy: str | None = None
    external_call: str | None = None
    selfdestruct: str | None = None
    is_mintable: str | None = None
    owner_change_balance: str | None = None
    transfer_pausable: str | None = None
    is_blacklisted: str | None = None
    slippage_modifiable: str | None = None
    hidden_owner: str | None = None
    can_take_back_ownership: str | None = None
    owner_address: str | None = None
    owner_balance: str | None = None
    owner_percent: str | None = None
    creator_address: str | None = None
    creator_balance: str | None = None
    creator_percent: str | None = None


class TokenSecurityResponse(GoPlusModel):
    code: int = Field(description="1 on success; 2004 bad address; 2018 chain not supported.")
    message: str = Field(description='"OK", or what went wrong.')
    result: dict[str, TokenSecurity] | None = Field(
        default=None, description="Lower-case token address -> its entry (null on error)."
    )


def dump(response: TokenSecurityResponse) -> dict[str, Any]:
    """JSON-ready envelope; unknown fields omitted, ``result`` null on errors (GoPlus)."""
    body = response.model_dump(mode="json", exclude_none=True)
    body.setdefault("result", None)
    return body


def failure(code: int, message: str) -> TokenSecurityResponse:
    return TokenSecurityResponse(code=code, message=message, result=None)


# RENDER


def token_security(facts: Facts) -> TokenSecurity:
    """One token's entry (see the module docstring for the conventions)."""
    token = facts.token
    analysis = facts.result.analysis if facts.result else None
    sim = usable_simulation(analysis.simulation) if analysis else None
    powers = analysis.owner_powers if analysis else None
    return TokenSecurity(
        token_name=token.name,
        token_symbol=token.symbol,
        total_supply=_units(token.total_supply, token.decimals),
        holder_count=None if token.total_holders is None else str(token.total_holders),
        holders=_holders(facts.holders, token.decimals),
        **_lp(facts),
        is_in_dex=_flag(bool(facts.pairs)),
        dex=[_dex(row.pool) for row in facts.pairs],
        **_verdict(facts),
        **_trade(analysis, sim),
        **_code(facts, analysis),
        **_powers(powers),
        **_people(facts, powers),
    )


def _flag(value: bool | None) -> str | None:
    return None if value is None else ONE if value else ZERO


def _units(raw: int | None, decimals: int) -> str | None:
    """A raw amount in token units, as an exact decimal string (no exponent)."""
    if raw is None:
        return None
    text = format(Decimal(raw).scaleb(-decimals), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def _fraction(part: int | None, whole: int | None) -> str | None:
    if part is None or not whole:
        return None
    return _decimal(Decimal(part) / Decimal(whole))


def _decimal(value: Decimal) -> str:
    text = format(value.quantize(Decimal("0.000001")), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def _holders(top: TopHoldersResult | None, decimals: int) -> list[Holder] | None:
    if top is None:
        return None
    return [
        Holder(
            address=h.address.lower(),
            is_contract=int(h.is_contract),
            balance=_units(h.balance, decimals) or "0",
            percent=_fraction(h.balance, top.total_supply) or "0",
        )
        for h in top.holders
    ]


LP_DECIMALS = 18  # a Uniswap V2 pair's LP token


def _lp(facts: Facts) -> dict[str, Any]:
    lp = facts.lp_holders
    if lp is None:
        return {}
    count = facts.lp_holder_count
    return {
        "lp_holder_count": None if count is None else str(count),
        "lp_total_supply": _units(lp.total_supply, LP_DECIMALS),
        "lp_holders": _holders(lp, LP_DECIMALS),
    }


def _dex(pool: Pool) -> Dex:
    liquidity = None if pool.liquidity_usd is None else _decimal(Decimal(pool.liquidity_usd))
    return Dex(name=pool.type, liquidity=liquidity, pair=pool.address.lower())


def _verdict(facts: Facts) -> dict[str, Any]:
    if facts.result is None:
        return {}
    return {"is_honeypot": _flag(facts.result.verdict.is_honeypot)}


def _tax(ok: bool, percent: float | None) -> str | None:
    """A leg's tax as a fraction: "1" when the leg reverted (nothing delivered)."""
    if not ok:
        return ONE
    return None if percent is None else _decimal(Decimal(str(round(percent, 4))) / 100)


def _trade(analysis: Analysis | None, sim: SimulationReport | None) -> dict[str, Any]:
    """What the simulated buyer's journey measured; nothing when it could not buy
    (``cannot_buy`` is "1" when the simulation ran and the buy reverted)."""
    ran = analysis.simulation if analysis else None
    if sim is None:
        bought = ran is not None and ran.success and not ran.buy_ok
        return {"cannot_buy": ONE, "buy_tax": ONE} if bought else {}
    limited = sim.max_sell_fraction is not None and sim.max_sell_fraction < 1
    return {
        "cannot_buy": ZERO,
        # the effective tax, else the token-unit one; unmeasured: absent, never "0"
        "buy_tax": _tax(True, leg_tax(sim, "buy")),
        "sell_tax": _tax(sim.sell_ok, leg_tax(sim, "sell")),
        "cannot_sell_all": _flag(not sim.sell_ok or limited),
        # a cooldown seen is "1"; not seeing one proves nothing (a timed cooldown may
        # not show in one simulated journey), so it is never "0"
        "trading_cooldown": ONE if sim.one_sell_per_block else None,
        "is_anti_whale": _flag(sim.max_buy is not None or sim.max_sell is not None),
    }


def _code(facts: Facts, analysis: Analysis | None) -> dict[str, Any]:
    """Verification and the call tree (traced buy and sell), and the code itself."""
    out: dict[str, Any] = {}
    code = analysis.code if analysis else None
    if code is not None:
        token = facts.token.address.lower()
        if not code.root_unknown:
            out["is_open_source"] = _flag(code.root_open_source)
        out["is_proxy"] = _flag(code.is_proxy)
        calls = [c for c in code.calls if c.from_address.lower() == token]
        out["external_call"] = _flag(any(c.to_address.lower() != token for c in calls))
    raw = facts.people.code
    if raw and raw != "0x" and not out.get("is_proxy") == ONE:
        out["selfdestruct"] = _flag(has_selfdestruct(raw))
    return out


def _powers(powers: OwnerPowers | None) -> dict[str, Any]:
    """Owner powers found by trial: "1" with a finding, "0" only after a complete scan
    (not cut short by a bound); absent when the scan did not run."""
    if powers is None or not powers.scanned:
        return {}
    kinds = {f.kind for f in powers.findings}
    complete = not powers.bounded
    out: dict[str, Any] = {}
    for name, ids in POWERS.items():
        found = bool(kinds.intersection(ids))
        out[name] = ONE if found else ZERO if complete else None
    owner = (powers.owner or "").lower()
    strangers = {
        (f.caller or "").lower()
        for f in powers.findings
        if f.caller and f.kind != "owner_renounced"
    } - {owner, ""}
    out["hidden_owner"] = ONE if strangers else ZERO if complete else None
    retaken = any(
        f.kind == "ownership_transferable" and (f.caller or "").lower() != owner
        for f in powers.findings
    )
    out["can_take_back_ownership"] = ONE if retaken else ZERO if complete else None
    return out


def _people(facts: Facts, powers: OwnerPowers | None) -> dict[str, Any]:
    supply, decimals = facts.token.total_supply, facts.token.decimals
    held = facts.people.balances
    out: dict[str, Any] = {}
    owner = powers.owner if powers is not None and powers.scanned else None
    for role, address in (("owner", owner), ("creator", facts.people.creator)):
        if address is None:
            continue
        out[f"{role}_address"] = address.lower()
        balance = held.get(address.lower())
        out[f"{role}_balance"] = _units(balance, decimals)
        out[f"{role}_percent"] = _fraction(balance, supply)
    return out
