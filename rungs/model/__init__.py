"""The model room: everything between a rung and a chat model, in one package.

Rooms, one concept each:

- ``contract``   the one signature every client keeps (``ChatModel``), ``ChatResult``, every error by name
- ``client``     ``Client``: any OpenAI-compatible endpoint, spoken to with the ``openai`` SDK
- ``responses``  what an endpoint sent, read field by field (``BadResponse`` naming the field)
- ``scripted``   ``ScriptedClient``: the teaching prop that replays replies written by hand
- ``replay``     ``ReplayClient``: a notebook's model calls answered from its recorded run (``RUNGS_REPLAY``)
- ``bundle``     the bundled model file (22 packages, sha256 checked) and the llama.cpp build
- ``launch``     how a llama.cpp server is launched: its arguments, its threads, its process
- ``patches``    llama-cpp-python 0.3.36 as rungs serves it (last-position logits, reused tokens reported)
- ``processes``  pids, ports, locks and state files, handled carefully; the one readiness probe
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
                       ModelServerCrashed, ModelTimeout, ModelUnavailable, TruncatedCompletion, Usage, estimate_tokens,
                       usage_of)
from .replay import NotRecorded, RecordingClient, ReplayClient
from .scripted import ScriptedClient, ScriptExhausted

__all__ = ["BadResponse", "ChatModel", "ChatResult", "Client", "EmptyCompletion", "LOCAL_MODEL_NAME", "ModelError",
           "ModelFileError", "ModelRefused", "ModelServerCrashed", "ModelTimeout", "ModelUnavailable", "NotRecorded",
           "RecordingClient", "ReplayClient", "ScriptExhausted", "ScriptedClient", "TruncatedCompletion", "Usage",
           "default_client", "estimate_tokens", "llama_build", "prepare", "usage_of"]
