"""Exceptions raised by zarrkit.

Every error of the C++ engine arrives as one of these classes with the engine's message
unchanged. Each also derives from the builtin exception that fits, so code written for
zarr-python or NumPy that catches ``ValueError`` or ``FileNotFoundError`` keeps working:

=========================  ==========================  ==========================================
class                      also a                      raised for
=========================  ==========================  ==========================================
InvalidArgumentError       ValueError                  bad arguments, bad metadata
DataLossError              ValueError                  corrupt or truncated stored data
NotFoundError              FileNotFoundError           no array, group or store at that place
UnsupportedError           NotImplementedError         a codec, data type or feature zarrkit lacks
ResourceExhaustedError     MemoryError                 a size limit or an allocation that failed
IoError                    OSError                     the store or the operating system failed
InternalError              RuntimeError                a bug in zarrkit (please report it)
ReadOnlyError              ValueError                  a write to an array or group opened read-only
=========================  ==========================  ==========================================
"""

from __future__ import annotations

__all__ = [
    "DataLossError",
    "InternalError",
    "InvalidArgumentError",
    "IoError",
    "NotFoundError",
    "ReadOnlyError",
    "ResourceExhaustedError",
    "UnsupportedError",
    "ZarrkitError",
]


class ZarrkitError(Exception):
    """Base class of every error zarrkit raises."""


class InvalidArgumentError(ZarrkitError, ValueError):
    """A bad argument, or metadata that breaks the Zarr specification."""


class DataLossError(ZarrkitError, ValueError):
    """Stored bytes that are corrupt or truncated (a checksum mismatch, a short chunk)."""


class NotFoundError(ZarrkitError, FileNotFoundError):
    """No array, group or store where one was expected."""


class UnsupportedError(ZarrkitError, NotImplementedError):
    """A codec, data type or feature that zarrkit does not implement (or a GPU that is absent)."""


class ResourceExhaustedError(ZarrkitError, MemoryError):
    """A size limit was exceeded, or memory could not be allocated."""


class IoError(ZarrkitError, OSError):
    """The store or the operating system reported a failure."""


class InternalError(ZarrkitError, RuntimeError):
    """A bug in zarrkit."""


class ReadOnlyError(InvalidArgumentError):
    """A write to an array, group or store opened read-only."""
