"""The ``tokenrisk`` command line."""
