"""Exception types of pytest-judgerel.

Every error the package raises on bad input is one of these, so users can catch
one documented type.  All subclass :class:`ValueError` where the cause is bad data.
"""

from __future__ import annotations


class JudgerelError(Exception):
    """Base class of every pytest-judgerel error."""


class ReliabilityError(JudgerelError, ValueError):
    """A statistic cannot be computed from the given data (the message names the cause)."""


class RatingsError(JudgerelError, ValueError):
    """Ratings input is misaligned, ragged, duplicated or otherwise malformed."""


class ScaleError(JudgerelError, ValueError):
    """A grading scale is malformed or a value lies outside it."""


class ParseError(JudgerelError, ValueError):
    """A judge reply could not be turned into a score.

    ``reply`` holds the raw text; ``cause`` a short machine-readable reason
    (``"no_number"``, ``"ambiguous"``, ``"out_of_range"``, ``"missing_axis"``,
    ``"bad_json"``, ``"empty"``...).
    """

    def __init__(self, message: str, *, reply: str = "", cause: str = "unparseable"):
        super().__init__(message)
        self.reply = reply
        self.cause = cause


class ConfigError(JudgerelError, ValueError):
    """Plugin, marker or judge configuration is invalid."""


class LLMCallError(JudgerelError, RuntimeError):
    """A model call failed after the retry policy gave up (or failed fast)."""


class CacheMissError(JudgerelError, LookupError):
    """Replay mode found no cached answer for a request (names test, model and prompt)."""


class CacheCorruptError(ConfigError):
    """The cache database cannot be read (the message names the folder and the fix)."""


class MissingKeyError(LLMCallError, ConfigError):
    """A provider's model needs an API key that is not configured: no request was sent, and every
    later call would fail the same way (the plugin stops the session at the first one).  Both a
    failed call (:class:`LLMCallError`) and a configuration error (:class:`ConfigError`)."""


class BudgetExceededError(LLMCallError):
    """The session's budget (``--judgerel-max-calls`` / ``--judgerel-max-cost``) is spent: this call
    was not sent, and no later call of the session will be (the message names the budget)."""
