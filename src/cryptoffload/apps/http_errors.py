"""One error policy for the project's aiohttp servers (ridge parties, HE-CNN server).

Why shared: every server must turn a refused request into a JSON error with a 4xx status and
keep running, pass aiohttp's own 4xx/5xx through in the same shape, never swallow task
cancellation, and log -- without leaking details to the client -- anything unexpected as a
500. Only which of its own exceptions mean which status differs per app, so that is the one
thing each app supplies (``classify``).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Awaitable, Callable, Optional

from aiohttp import web

Classify = Callable[[Exception], Optional[tuple[int, str, str]]]
Respond = Callable[[int, str, str], web.Response]
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def error_middleware(classify: Classify, respond: Respond, log: logging.Logger):
    """A middleware answering ``respond(status, code, message)`` for every refusal.

    ``classify(exc)`` maps an app's own exceptions to ``(status, code, message)`` (or None);
    other aiohttp HTTP errors keep their status; anything else is logged and becomes a 500.
    """

    @web.middleware
    async def errors(request: web.Request, handler: Handler) -> web.StreamResponse:
        try:
            return await handler(request)
        except (asyncio.CancelledError, KeyboardInterrupt):
            raise
        except Exception as exc:
            mapped = classify(exc)
            if mapped is not None:
                return respond(*mapped)
            if isinstance(exc, web.HTTPException):
                if exc.status < 400:
                    raise
                return respond(exc.status, exc.reason.lower().replace(" ", "_"),
                               f"{exc.reason} ({request.method} {request.path})")
            log.exception("internal error while handling %s %s", request.method, request.path)
            return respond(500, "internal", "internal error (see the server log)")

    return errors
