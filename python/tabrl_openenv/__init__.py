"""tabrl_openenv: a standard-library client for `tabrl serve` (OpenEnv's protocol) and a TRL environment class.

``EnvClient`` / ``AsyncEnvClient`` play episodes over one WebSocket session each;
``get_health``, ``get_schema`` and ``get_metadata`` read the HTTP endpoints;
``TabrlEnvironment`` and ``make_environment_class`` plug a server into TRL's
``GRPOTrainer(environment_factory=...)``.
"""

from .client import (
    TOKEN_ENV,
    URL_ENV,
    AsyncEnvClient,
    EnvClient,
    ServeError,
    SessionClosedError,
    StepResult,
    get_health,
    get_metadata,
    get_schema,
)
from .trl import TabrlEnvironment, make_environment_class

__version__ = "0.1.0"

__all__ = [
    "AsyncEnvClient",
    "EnvClient",
    "ServeError",
    "SessionClosedError",
    "StepResult",
    "TOKEN_ENV",
    "URL_ENV",
    "TabrlEnvironment",
    "get_health",
    "get_metadata",
    "get_schema",
    "make_environment_class",
]
