"""The one exception the package raises for bad input (the CLI prints it),
and the JSON file reading that turns I/O and syntax errors into it."""
import json
import re


class ReshardError(ValueError):
    """A bad model config, layout spec or tool run, with a readable message."""


def read_json(path, label=None):
    """The parsed JSON file at `path`; errors name `label` (default: path)."""
    label = label or path
    try:
        with open(path) as f:
            return json.load(f)
    except OSError as e:
        raise ReshardError(f"{label}: cannot read: {e.strerror}")
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ReshardError(f"{label}: not JSON: {e}")


def parse_bytes(text: str, what: str) -> int:
    """'268435456', '256M', '1GiB' -> bytes (K, M, G, T: powers of 1024)."""
    m = re.fullmatch(r"\s*(\d+)\s*([KMGT]?)(i?B)?\s*", text, re.I)
    if not m:
        raise ReshardError(f"{what} {text!r}: give bytes, e.g. 256M or 1G")
    n = int(m.group(1)) << (10 * " KMGT".index(m.group(2).upper() or " "))
    if not 0 < n < 1 << 63:
        raise ReshardError(f"{what} {text!r}: give a size from 1 byte to "
                           f"2^63-1 bytes")
    return n
