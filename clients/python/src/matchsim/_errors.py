"""The exceptions of the client: an error answer of the service (docs/api.md §7) is an `APIError`, of a
subclass by its HTTP status, carrying the error object's fields."""

from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Type


class MatchsimError(Exception):
    """Every exception this package raises."""


class APIConnectionError(MatchsimError):
    """The service could not be reached, or the connection broke before an answer came."""


class WebhookSignatureError(MatchsimError):
    """A webhook delivery that matchsim did not sign with this secret, or older than the tolerance."""


class APIError(MatchsimError):
    """An error answer: `status`, and the error object's `code`, `message`, `param`, `doc_url`,
    `request_id`, `type`; `retry_after` is the seconds the answer asks to wait before sending again (from
    `Retry-After` or `retry.after_seconds`), None when it names none; `error` is the whole error object."""

    def __init__(self, status: int, error: Mapping[str, Any], retry_after: Optional[float] = None) -> None:
        self.status = status
        self.error: Dict[str, Any] = dict(error)
        self.code: Optional[str] = error.get("code")
        self.message: str = str(error.get("message", f"HTTP {status}"))
        self.param: Optional[str] = error.get("param")
        self.doc_url: Optional[str] = error.get("doc_url")
        self.request_id: Optional[str] = error.get("request_id")
        self.type: Optional[str] = error.get("type")
        self.retry_after = retry_after
        super().__init__(f"{status} {self.code}: {self.message}")


class BadRequestError(APIError):
    """400: the request is malformed or names something the service cannot use."""


class AuthenticationError(APIError):
    """401: the API key is missing, unknown, revoked or expired."""


class PaymentRequiredError(APIError):
    """402: the balance or the spend cap does not cover the request."""


class PermissionDeniedError(APIError):
    """403: the key or the organisation may not do this."""


class NotFoundError(APIError):
    """404: no such fixture, job, batch, simulation, endpoint or event (for this caller)."""


class RequestTimeoutError(APIError):
    """408: the request did not arrive whole in time."""


class ConflictError(APIError):
    """409: the request conflicts with a state (an Idempotency-Key reused with another body, …)."""


class RateLimitError(APIError):
    """429: a per-minute, concurrency or daily limit; `retry_after` says when to send again."""


class InternalServerError(APIError):
    """500 and other 5xx the service did not name."""


class ServiceUnavailableError(APIError):
    """503: the service or a part of it is busy or away for now; `retry_after` says when to send again."""


_BY_STATUS: Dict[int, Type[APIError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    402: PaymentRequiredError,
    403: PermissionDeniedError,
    404: NotFoundError,
    408: RequestTimeoutError,
    409: ConflictError,
    429: RateLimitError,
    500: InternalServerError,
    503: ServiceUnavailableError,
}


def error_for(status: int, error: Mapping[str, Any], retry_after: Optional[float]) -> APIError:
    """The exception of an error answer, of the class its status names."""
    kind = _BY_STATUS.get(status) or (InternalServerError if status >= 500 else APIError)
    return kind(status, error, retry_after)
