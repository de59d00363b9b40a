"""Visiting the server as a browser does, for the tests that drive it through Starlette's test client."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from httpx import Response
    from starlette.testclient import TestClient


def open_link(client: TestClient, link: str) -> Response:
    """Open a shareable link as a browser does: the cookie round trip of a first visit, then the game's redirect."""
    response = client.get(link, follow_redirects=False)
    if response.status_code == 303 and response.headers["location"].startswith("/play?"):
        response = client.get(response.headers["location"], follow_redirects=False)
    return response
