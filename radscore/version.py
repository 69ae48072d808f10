"""radscore's version, in a module of its own so that every other module can import it one way."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("radscore")
except PackageNotFoundError:  # running from a source tree that was not installed
    __version__ = "0+unknown"
