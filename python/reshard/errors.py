"""The one exception the package raises for bad input; the CLI prints it."""


class ReshardError(ValueError):
    """A bad model config, layout spec or tool run, with a readable message."""
