"""Parsing of ISO-8601 timestamps from upstream services."""

from datetime import datetime, timezone


def parse_timestamp(s):
    """Parse an ISO-8601 timestamp into an aware datetime in UTC."""
    return datetime.strptime(s[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc)


def to_epoch(s):
    """Unix time (whole seconds) of an ISO-8601 timestamp."""
    return int(parse_timestamp(s).timestamp())
