"""The package version, in a module of its own so that modules of the package read it without importing the
package face (``tests/test_layering.py``)."""

__version__ = "0.2.0"
