"""The model room: everything between a rung and a chat model, in one package.

Rooms, one concept each:

- ``contract``   the one signature every client keeps (``ChatModel``), ``ChatResult``, every error by name
- ``client``     ``Client``: any OpenAI-compatible endpoint, spoken to with the ``openai`` SDK
- ``responses``  what an endpoint sent, read field by field (``BadResponse`` naming the field)
- ``scripted``   ``ScriptedClient``: the teaching prop that replays replies written by hand
- ``bundle``     the bundled model file (22 packages, sha256 checked) and the llama.cpp build
- ``processes``  pids, ports, locks and state files, handled carefully
- ``supervisor`` the small process that owns a local server and stops it when nobody needs it
- ``server``     the shared local server as a client sees it (found, started, followed)
- ``room``       one server for a whole room (``python -m rungs.model serve``)

``python -m rungs.model prepare | serve | status | stop | check-stopped``. The
names a rung needs are importable from here: ``from rungs.model import Client,
ScriptedClient, default_client``.
"""

from .bundle import LOCAL_MODEL_NAME, llama_build, prepare
from .client import Client, default_client
from .contract import (BadResponse, ChatModel, ChatResult, EmptyCompletion, ModelError, ModelFileError, ModelRefused,
                       ModelServerCrashed, ModelTimeout, ModelUnavailable, TruncatedCompletion, estimate_tokens)
from .scripted import ScriptedClient, ScriptExhausted

__all__ = ["BadResponse", "ChatModel", "ChatResult", "Client", "EmptyCompletion", "LOCAL_MODEL_NAME", "ModelError",
           "ModelFileError", "ModelRefused", "ModelServerCrashed", "ModelTimeout", "ModelUnavailable",
           "ScriptExhausted", "ScriptedClient", "TruncatedCompletion", "default_client", "estimate_tokens",
           "llama_build", "prepare"]
