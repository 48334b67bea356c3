"""matchsim: a Python client of the matchsim API (football match simulations), on the standard library.

    import matchsim
    client = matchsim.Client()  # MATCHSIM_API_KEY, MATCHSIM_BASE_URL
    sim = client.simulations.create(fixture_id=1042, draws=100_000)
    sim.result.home_win

README.md shows it in use; every operation of /openapi.json is a method of a resource of the client.
"""

from . import models
from ._client import Client
from ._errors import (
    APIConnectionError,
    APIError,
    AuthenticationError,
    BadRequestError,
    ConflictError,
    InternalServerError,
    MatchsimError,
    NotFoundError,
    PaymentRequiredError,
    PermissionDeniedError,
    RateLimitError,
    RequestTimeoutError,
    ServiceUnavailableError,
    WebhookSignatureError,
)
from ._model import NOT_GIVEN, Model, ModelList, NotGiven
from ._resources import OPERATIONS
from ._transport import VERSION, BatchResults
from ._webhooks import verify_webhook

__version__ = VERSION

__all__ = [
    "APIConnectionError",
    "APIError",
    "AuthenticationError",
    "BadRequestError",
    "BatchResults",
    "Client",
    "ConflictError",
    "InternalServerError",
    "MatchsimError",
    "Model",
    "ModelList",
    "NOT_GIVEN",
    "NotFoundError",
    "NotGiven",
    "OPERATIONS",
    "PaymentRequiredError",
    "PermissionDeniedError",
    "RateLimitError",
    "RequestTimeoutError",
    "ServiceUnavailableError",
    "WebhookSignatureError",
    "models",
    "verify_webhook",
]
