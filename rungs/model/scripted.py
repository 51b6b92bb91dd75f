"""The teaching prop: a « model » that replays the replies you wrote, in order. Never the default.

What it is for: showing exactly what a decoder accepts or rejects, and
testing every rung without a model. ``ScriptedClient`` keeps the one client
signature (``rungs.model.contract.ChatModel``), so a notebook can swap it for
the real client and nothing else changes.

Cost: nothing.
"""

from __future__ import annotations

from .contract import BadResponse, ChatModel, ChatResult, ModelError, Usage, refuse_empty, estimate_tokens


class ScriptExhausted(ModelError):
    """A ScriptedClient was asked for more replies than it was given."""


class ScriptedClient(ChatModel):
    """A teaching prop, not a model: it replays the replies *you* wrote, in order.

    Use it to show exactly what a decoder accepts or rejects, or in tests. Each
    reply is a string (the text), a dict (``text``, ``finish_reason``,
    ``logprobs``), or an exception to raise. ``calls`` keeps every request.
    """

    model = "scripted (teaching prop)"
    local = False

    def __init__(self, replies):
        self.replies = list(replies)
        self.calls: list[dict] = []

    def __repr__(self) -> str:
        return f"ScriptedClient(teaching prop: {len(self.replies)} reply(ies) written by hand left)"

    def _next(self, call: dict):
        """Record the request, then hand out the next reply (or raise the scripted error)."""
        self.calls.append(call)
        if not self.replies:
            raise ScriptExhausted(f"the script has no reply left for call {len(self.calls)}")
        reply = self.replies.pop(0)
        if isinstance(reply, BaseException):
            raise reply
        return reply

    def chat(self, messages: list[dict], *, temperature: float = 0.0, max_tokens: int = 512,
             json_schema: dict | None = None, logprobs: int = 0, seed: int = 0) -> ChatResult:
        reply = self._next({"messages": messages, "json_schema": json_schema, "logprobs": logprobs,
                            "max_tokens": max_tokens})
        if isinstance(reply, str):
            reply = {"text": reply}
        if not isinstance(reply, dict) or not isinstance(reply.get("text", ""), str):
            # A script is written by hand: a reply of the wrong shape is the script's mistake, said as such.
            raise BadResponse(f"scripted reply {len(self.calls)} must be a string, a dict with a 'text' string, "
                              f"or an exception, not {reply!r:.80}")
        text, finish = reply.get("text", ""), reply.get("finish_reason", "stop")
        refuse_empty(text, finish, max_tokens)
        return ChatResult(text=text, model=self.model, input_tokens=estimate_tokens(messages),
                          output_tokens=len(text) // 4, finish_reason=finish, latency=0.0,
                          logprobs=reply.get("logprobs"))

    def stream(self, messages: list[dict], *, temperature: float = 0.0, max_tokens: int = 512, seed: int = 0,
               json_schema: dict | None = None):
        """Replay the next reply in small pieces; a reply ``{"chunks": [...], "then": error}`` fails mid-stream."""
        reply = self._next({"messages": messages, "stream": True, "max_tokens": max_tokens, "json_schema": json_schema})
        if isinstance(reply, str):
            reply = {"chunks": [reply[i:i + 7] for i in range(0, len(reply), 7)]}
        for piece in reply.get("chunks", []):
            yield piece
        if reply.get("then"):
            raise reply["then"]
        self.last_usage = Usage(estimate_tokens(messages), len("".join(reply.get("chunks", []))) // 4)
