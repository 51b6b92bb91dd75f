"""N5 — a bounded research loop: plan, search, read, rank, synthesize, cite, follow up.

What it is for: a question that needs several searches (« congés, télétravail
et notes de frais : que dois-je savoir avant mes vacances ? »). One function,
one code path; ``mode`` is a value: ``"quick"`` searches the question once,
``"research"`` plans topics and iterates. It returns the one shape of an
answer, ``rungs.grounding.Answer``; what the loop did on the way (the plan,
the rounds, why it stopped, the follow-ups, the timings, the pages gathered
and their numbers, the bounds, every call) is in ``Answer.trace``.

Bounded by construction, not by advice:

- **rounds** — a budget, hard-capped at ``MAX_ROUNDS`` whatever is asked;
- **deadline** — seconds for the whole run; the gather gets at most 70 % of it,
  so synthesis always has time;
- **tokens** — a ceiling over every call; the gather may use at most 70 % of it;
- **saturation** — a round that adds no new page ends the survey;
- **per_section** — at most N pages from one handbook section (no section can
  crowd out the others).

Grounded by properties of the shown text, not by prompt advice: sources are
numbered and fenced by a per-request code (a hash of the request), so a page that imitates a
fence or a source number cannot make its text a source; the report reaches the
reader **a checked sentence at a time** (``rungs.research.report``): a
citation of anything not gathered is removed — « [9] », « (source 9) »,
« illimités^9 » —, and a sentence that echoes a fence, cites no gathered source
or says a figure that no source it cites (nor the question) holds is withheld,
with a note. What is shown is ``Answer.text``, exactly; each citation carries a
quote, and no shown figure is unsupported. A report cut by its token budget
says so in a note, and its unfinished last sentence is not shown.

What becomes of the question (``Answer.status``): **answered** (a sentence was
shown); **no answer** (the model said « je ne sais pas », or nothing was found,
or the question was empty); **refused** (every sentence broke a check: nothing
shown); **unavailable** (no model wrote a usable report — every one failed,
wrote nothing, or wrote prose that cites nothing —, or the deadline had passed).

Every call's cost is read with ``Cost.of_call`` / ``Cost.of_counts``: a client
of one's own that reports a token count that is not a count (« abc », NaN,
None) is named (``BadResponse``) and treated as that call failing, like a
broken stream — the next model of the chain is tried, a report it had shown is
withdrawn (an event the sink shows), and if no model is left the status is
unavailable; a follow-up call that fails so is a note, and the answer stays.
Never an exception after the answer streamed.

Degradations are never silent: every one is a sentence in ``notes``.

Cost: research mode on the local model — a plan call, one decision call per
round, one synthesis, one follow-up call: about a minute on 2 cores.
"""

from __future__ import annotations

import time

from ..core.documents import check_documents, page_text
from ..core.errors import (MAX_QUERY_CHARS, BadArgument, RungsError, check_choice, check_client, check_int,
                           check_number, check_query)
from ..core.retrieval import Retriever
from ..grounding.answer import Cost, Status
from ..grounding.events import event
from ..grounding.replies import NoAnswerObject, extract_answer_object
from ..hybrid import rrf
from ..model import ModelError, default_client
from ..rag import MAX_CHARS
from .checks import fence_code, fences
from .prompts import (CONTINUE_PROMPT, CONTINUE_SCHEMA, FOLLOW_PROMPT, FOLLOW_SCHEMA, PLAN_PROMPT, PLAN_SCHEMA,
                      SYNTH_PROMPT, check_synth_prompt, parse_plan)
from .report import SentenceGate, write
from .settle import settle

MAX_ROUNDS = 5
MAX_SOURCES = 12  # what fits, fenced and cut at 1,500 characters, in a small model's context
#: RRF's constant for the queries' rankings: 0, so each query's best pages lead the fusion. Chosen by the tuning
#: lab's protocol against the textbook 60 (``hybrid.RRF_K``), without a model (benchmarks/bench_research_fusion.py,
#: results/research_fusion.json): on handbook questions of three parts with 8 hits a query, 60 gave way to 0 —
#: out of fold +0.186 of the answering pages gathered (p = 0.003), final half 0.720 against 0.481 (p = 0.002);
#: at research mode's 3 hits a query, no setting differed measurably from 60 (k = 0: −0.001 on all 46). Quick
#: mode searches one query: there the constant changes nothing.
FUSION_K = 0
DEFAULTS = {
    "quick": {"rounds": 1, "deadline": 120.0, "tokens": 8000, "per_section": 2, "max_sources": 5,
              "per_query": 8, "fusion_k": FUSION_K, "follow_ups": True},
    "research": {"rounds": 3, "deadline": 300.0, "tokens": 24000, "per_section": 2, "max_sources": 6,
                 "per_query": 3, "fusion_k": FUSION_K, "follow_ups": True},
}
GATHER_SHARE = 0.7
#: How many tokens each stage may write: a plan is a short list, a decision a yes and three queries,
#: the report a few sentences with citations, the follow-ups three questions.
STAGE_TOKENS = {"plan": 600, "decide": 200, "synthesis": 400, "follow_ups": 300}
#: Each source is sent cut to what N3 sends of a passage (``rungs.rag.MAX_CHARS``).
SOURCE_CHARS = MAX_CHARS


def check_bounds(mode: str, overrides: dict) -> dict:
    """The mode's bounds with your overrides, each checked once: a NaN deadline must not mean « no deadline »."""
    check_choice(mode, "mode", tuple(DEFAULTS))
    if not isinstance(overrides, dict):
        raise BadArgument(f"the bounds must be a dict of bound → value, not {type(overrides).__name__}")
    unknown = sorted(set(overrides) - set(DEFAULTS[mode]))
    if unknown:
        raise BadArgument(f"unknown bounds {unknown}; known: {sorted(DEFAULTS[mode])}")
    b = {**DEFAULTS[mode], **overrides}
    for flag in ("follow_ups",):
        if not isinstance(b[flag], bool):
            raise BadArgument(f"{flag} must be True or False, not {b[flag]!r}")
    # Asking for more rounds than MAX_ROUNDS is allowed: the cap is the point (the run says it was capped).
    return {"rounds": check_int(b["rounds"], "rounds", low=1, high=10**6),
            "deadline": check_number(b["deadline"], "deadline", low=0.0, high=86400.0),
            "tokens": check_int(b["tokens"], "tokens", low=1, high=10**9),
            "per_section": check_int(b["per_section"], "per_section", low=1),
            "max_sources": check_int(b["max_sources"], "max_sources", low=1, high=MAX_SOURCES),
            "per_query": check_int(b["per_query"], "per_query", low=1, high=100),
            "fusion_k": check_number(b["fusion_k"], "fusion_k", low=0.0, high=1e6),
            "follow_ups": b["follow_ups"]}


class Ledger:
    """What the run has spent — seconds, tokens, the ``Cost`` of every call — against its bounds."""

    def __init__(self, bounds: dict, clock):
        self.bounds, self.clock = bounds, clock
        self.start = clock()
        self.calls: list[dict] = []  # one per call: stage, tokens in and out, model, seconds (failed: True)
        self.cost = Cost()

    def elapsed(self) -> float:
        return self.clock() - self.start

    def tokens(self) -> int:
        return self.cost.prompt_tokens + self.cost.output_tokens

    def record(self, stage: str, cost: Cost, model: str, *, failed: bool = False) -> None:
        self.cost += cost
        self.calls.append({"stage": stage, "in": cost.prompt_tokens, "out": cost.output_tokens, "model": model,
                           "seconds": cost.seconds, **({"failed": True} if failed else {})})

    def gather_over(self) -> str | None:
        """Why the gather must stop now (it may use 70 % of the time and of the tokens), or None."""
        if self.elapsed() >= GATHER_SHARE * self.bounds["deadline"]:
            return "deadline (70 % of it is the gather's)"
        if self.tokens() >= GATHER_SHARE * self.bounds["tokens"]:
            return "token ceiling (70 % of it is the gather's)"
        return None

    def over(self) -> str | None:
        """Why no further model call may start, or None."""
        if self.tokens() >= self.bounds["tokens"]:
            return "the token ceiling was reached"
        if self.elapsed() >= self.bounds["deadline"]:
            return "the deadline passed"
        return None


class ModelChain:
    """The models to try, in order: the first that answers is used, and every failure is a note."""

    def __init__(self, clients: list, ledger: Ledger, notes: list[str]):
        self.clients, self.ledger, self.notes = clients, ledger, notes

    def ask(self, stage: str, prompt: str, *, schema=None) -> str | None:
        """One non-streamed call on the first model that answers; None if none does."""
        for position, client in enumerate(self.clients):
            name, started = getattr(client, "model", "a model"), time.perf_counter()
            try:
                result = client.chat([{"role": "user", "content": prompt}], max_tokens=STAGE_TOKENS[stage],
                                     json_schema=schema)
                # A client that miscounts is named here (BadResponse), before its reply is used.
                cost = Cost.of_call(result, time.perf_counter() - started)
            except ModelError as err:
                self.ledger.record(stage, Cost(calls=1, seconds=time.perf_counter() - started), name, failed=True)
                more = "; next model" if position + 1 < len(self.clients) else ""
                self.notes.append(f"{stage}: {name} failed ({type(err).__name__}: {str(err)[:160]}){more}")
                continue
            self.ledger.record(stage, cost, getattr(result, "model", name))
            return result.text
        return None


def default_retriever(pages: list[dict]):
    """The retriever the answer rungs share (chosen by measurement in notebook 02): ``hybrid.answer_retriever``."""
    from ..hybrid import answer_retriever

    return answer_retriever(pages)


class Run:
    """One research run: the question, the pages, the retriever, and the parts above. The stages are methods."""

    def __init__(self, question, pages, retriever, chain, ledger, mode, sink, prompt=SYNTH_PROMPT):
        self.question, self.retriever, self.chain, self.ledger = question, retriever, chain, ledger
        self.prompt = prompt
        self.mode, self.sink, self.b = mode, sink, ledger.bounds
        self.by_id = {str(p["id"]): p for p in pages}
        self.notes = chain.notes
        self.timings: dict[str, float] = {}
        self.trace: dict = {"plan": [], "rounds": [], "stopped_by": None, "follow_ups": [], "gathered": [],
                            "numbered": {}, "timings": self.timings, "mode": mode, "bounds": ledger.bounds,
                            "calls": ledger.calls, "fences": (), "withheld": [], "removed": []}

    def status(self, stage, detail):
        self.sink(event("status", stage=stage, detail=detail))

    def plan(self):
        """Research mode: the model breaks the question into topics and queries. Quick mode: the question."""
        if self.mode == "quick":
            return [{"title": self.question, "todos": [self.question]}]
        self.status("planning", "breaking the question into topics")
        started = self.ledger.clock()
        text = self.chain.ask("plan", PLAN_PROMPT.format(question=self.question), schema=PLAN_SCHEMA)
        plan, problem = parse_plan(text or "", self.question)
        if problem or text is None:
            self.notes.append(f"plan: {problem or 'no model answered'}")
        self.timings["plan"] = self.ledger.clock() - started
        self.status("planning", " | ".join(t["title"] for t in plan))
        return plan

    def survey(self, plan):
        """Search and read, round after round, until a bound says stop; returns (gathered, rounds, why)."""
        started = self.ledger.clock()
        queries = [q for t in plan for q in t["todos"]]
        rankings: dict[str, list] = {}  # every query asked so far → its hits; fused by RRF after each round
        rounds, gathered, stopped = [], [], None
        budget = min(self.b["rounds"], MAX_ROUNDS)
        for number in range(1, budget + 1):
            self.status("searching", f"round {number}: {len(queries)} queries")
            before = set(gathered)
            for q in queries:
                if q not in rankings:
                    rankings[q] = self._search(q)
            gathered = self.select(rrf(rankings, k=self.b["fusion_k"]))
            new = [p for p in gathered if p not in before]
            rounds.append({"round": number, "queries": list(queries), "new_pages": new})
            self.status("reading", f"{len(new)} new page(s): {', '.join(new) or '—'}")
            if not new and number > 1:
                stopped = "saturation (a round added no new page)"
            elif number == budget:
                stopped = (f"round cap ({MAX_ROUNDS}; {self.b['rounds']} asked)" if self.b["rounds"] > MAX_ROUNDS
                           else f"round budget ({budget})")
            else:
                stopped = self.ledger.gather_over()
            if stopped or self.mode == "quick":
                break
            queries, stopped = self.next_queries(list(rankings), gathered)
            if stopped:
                break
        self.timings["survey"] = self.ledger.clock() - started
        return gathered, rounds, stopped or "one search (quick mode)"

    def _search(self, query):
        try:
            return self.retriever.search(query[:MAX_QUERY_CHARS], limit=self.b["per_query"])
        except BadArgument as err:  # a query the model wrote that the retriever refuses: skipped, said
            self.notes.append(f"survey: the query {query[:60]!r} was refused ({err}); skipped")
            return []

    def next_queries(self, asked, gathered):
        """Ask the model whether to go on, and with which new queries: (queries, None) or ([], why it stops)."""
        text = self.chain.ask("decide", CONTINUE_PROMPT.format(
            question=self.question, queries="; ".join(asked),
            titles="; ".join(self.by_id[p].get("title") or p for p in gathered)), schema=CONTINUE_SCHEMA)
        try:
            decision = extract_answer_object(text or "")
        except NoAnswerObject:
            decision = None
        if not isinstance(decision, dict):
            self.notes.append("survey: the continue decision could not be read; stopped searching")
            return [], "unreadable decision"
        proposed = decision.get("queries")
        proposed = proposed if isinstance(proposed, list) else []
        fresh = [q for q in proposed if isinstance(q, str) and q.strip() and q not in asked][:3]
        if decision.get("continue") is not True or not fresh:
            return [], "the model judged the sources sufficient"
        return fresh, None

    def select(self, fused):
        """Best first, ties by id; at most per_section pages of one section; at most max_sources."""
        kept, per_section = [], {}
        for hit in fused:
            if hit.id not in self.by_id:
                continue  # a retriever over other documents: what cannot be read cannot be a source
            section = str(self.by_id[hit.id].get("section") or "")
            if per_section.get(section, 0) >= self.b["per_section"]:
                continue
            per_section[section] = per_section.get(section, 0) + 1
            kept.append(hit.id)
            if len(kept) >= self.b["max_sources"]:
                break
        return kept

    def synthesize(self, gathered) -> dict:
        """Stream the report from fenced, numbered sources, a checked sentence at a time (``report``)."""
        started = self.ledger.clock()
        numbered = {i: pid for i, pid in enumerate(gathered, start=1)}
        texts = {pid: page_text(self.by_id[pid])[:SOURCE_CHARS] for pid in gathered}

        def fenced(nonce):
            blocks = "\n\n".join(f"<<<SOURCE {i} {nonce}>>>\n{texts[pid]}\n<<<FIN {i} {nonce}>>>"
                                 for i, pid in numbered.items())
            return self.prompt.format(nonce=nonce, sources=blocks, question=self.question)

        # Unknown to every page (a hash of the prompt that holds it): a page cannot close its fence or open another.
        nonce = fence_code(fenced(""))
        prompt = fenced(nonce)
        self.trace.update(numbered=numbered, fences=fences(nonce), prompt=prompt)
        self.status("answering", f"{len(numbered)} sources, fence code {nonce[:4]}…")
        report = write(self.chain, prompt, lambda emit: SentenceGate(
            numbered, texts, self.question, fences(nonce), emit, told=self.sink), self.sink,
            STAGE_TOKENS["synthesis"])
        self.timings["synthesize"] = self.ledger.clock() - started
        return {**report, "numbered": numbered, "texts": texts}

    def follow_ups(self):
        """A few next questions; whatever the model replies, the answer already given is kept."""
        try:
            return self._follow_ups()
        except RungsError as err:  # the answer is already shown: a failed extra never takes it away
            self.notes.append(f"follow-ups: none ({type(err).__name__}: {str(err)[:120]})")
            return []

    def _follow_ups(self):
        if not self.b["follow_ups"]:
            return []
        over = self.ledger.over()
        if over:
            self.notes.append(f"follow-ups skipped: {over}")
            return []
        started = self.ledger.clock()
        text = self.chain.ask("follow_ups", FOLLOW_PROMPT.format(question=self.question), schema=FOLLOW_SCHEMA)
        questions = []
        try:
            raw = extract_answer_object(text or "")
            listed = raw.get("questions") if isinstance(raw, dict) else None
            questions = [q.strip() for q in (listed if isinstance(listed, list) else [])
                         if isinstance(q, str) and q.strip()]
        except NoAnswerObject:
            questions = [line.strip("-•* ").strip() for line in (text or "").splitlines() if line.strip().endswith("?")]
        self.timings["follow_ups"] = self.ledger.clock() - started
        if questions:
            questions = questions[:5]
            self.sink(event("follow_ups", questions=questions))
        else:
            self.notes.append("follow-ups: none could be read")
        return questions


def _check_run(question, pages, retriever, client, mode, sink, models, clock, prompt, bounds) -> tuple[dict, list]:
    """Every argument of ``run`` checked once, before any call: a NaN deadline must not mean « no deadline »."""
    check_query(question if question is not None else "", name="question")
    if prompt is not None:
        check_synth_prompt(prompt)
    bounds = check_bounds(mode, bounds)
    pages = check_documents(pages, name="pages")
    if retriever is not None and not isinstance(retriever, Retriever):
        raise BadArgument(f"retriever must be a rungs retriever (search(query, *, limit)), not {type(retriever).__name__}")
    if models is not None and (not isinstance(models, (list, tuple)) or not models):
        raise BadArgument("models must be a non-empty list of clients (the fallback chain), or None")
    for i, model in enumerate(models or ([client] if client is not None else [])):
        check_client(model, f"models[{i}]" if models else "client", methods=("chat", "stream"))
    if sink is not None and not callable(sink):
        raise BadArgument(f"sink must be a function of one event, not {type(sink).__name__}")
    if not callable(clock):
        raise BadArgument(f"clock must be a function that returns seconds, not {type(clock).__name__}")
    return bounds, pages


def run(question: str, *, pages: list[dict], retriever=None, client=None, mode: str = "quick", sink=None,
        models: list | None = None, clock=time.monotonic, prompt: str | None = None, **bounds):
    """Answer ``question`` from ``pages`` within the bounds of ``mode`` (and your overrides): an ``Answer``.

    ``retriever``: any retriever over ``pages`` (default: the answer rungs'
    hybrid, ``hybrid.answer_retriever``). Bounds you may override: ``rounds``,
    ``deadline`` (s), ``tokens``, ``per_section``, ``max_sources``,
    ``per_query``, ``fusion_k`` (RRF's constant, to fuse the queries' rankings),
    ``follow_ups`` (bool). ``models``: a fallback chain of clients; ``clock``: a
    time function (a fake one makes the deadline testable); ``prompt``: the
    synthesis prompt (default ``SYNTH_PROMPT``; it must place ``{nonce}``,
    ``{sources}`` and ``{question}``). ``sink``: told every
    event as it happens (``rungs.grounding.events``). ``Answer.trace`` holds
    ``plan``, ``rounds``, ``stopped_by``, ``follow_ups``, ``timings``, ``gathered``,
    ``numbered`` (source number → page id), ``bounds``, ``mode``, ``calls``,
    ``fences``, ``withheld`` (each sentence not shown, and why), ``seconds``.
    """
    bounds, pages = _check_run(question, pages, retriever, client, mode, sink, models, clock, prompt, bounds)
    ledger = Ledger(bounds, clock)
    notes: list[str] = []
    chain = ModelChain(models or [client or default_client()], ledger, notes)
    # "is None", not "or": an empty ListSink is falsy and must still receive the events.
    sink = sink if sink is not None else (lambda _: None)
    state = Run(question or "", pages, retriever, chain, ledger, mode, sink, prompt or SYNTH_PROMPT)
    if not (question or "").strip():
        notes.append("empty question: nothing to research, no model called")
        return settle(state, None, mode, reason="nothing to ask: the question is empty")
    if bounds["deadline"] <= 0 or ledger.elapsed() >= bounds["deadline"]:
        notes.append("the deadline had already passed: stopped before any model call")
        state.trace["stopped_by"] = "deadline"
        return settle(state, None, mode, status=Status.UNAVAILABLE,
                      reason="the deadline had already passed: no model was asked")
    state.retriever = retriever or default_retriever(pages)
    state.trace["plan"] = state.plan()
    gathered, state.trace["rounds"], state.trace["stopped_by"] = state.survey(state.trace["plan"])
    state.trace["gathered"] = gathered
    if not gathered:
        notes.append("no page was found for any query")
        return settle(state, None, mode, reason="no page was found for any query")
    report = state.synthesize(gathered)
    if report["outcome"] in ("shown", "abstained"):
        state.trace["follow_ups"] = state.follow_ups()
    return settle(state, report, mode)
