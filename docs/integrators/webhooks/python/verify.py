"""Verifying Tranche webhooks in Python with the standard library only (hmac, hashlib, base64).

Both schemes are keyed from the one signing_secret ("whsec_<base64>"); see ../README.md.
"""
import base64
import hashlib
import hmac
import re
import time


def verify_service_signature(secret: str, raw_body: bytes, header: str | None) -> bool:
    """Spec §6.4: "sha256=" + hex HMAC-SHA256 of the raw body, keyed with the secret string as is."""
    if not header:
        return False
    expected = "sha256=" + hmac.new(secret.encode(), raw_body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, header)


def verify_standard_webhook(secret: str, raw_body: bytes, msg_id: str | None, timestamp: str | None,
                            signature: str | None, now: int | None = None, tolerance: int = 300) -> str:
    """Standard Webhooks: "v1,<base64>" entries (two during a rotation), each an HMAC-SHA256 over
    "<webhook-id>.<webhook-timestamp>.<raw body>" keyed with the base64-decoded part after "whsec_".
    Returns "ok", "bad_signature" or "stale" (timestamp further than `tolerance` seconds from now)."""
    if not msg_id or not timestamp or not signature or not re.fullmatch(r"\d+", timestamp):
        return "bad_signature"
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = msg_id.encode() + b"." + timestamp.encode() + b"." + raw_body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    matches = any(
        version == "v1" and hmac.compare_digest(value, expected)
        for version, _, value in (entry.partition(",") for entry in signature.split(" "))
    )
    if not matches:
        return "bad_signature"
    now = int(time.time()) if now is None else now
    return "stale" if abs(now - int(timestamp)) > tolerance else "ok"
