"""The one exception the package raises for bad input (the CLI prints it),
and the JSON file reading that turns I/O and syntax errors into it."""
import json


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
