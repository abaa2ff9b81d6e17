"""Redaction of configured secrets and API keys in every log record."""

from __future__ import annotations

import logging

import httpx
import pytest

from tokenrisk.redaction import configured_secrets, install, redact, secret_parts

KEY = "Zk4Rt8Wq2Lp6Nm0Xc3Vb"
URL = f"https://eth-mainnet.provider.test/v2/{KEY}"


def test_key_like_parts_of_urls_are_secrets_plain_words_are_not() -> None:
    assert secret_parts(URL) == {URL, KEY}
    assert secret_parts("postgresql://app:hunter22@db/tokenrisk") == {
        "postgresql://app:hunter22@db/tokenrisk",
        "hunter22",
    }
    assert configured_secrets(["k" * 8], [None, URL], {"etherscan_key": "E" * 10}) == {
        "k" * 8,
        URL,
        KEY,
        "E" * 10,
    }


def test_redact_masks_secrets_and_every_api_key_value() -> None:
    text = f"GET /v1/GetPairs?address=0x1&apiKey=anything&x=1 via {URL[:-3]}... {KEY}"
    assert redact(text, {KEY}) == "GET /v1/GetPairs?address=0x1&apiKey=***&x=1 via " + (
        URL[: -len(KEY)] + KEY[:-3] + "... ***"
    )


def test_every_log_record_is_scrubbed(caplog: pytest.LogCaptureFixture) -> None:
    install({URL, KEY})
    log = logging.getLogger("tokenrisk.test")
    with caplog.at_level(logging.INFO):
        log.info('%s - "%s %s HTTP/%s" %d', "1.2.3.4:5", "GET", "/x?apiKey=secret1", "1.1", 200)
        log.info("url %s", httpx.URL(URL))
        try:
            raise RuntimeError(f"node said {URL}")
        except RuntimeError:
            log.exception("crash")
    text = caplog.text
    assert KEY not in text and "secret1" not in text
    assert "apiKey=***" in text and "crash" in text and "RuntimeError: node said ***" in text
    assert caplog.records[0].args == ("1.2.3.4:5", "GET", "/x?apiKey=***", "1.1", 200)
