"""tokenrisk: can I sell this token after buying it, and what will it cost me?"""

__version__ = "0.1.0"
