"""Operator configuration: one frozen, validated object built once from a TOML file and
the environment, both read through the same schema (:class:`Settings`).

Sources, later wins: the schema's defaults, the TOML file (``--config`` or
``TOKENRISK_CONFIG``), ``TOKENRISK_*`` environment variables.  Nested keys come from the
environment as ``TOKENRISK_<SECTION>__<KEY>`` (``TOKENRISK_VERIFICATION__TIMEOUT=3``);
lists and tables as JSON.  A few older names keep working: ``TOKENRISK_API_KEYS=k1,k2``,
``TOKENRISK_RPC_URL_<chainid>``, ``TOKENRISK_FORK_URL_<chainid>`` and
``TOKENRISK_VERIFICATION_ETHERSCAN_KEY``.

A key the schema does not know is an error naming the key and the file's line, a bad
value is a one-line :class:`ConfigError` naming the key and where it came from (never
the value: it may be a secret).  Relative paths written in the file are relative to
the file.  RPC URLs come only from here, never from a request.

docs/configuration.md lists every key; its table is :func:`reference_markdown` and a test
keeps the two equal.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import tomllib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic import model_validator as _model_validator
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
)
from pydantic_settings.sources.utils import parse_env_vars

from tokenrisk.chain.registry import apply_overrides, load_registry
from tokenrisk.errors import ConfigError
from tokenrisk.tiers import DEFAULT_TIER, NAME, Tier, tier_table
from tokenrisk.verification.settings import VerificationSettings

ENV_PREFIX = "TOKENRISK_"
_NODE_ENV = re.compile(r"^TOKENRISK_(RPC|FORK)_URL_(\d+)$", re.IGNORECASE)
_LEGACY_ENV = {"TOKENRISK_VERIFICATION_ETHERSCAN_KEY": ("verification", "etherscan_key")}
_ADDRESS = r"^0x[0-9a-fA-F]{40}$"


class _Section(BaseModel):
    """A table of the file: frozen, unknown keys rejected."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class ChainNode(_Section):
    """Where the node of one chain is: direct ``rpc_url`` or a local anvil fork of ``fork_url``."""

    id: int = Field(gt=0, description="chain id the node serves")
    rpc_url: str | None = Field(default=None, repr=False, description="JSON-RPC URL (direct mode)")
    fork_url: str | None = Field(
        default=None, repr=False, description="upstream URL that a local anvil forks (fork mode)"
    )
    fork_block: int | None = Field(default=None, ge=0, description="block to pin the fork to")
    fork_max_age: float = Field(
        default=36.0,
        ge=0,
        description="seconds an unpinned fork serves before it forks again at the upstream "
        "head (3 Ethereum blocks); 0 = never",
    )
    max_batch: int | None = Field(
        default=None,
        ge=1,
        description="most requests per JSON-RPC batch the node accepts (providers: 10-100); "
        "unset: learnt from the node's first refusal",
    )

    @_model_validator(mode="after")
    def _has_url(self) -> ChainNode:
        if not (self.rpc_url or self.fork_url):
            raise ValueError("every node needs rpc_url or fork_url")
        return self

    @property
    def chain_id(self) -> int:
        return self.id


class BaseTokenEntry(_Section):
    """A token the service buys with: the wrapped native coin or a stablecoin."""

    address: str = Field(pattern=_ADDRESS, description="token address")
    symbol: str = Field(description="its symbol")
    decimals: int = Field(ge=0, le=77, description="its decimals")


class DexEntry(_Section):
    """A Uniswap V2 or V3 compatible DEX (docs/chains.md says which routers work)."""

    name: str = Field(description="DEX name; (name, version) replaces a registry DEX")
    version: Literal["V2", "V3"] = Field(description="`V2` or `V3`")
    factory: str = Field(pattern=_ADDRESS, description="factory address")
    router: str = Field(pattern=_ADDRESS, description="router address")
    init_code_hash: str | None = Field(
        default=None, pattern=r"^0x[0-9a-fA-F]{64}$", description="pair/pool init code hash"
    )
    deployer: str | None = Field(
        default=None, pattern=_ADDRESS, description="V3 pool deployer when not the factory"
    )
    display_name: str | None = Field(
        default=None, description='how pools are named, e.g. "SushiSwap" (default: name version)'
    )
    quoter: str | None = Field(default=None, pattern=_ADDRESS, description="V3 QuoterV2 address")
    fee_tiers: tuple[int, ...] | None = Field(
        default=None, description="V3 fee tiers (3000 = 0.3%)"
    )


class ChainEntry(_Section):
    """A ``[[chains]]`` table: a new chain (complete) or changes to a registry chain."""

    id: int = Field(gt=0, description="chain id")
    replace: bool = Field(
        default=False, description="replace the registry entry instead of merging"
    )
    name: str | None = Field(default=None, description="chain name")
    short_name: str | None = Field(default=None, description="short name")
    currency: str | None = Field(default=None, description="native currency symbol")
    wrapped_native: BaseTokenEntry | None = Field(default=None, description="wrapped native coin")
    stablecoins: tuple[BaseTokenEntry, ...] | None = Field(
        default=None, description="stablecoins (merged by symbol)"
    )
    dexes: tuple[DexEntry, ...] | None = Field(
        default=None, description="DEXes (merged by name+version)"
    )
    whitelist: tuple[Annotated[str, Field(pattern=_ADDRESS)], ...] | None = Field(
        default=None, description="well-known tokens (added)"
    )

    def entry(self) -> dict[str, Any]:
        """The table as the registry merges it: only the keys that were set."""
        return self.model_dump(exclude_unset=True)


_Provider = Literal["local", "sourcify", "etherscan"]
_LocalPaths = dict[int, tuple[Path, ...]]


class VerificationConfig(_Section):
    """The ``[verification]`` table; see docs/verification.md for what each provider does."""

    providers: tuple[_Provider, ...] = Field(
        default=("local",), description="providers to ask, in order"
    )
    local_paths: _LocalPaths = Field(
        default_factory=dict,
        description="chain id -> local registry file or list of files (the devnet's is added)",
    )
    sourcify_url: str | None = Field(default=None, description="Sourcify server root")
    sourcify_api: Literal["v2", "legacy"] = Field(
        default="v2", description="Sourcify API generation"
    )
    sourcify_chains: tuple[int, ...] = Field(
        default=(), description="chains to ask Sourcify (empty: all)"
    )
    etherscan_url: str | None = Field(default=None, description="Etherscan-compatible API URL")
    etherscan_key: str | None = Field(
        default=None, repr=False, description="explorer API key; prefer the environment"
    )
    etherscan_chains: tuple[int, ...] = Field(
        default=(), description="chains to ask the explorer (empty: all)"
    )
    timeout: float = Field(default=5.0, gt=0, description="seconds per remote provider request")
    cache_ttl: float = Field(default=3600.0, ge=0, description="seconds a verified answer is kept")
    negative_cache_ttl: float = Field(
        default=300.0, ge=0, description="seconds 'not verified' is kept"
    )
    concurrency: int = Field(default=8, ge=1, description="provider lookups in flight at once")

    @field_validator("local_paths", mode="before")
    @classmethod
    def _one_or_many(cls, raw: Any) -> Any:
        if not isinstance(raw, Mapping):
            return raw
        return {k: [v] if isinstance(v, str | Path) else v for k, v in raw.items()}

    @_model_validator(mode="after")
    def _complete(self) -> VerificationConfig:
        self.settings()  # raises ValueError for e.g. sourcify listed without sourcify_url
        return self

    def settings(self) -> VerificationSettings:
        """The verifier's own settings value (validated again there)."""
        values = self.model_dump()
        values["local_paths"] = {k: list(v) for k, v in self.local_paths.items()}
        return VerificationSettings(**values)


class ServerConfig(_Section):
    """The ``[server]`` table: limits of the HTTP server and of who is trusted (see
    docs/operations.md for what an operator sees when each is hit)."""

    max_connections: int = Field(
        default=1024, ge=1, description="open connections at most; more are closed at once"
    )
    max_pending_connections: int = Field(
        default=256,
        ge=1,
        description="connections still sending their request head; the oldest is dropped",
    )
    header_timeout: float = Field(
        default=10.0, gt=0, description="seconds a connection may take to send a request head"
    )
    keep_alive_timeout: float = Field(
        default=5.0, gt=0, description="seconds an idle keep-alive connection stays open"
    )
    max_header_bytes: int = Field(
        default=16384, ge=1024, description="request line plus headers at most (else 400)"
    )
    trusted_proxies: tuple[str, ...] = Field(
        default=(),
        description="proxy addresses/networks whose X-Forwarded-For is believed (else ignored)",
    )
    auth_failures_per_minute: int = Field(
        default=10, ge=0, description="wrong API keys per client per minute, then 429; 0 = off"
    )
    health_cache_ttl: float = Field(
        default=1.0, ge=0, description="seconds one /health probe of the nodes is reused"
    )

    @field_validator("trusted_proxies")
    @classmethod
    def _networks(cls, raw: tuple[str, ...]) -> tuple[str, ...]:
        for entry in raw:
            ipaddress.ip_network(entry, strict=False)  # ValueError names nothing secret
        return raw


class OwnerPowersConfig(_Section):
    """The ``[owner_powers]`` table: the owner-power scan (docs/owner-powers.md)."""

    enabled: bool = Field(default=True, description="run the owner-power scan in IsHoneypot")
    deadline: float = Field(default=3.0, gt=0, description="seconds one scan may take")
    max_functions: int = Field(default=24, ge=1, description="functions tried per token")
    max_callers: int = Field(default=6, ge=1, description="candidate callers tried as senders")
    max_arg_sets: int = Field(default=20, ge=1, description="hostile argument sets per function")
    max_trials: int = Field(default=60, ge=1, description="owner-call simulations per token")
    cache_ttl: float = Field(
        default=600.0, ge=0, description="seconds a scan is reused (same code, callers, pool)"
    )


class WebhookConfig(_Section):
    """One ``[[watch.webhooks]]`` endpoint: every watch event is POSTed to ``url``,
    signed with HMAC-SHA256 under ``secret`` (docs/watch.md)."""

    url: str = Field(repr=False, description="where events are POSTed (never logged)")
    secret: str = Field(
        min_length=16, repr=False, description="HMAC-SHA256 key of the signature header"
    )


class WatchConfig(_Section):
    """The ``[watch]`` table: the watcher (``tokenrisk watch``, ``serve --watch``)."""

    embedded: bool = Field(
        default=False, description="run the watcher inside the server (`serve --watch` sets it)"
    )
    chains: tuple[int, ...] = Field(default=(), description="chains followed; all when empty")
    poll_interval: float = Field(default=1.0, gt=0, description="seconds between head polls")
    blocks_per_step: int = Field(default=10, ge=1, description="blocks processed per step")
    max_checks_per_step: int = Field(
        default=16, ge=1, description="checks in flight at most (handed out, not done)"
    )
    max_checks_per_block: int = Field(
        default=4,
        ge=1,
        description="checks handed out per block the head moves; the rest queue (the lag)",
    )
    interval_blocks: int = Field(
        default=0, ge=0, description="re-check every watched token every N blocks (0: off)"
    )
    tax_threshold: float = Field(
        default=5.0, ge=0, description="percentage points a tax must move to make an alert"
    )
    liquidity_threshold: float = Field(
        default=20.0,
        ge=0,
        description="percent of a pool's base reserve a Mint/Burn must move to re-check (0: any)",
    )
    private_webhooks: bool = Field(
        default=False,
        description="keys may register webhooks on loopback/private addresses (tests, LAN)",
    )
    webhooks: tuple[WebhookConfig, ...] = Field(default=(), description="`[[watch.webhooks]]`")
    webhook_attempts: int = Field(default=5, ge=1, description="tries before a dead letter")
    webhook_backoff: float = Field(default=1.0, gt=0, description="seconds before a 2nd try")


class Settings(BaseSettings):
    """Every key of the config file.  The environment is read by :func:`load_settings`,
    not here, so a ``Settings(...)`` built in code or tests is exactly what it says."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_nested_delimiter="__",
        extra="forbid",
        frozen=True,
        validate_default=True,
    )

    host: str = Field(default="127.0.0.1", description="listen address of `tokenrisk serve`")
    port: int = Field(default=8080, ge=1, le=65535, description="listen port of `tokenrisk serve`")
    workers: int = Field(default=1, ge=1, description="API worker processes")
    deadline: float = Field(default=25.0, gt=0, description="seconds a request may take, then 504")
    rpc_timeout: float = Field(default=10.0, gt=0, description="seconds per node request")
    rpc_max_reply_bytes: int = Field(
        default=32 * 1024 * 1024, ge=1024, description="bytes of one node reply at most, then 502"
    )
    rpc_max_depth: int = Field(
        default=256, ge=8, description="JSON nesting of one node reply at most, then 502"
    )
    rpc_max_request_bytes: int = Field(
        default=1024 * 1024,
        ge=0,
        description="bytes of one batch request body at most; larger batches are split (0: no cap)",
    )
    holder_limit: int = Field(
        default=100, ge=0, description="holders simulated in holderAnalysis; 0 = none"
    )
    cache_ttl: float = Field(
        default=15.0, ge=0, description="seconds a result is reused (same head)"
    )
    head_reuse: float = Field(
        default=0.0,
        ge=0,
        description="seconds a chain head read for one request keys other requests' "
        "results-cache lookups (a hit then costs no node call, but may be the previous "
        "block's answer for that long); 0 = every lookup reads it (exact)",
    )
    head_ahead: float = Field(
        default=0.25,
        ge=0,
        le=1,
        description="a check of a token resolved at the head this worker read less than "
        "this fraction of the chain's block interval ago plans at that head, beside the "
        "head read that confirms it (one round trip; a block mined meanwhile wastes that "
        "work and the check runs again at the new head); 0 = off",
    )
    api_keys: Annotated[frozenset[str], NoDecode] = Field(
        default=frozenset(),
        repr=False,
        description="keys accepted besides `tokenrisk keys` ones; non-empty: keys required "
        "(see `require_api_key`); env: comma-separated",
    )
    rate_limit_per_minute: int = Field(
        default=0,
        ge=0,
        description="requests per key (or client address) per minute; 0 = off "
        "(the built-in `default` tier's limit)",
    )
    require_api_key: bool | None = Field(
        default=None,
        description="refuse requests without a valid key (401); unset: true when `api_keys` is set",
    )
    api_keys_tier: str | None = Field(
        default=None, description="tier of the `api_keys` keys; unset: `default_tier`"
    )
    default_tier: str = Field(
        default=DEFAULT_TIER, description="tier of requests without a key (keys not required)"
    )
    tiers: dict[str, Tier] = Field(
        default_factory=dict,
        description="`[tiers.NAME]` tables: limits and analyses per tier (docs/api.md#tiers)",
    )
    operator_key: str | None = Field(
        default=None,
        repr=False,
        description="enables /admin/keys and /admin/usage for requests with this "
        "X-OPERATOR-KEY (docs/api.md); prefer the environment",
    )
    key_pepper: str | None = Field(
        default=None,
        repr=False,
        description="server secret: keys made by `tokenrisk keys` are stored as HMAC-SHA256 "
        "under it instead of SHA-256",
    )
    data_dir: Path = Field(default=Path(".tokenrisk"), description="SQLite store and node logs")
    store_url: str | None = Field(
        default=None,
        repr=False,
        description="SQLAlchemy URL of the store (default: SQLite in data_dir)",
    )
    devnet: bool = Field(
        default=True, description="run the embedded devnet (default: no nodes configured)"
    )
    mcp_http: bool = Field(
        default=True,
        description="serve the MCP tools over streamable HTTP at /mcp (`tokenrisk mcp` "
        "serves them on stdio either way)",
    )
    log_format: Literal["text", "json"] = Field(
        default="text",
        description="`tokenrisk serve` logs: plain text, or one JSON object a line",
    )
    max_concurrent_simulations: int = Field(
        default=8, ge=1, description="simulations running at once in one process; the rest wait"
    )
    admission_limit: int = Field(
        default=16,
        ge=0,
        description="uncached checks in progress per chain in one worker; more get 503 "
        "with Retry-After at once; 0 = no limit",
    )
    redis_url: str | None = Field(
        default=None,
        repr=False,
        description="Redis shared by all API workers and `tokenrisk worker` (cache, single "
        "flight, rate limits, index jobs); unset: one process keeps them in memory",
    )
    index_inline_blocks: int = Field(
        default=50_000,
        ge=0,
        description="with Redis: a holder index further behind the head than this is built "
        "by a background job instead of inside the request",
    )
    index_jobs: int = Field(default=2, ge=1, description="index jobs one `tokenrisk worker` runs")
    devnet_url: str | None = Field(
        default=None,
        repr=False,
        description="use this running devnet node instead of starting one (`serve --workers` "
        "sets it so that every worker shares one devnet)",
    )
    nodes: tuple[ChainNode, ...] = Field(default=(), description="one `[[nodes]]` table per chain")
    chains: tuple[ChainEntry, ...] = Field(
        default=(), description="`[[chains]]`: add or override registry chains (docs/chains.md)"
    )
    whitelist: dict[int, tuple[Annotated[str, Field(pattern=_ADDRESS)], ...]] = Field(
        default_factory=dict, description="chain id -> well-known token addresses (very_low risk)"
    )
    verification: VerificationConfig = Field(
        default=VerificationConfig(), description="`[verification]` table"
    )
    server: ServerConfig = Field(default=ServerConfig(), description="`[server]` table")
    owner_powers: OwnerPowersConfig = Field(
        default=OwnerPowersConfig(), description="`[owner_powers]` table"
    )
    watch: WatchConfig = Field(default=WatchConfig(), description="`[watch]` table")
    cors_origins: Annotated[tuple[str, ...], NoDecode] = Field(
        default=("*",),
        description="browser origins allowed to call the API (CORS); `[]` turns CORS off; "
        "env: comma-separated",
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings,)

    @_model_validator(mode="before")
    @classmethod
    def _devnet_default(cls, values: Any) -> Any:
        """The embedded devnet runs unless chain nodes are configured (or it is set)."""
        if isinstance(values, dict) and "devnet" not in values:
            return {**values, "devnet": not values.get("nodes")}
        return values

    @field_validator("api_keys", "cors_origins", mode="before")
    @classmethod
    def _split_keys(cls, raw: Any) -> Any:
        if isinstance(raw, str) and raw.lstrip().startswith("["):
            try:
                return json.loads(raw)
            except ValueError:
                raise ValueError("not a JSON list") from None
        if isinstance(raw, str):
            return [key.strip() for key in raw.split(",") if key.strip()]
        return raw

    @_model_validator(mode="after")
    def _tiers_known(self) -> Settings:
        """Tier names are key-name safe, and the tiers named by other keys exist."""
        for name in self.tiers:
            if not NAME.match(name):
                raise ValueError(f"tier name {name!r}: use letters, digits, '.', '_' or '-'")
        known = self.tier_table()
        for key in ("default_tier", "api_keys_tier"):
            value = getattr(self, key)
            if value is not None and value not in known:
                raise ValueError(f"{key}: no tier named {value!r} (known: {', '.join(known)})")
        return self

    def tier_table(self) -> dict[str, Tier]:
        """Every tier by name, the built-in ``default`` included (tokenrisk.tiers)."""
        return tier_table(self.tiers, self.rate_limit_per_minute)

    @property
    def keys_required(self) -> bool:
        return bool(self.api_keys) if self.require_api_key is None else self.require_api_key

    @_model_validator(mode="after")
    def _chains_complete(self) -> Settings:
        """A new chain must be complete; checked here so it fails at start-up, by id."""
        apply_overrides(load_registry(), self.chain_entries())
        return self

    def chain_entries(self) -> list[dict[str, Any]]:
        return [chain.entry() for chain in self.chains]

    @property
    def database_url(self) -> str:
        return self.store_url or f"sqlite:///{self.data_dir / 'tokenrisk.sqlite3'}"


# --- loading -------------------------------------------------------------------------


def load_settings(path: Path | None = None, env: Mapping[str, str] | None = None) -> Settings:
    """Build the Settings from ``path`` (else ``TOKENRISK_CONFIG``) and ``env`` (else the
    process environment).  Raises ConfigError with a one-line message."""
    env = os.environ if env is None else env
    if path is None and env.get("TOKENRISK_CONFIG"):
        path = Path(env["TOKENRISK_CONFIG"])
    text, file_values = _read_file(path) if path is not None else ("", {})
    values = _merge(file_values, _env_values(env))
    try:
        return Settings(**values)
    except ValidationError as exc:
        raise ConfigError(_describe(exc, path, text, env)) from None


def _read_file(path: Path) -> tuple[str, dict[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8")
        values = tomllib.loads(text)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read config file {path}: {exc}") from None
    return text, _resolve_paths(values, path.resolve().parent)


def _resolve_paths(values: dict[str, Any], base: Path) -> dict[str, Any]:
    """Relative paths in the file are relative to the file, not to the working directory."""

    def resolved(raw: Any) -> Any:
        return str(base / raw) if isinstance(raw, str) and not Path(raw).is_absolute() else raw

    if "data_dir" in values:
        values["data_dir"] = resolved(values["data_dir"])
    table = values.get("verification")
    if isinstance(table, dict) and isinstance(table.get("local_paths"), dict):
        table["local_paths"] = {
            chain: [resolved(p) for p in files] if isinstance(files, list) else resolved(files)
            for chain, files in table["local_paths"].items()
        }
    return values


class _MappingEnvSource(EnvSettingsSource):
    """pydantic-settings' environment source over a given mapping (tests pass their own)."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self._given = env
        super().__init__(Settings)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        return parse_env_vars(self._given, False, False, None)


def _env_values(env: Mapping[str, str]) -> dict[str, Any]:
    try:
        values = _MappingEnvSource(env)()
    except SettingsError as exc:
        field = re.search(r'field "(\w+)"', str(exc))
        name = f"{ENV_PREFIX}{field[1].upper()}" if field else "a TOKENRISK_* variable"
        raise ConfigError(f"{name}: not valid JSON") from None
    for name, (section, key) in _LEGACY_ENV.items():
        if name in env:
            values.setdefault(section, {}).setdefault(key, env[name])
    nodes = [
        {"id": int(match[2]), f"{match[1].lower()}_url": value}
        for name, value in env.items()
        if (match := _NODE_ENV.match(name))
    ]
    if nodes:
        values["nodes"] = _merge_nodes(values.get("nodes", []), nodes)
    return values


def _merge(file: dict[str, Any], env: dict[str, Any]) -> dict[str, Any]:
    """``file`` updated by ``env``: tables key by key, nodes by chain id, the rest replaced."""
    out = dict(file)
    for key, value in env.items():
        if key == "nodes" and isinstance(out.get(key), list) and isinstance(value, list):
            out[key] = _merge_nodes(out[key], value)
        elif isinstance(out.get(key), dict) and isinstance(value, dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def _merge_nodes(base: list[Any], extra: list[Any]) -> list[Any]:
    by_id: dict[Any, Any] = {}
    for node in [*base, *extra]:
        if not isinstance(node, dict):
            return [*base, *extra]  # not a table: let validation say so
        by_id[node.get("id")] = {**by_id.get(node.get("id"), {}), **node}
    return list(by_id.values())


# --- error messages ---------------------------------------------------------------------


def _describe(exc: ValidationError, path: Path | None, text: str, env: Mapping[str, str]) -> str:
    """All problems on one line: ``key: what is wrong (where)``; values are never shown."""
    problems = []
    for error in exc.errors():
        loc = tuple(part for part in error["loc"] if part != "[key]")
        key = _dotted(loc)
        what = "unknown key" if error["type"] == "extra_forbidden" else _message(error["msg"])
        problems.append(f"{key}: {what} ({_where(loc, path, text, env)})")
    return "invalid configuration: " + "; ".join(problems)


def _message(msg: str) -> str:
    return msg.removeprefix("Value error, ").removeprefix("Assertion failed, ")


def _dotted(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def _where(loc: tuple[int | str, ...], path: Path | None, text: str, env: Mapping[str, str]) -> str:
    for name in _env_names(loc):
        if name in env:
            return f"environment {name}"
    line = _line_of(text, loc) if text else None
    if path is not None and line is not None:
        return f"{path}, line {line}"
    if loc[:1] == ("nodes",) and any(_NODE_ENV.match(name) for name in env):
        return "environment TOKENRISK_RPC_URL_<id> / TOKENRISK_FORK_URL_<id>"
    return f"config file {path}" if path is not None else "defaults"


def _env_names(loc: tuple[int | str, ...]) -> Iterator[str]:
    names = [str(part).upper() for part in loc if isinstance(part, str)]
    for depth in range(len(names), 0, -1):
        yield ENV_PREFIX + "__".join(names[:depth])
    for legacy, target in _LEGACY_ENV.items():
        if tuple(str(p) for p in loc[: len(target)]) == target:
            yield legacy


_TABLE = re.compile(r"^\[\s*([^\[\]]+?)\s*\]$")
_ARRAY = re.compile(r"^\[\[\s*([^\[\]]+?)\s*\]\]$")
_KEY = re.compile(r"^([A-Za-z0-9_\-.\"' ]+?)\s*=")


def _line_of(text: str, loc: tuple[int | str, ...]) -> int | None:
    """Line of the file that sets ``loc`` (or its closest enclosing key or table)."""
    found: dict[tuple[int | str, ...], int] = {}
    table: tuple[int | str, ...] = ()
    latest: dict[tuple[int | str, ...], int] = {}  # array table path -> its current index
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if match := _ARRAY.match(line):
            array = _in_arrays(_toml_key(match[1]), latest)
            latest[array] = latest.get(array, -1) + 1
            table = (*array, latest[array])
        elif match := _TABLE.match(line):
            table = _in_arrays(_toml_key(match[1]), latest)
        elif match := _KEY.match(line):
            found.setdefault((*table, *_toml_key(match[1])), number)
            continue
        else:
            continue
        found.setdefault(table, number)
    for depth in range(len(loc), 0, -1):
        for key in (loc[:depth], (*loc[: depth - 1], _int(str(loc[depth - 1])))):
            if key in found:
                return found[key]
    return None


def _in_arrays(
    name: tuple[int | str, ...], latest: dict[tuple[int | str, ...], int]
) -> tuple[int | str, ...]:
    """``a.b`` of a header as a path: ``(a, <current index of [[a]]>, b)`` inside an array."""
    path: tuple[int | str, ...] = ()
    for part in name[:-1]:
        path = (*path, part)
        if path in latest:
            path = (*path, latest[path])
    return (*path, name[-1])


def _toml_key(raw: str) -> tuple[int | str, ...]:
    return tuple(part.strip().strip("\"'") for part in raw.split("."))


def _int(text: str) -> int | str:
    return int(text) if text.isdigit() else text


# --- the documented key table -----------------------------------------------------------


def reference_markdown() -> str:
    """The table of every key in docs/configuration.md (a test keeps them equal)."""
    rows = ["| key | type | default | environment | meaning |", "|---|---|---|---|---|"]
    for key, info, env in _keys(Settings.model_fields, "", ENV_PREFIX):
        rows.append(
            f"| `{key}` | {_type_name(info.annotation)} | {_default(info)} | {env} "
            f"| {info.description or ''} |"
        )
    return "\n".join(rows) + "\n"


def _keys(
    fields: Mapping[str, FieldInfo], prefix: str, env_prefix: str
) -> Iterator[tuple[str, FieldInfo, str]]:
    for name, info in fields.items():
        env = f"`{env_prefix}{name.upper()}`" if env_prefix else "(part of the table)"
        model = _model_of(info.annotation)
        if name == "nodes":
            env = "`TOKENRISK_RPC_URL_<id>`, `TOKENRISK_FORK_URL_<id>`, `TOKENRISK_NODES` (JSON)"
        legacy = [n for n, target in _LEGACY_ENV.items() if target == (prefix.rstrip("."), name)]
        env += "".join(f", `{n}`" for n in legacy)
        yield prefix + name, info, env
        if model is not None:
            origin = get_origin(_required_type(info.annotation))
            inner = {tuple: f"{prefix}{name}[].", dict: f"{prefix}{name}.<name>."}.get(origin)
            yield from _keys(
                model.model_fields,
                inner or f"{prefix}{name}.",
                "" if inner or not env_prefix else f"{env_prefix}{name.upper()}__",
            )


def _required_type(annotation: Any) -> Any:
    """``X`` of ``X | None``."""
    args = [a for a in get_args(annotation) if a is not type(None)]
    return args[0] if type(None) in get_args(annotation) and len(args) == 1 else annotation


def _model_of(annotation: Any) -> type[BaseModel] | None:
    annotation = _required_type(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    args = [a for a in get_args(annotation) if a is not Ellipsis]
    if get_origin(annotation) is tuple and len(args) == 1:
        return _model_of(args[0])
    if get_origin(annotation) is dict and len(args) == 2:  # a table of named tables
        return _model_of(args[1])
    return None


def _type_name(annotation: Any) -> str:
    origin, args = get_origin(annotation), [a for a in get_args(annotation) if a is not Ellipsis]
    if origin is Annotated:
        return _type_name(args[0])
    if origin is Literal:
        return " or ".join(f"`{a}`" for a in args)
    if origin in (tuple, frozenset, list):
        inner = _type_name(args[0])
        return "tables" if _model_of(args[0]) else f"list of {inner}"
    if origin is dict:
        if args[1] is Any:
            return "table"
        return f"table {_type_name(args[0])} → {_type_name(args[1])}"
    if args and type(None) in args:
        return " or ".join(_type_name(a) for a in args if a is not type(None)) + " (optional)"
    if _model_of(annotation) and _required_type(annotation) is not annotation:
        return _type_name(_required_type(annotation)) + " (optional)"
    if _model_of(annotation) or annotation is Any:
        return "table" if annotation is not Any else "any"
    names = {str: "string", int: "int", float: "number", bool: "bool", Path: "path"}
    return names.get(annotation, getattr(annotation, "__name__", str(annotation)))


def _default(info: FieldInfo) -> str:
    if info.is_required():
        return "required"
    if info.default_factory is not None:
        value: Any = info.default_factory()  # type: ignore[call-arg]
    else:
        value = info.default
    if isinstance(value, BaseModel) or value is None:
        return "-" if value is None else "see below"
    if isinstance(value, frozenset | tuple | list | dict) and not value:
        return "empty"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, tuple):
        return "`[" + ", ".join(f'"{v}"' for v in value) + "]`"
    return f'`"{value}"`' if isinstance(value, str | Path) else f"`{value}`"
