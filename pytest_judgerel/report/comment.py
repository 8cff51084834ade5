"""``judgerel report comment REPORT.json``: one pull-request comment per workflow, edited in place.

The body is :func:`~.markdown.render_markdown` (within GitHub's 65,536 characters) with a hidden
marker naming the workflow (``<!-- judgerel-comment: NAME -->``).  The command lists the pull
request's comments, PATCHes the one carrying its marker, or POSTs a new one: re-runs and new
pushes edit the same comment.  It talks to the GitHub REST API with :mod:`urllib` only and reads
the Actions environment: ``GITHUB_TOKEN``, ``GITHUB_REPOSITORY``, ``GITHUB_API_URL``,
``GITHUB_EVENT_PATH`` (the pull request's number) and ``GITHUB_WORKFLOW``.  Outside a pull
request it does nothing; an API failure is a warning (exit 0): the gate is the test run
(:mod:`.md_cli` holds the command).
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from typing import Any, Mapping

__all__ = ["comment_marker", "pull_request_number", "GitHub", "post_or_update"]

_PAGE = 100


def comment_marker(key: str) -> str:
    """The hidden line that identifies this workflow's comment."""
    return f"<!-- judgerel-comment: {key.replace('--', '-')} -->"


def pull_request_number(env: Mapping[str, str]) -> int | None:
    """The pull request's number from the event payload (``GITHUB_EVENT_PATH``), else None."""
    path = env.get("GITHUB_EVENT_PATH")
    if not path or not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as fh:
        event = json.load(fh)
    number = (event.get("pull_request") or {}).get("number") or (event.get("issue") or {}).get("number")
    return int(number) if isinstance(number, int) else None


class GitHub:
    """The three calls of the issue-comments API the command makes."""

    def __init__(self, api: str, repo: str, token: str) -> None:
        self.api, self.repo, self.token = api.rstrip("/"), repo, token

    def request(self, method: str, path: str, body: Mapping[str, Any] | None = None) -> Any:
        data = json.dumps(body).encode("utf-8") if body is not None else None
        req = urllib.request.Request(self.api + path, data=data, method=method, headers={
            "Accept": "application/vnd.github+json", "Authorization": f"Bearer {self.token}",
            "X-GitHub-Api-Version": "2022-11-28", "Content-Type": "application/json",
            "User-Agent": "pytest-judgerel"})
        with urllib.request.urlopen(req, timeout=30) as resp:  # noqa: S310 - the API URL from the environment
            raw = resp.read()
        return json.loads(raw) if raw else None

    def find(self, number: int, marker: str) -> int | None:
        """The id of the pull request's comment that carries ``marker``, else None."""
        page = 1
        while True:
            comments = self.request("GET", f"/repos/{self.repo}/issues/{number}/comments?per_page={_PAGE}&page={page}")
            for c in comments or []:
                if marker in str(c.get("body") or ""):
                    return int(c["id"])
            if not comments or len(comments) < _PAGE:
                return None
            page += 1


def post_or_update(gh: GitHub, number: int, body: str, marker: str) -> tuple[str, int]:
    """Edit the marked comment or create it; ``("updated" | "created", comment id)``."""
    found = gh.find(number, marker)
    if found is not None:
        gh.request("PATCH", f"/repos/{gh.repo}/issues/comments/{found}", {"body": body})
        return "updated", found
    made = gh.request("POST", f"/repos/{gh.repo}/issues/{number}/comments", {"body": body})
    return "created", int((made or {}).get("id") or 0)
