#!/usr/bin/env bash
# Reference solution: datetime.fromisoformat (Python 3.11 reads Z, offsets and fractions), then UTC.
set -euo pipefail
cat > timeparse.py <<'EOF'
"""Parsing of ISO-8601 timestamps from upstream services."""

from datetime import datetime, timezone


def parse_timestamp(s):
    """Parse an ISO-8601 timestamp into an aware datetime in UTC (no offset means UTC)."""
    dt = datetime.fromisoformat(s)
    if dt.tzinfo is None:
        return dt.replace(tzinfo=timezone.utc)
    return dt.astimezone(timezone.utc)


def to_epoch(s):
    """Unix time (whole seconds) of an ISO-8601 timestamp."""
    return int(parse_timestamp(s).timestamp())
EOF
