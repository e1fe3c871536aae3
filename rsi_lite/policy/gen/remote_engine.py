"""Generation served by remote servers that speak vLLM's OpenAI-compatible completions API, behind the interface
the rollout engine already uses: the kit's own episodes (harness, sandbox, verifier, trajectory) with the replies
decoded on other machines.

On a GPU cluster the servers are verl's standalone rollout replicas (`python -m scale_up.serve`: vLLM's OpenAI
app, one replica per tensor-parallel group, on every node of the Ray cluster), so a self-rewrite's discovery and
re-solves and an evaluation decode on all of the cluster's GPUs while the kit's code runs unchanged on the
driver node. On the CPU the kit's own engine serves the same API (`scale_up.kit_server serve`), which is how
this module is tested.

Each request is one reply: `POST /v1/completions` with the prompt as token ids, the generator's sampling
settings, a seed of its own (`types.request_seed`: identical prompts must not get
identical samples), `logprobs: 0` and `return_tokens_as_token_ids`, streamed (`stream: true`), so the reply is
checked token by token for the stop pattern as the other generators check it, and abandoned the moment it
matches (closing the stream aborts the request on the server). The tokens come back as "token_id:N" strings and
their log-probabilities after temperature and top-p (verl starts vLLM with `logprobs_mode="processed_logprobs"`;
the kit's server computes them so). A request goes to the server with the fewest in flight.

    policy = remote_policy(["10.0.0.1:8000", "10.0.0.2:8000"], tokenizer_dir, served_model="actor")
    run_episodes(policy, jobs, cfg)            # cfg.generation_backend 'auto' or 'remote'
"""

from __future__ import annotations

import http.client
import json
import queue
import threading
from dataclasses import dataclass, field

from .types import Generation, Replies, request_seed


@dataclass
class RemotePolicy:
    """What the rollout engine needs from a policy served remotely: the tokenizer and where the servers are."""

    tokenizer: object
    servers: list[str]
    """host:port of each server (a replica of the same weights)."""
    served_model: str
    """The `model` field of every request: the name the servers serve the weights under."""
    timeout: float = 3600.0
    """Seconds a request may take before the client gives up on it (a long reply at 27B takes minutes)."""
    in_flight: dict = field(default_factory=dict)
    """server -> requests in flight, shared by this policy's generators (least-loaded choice)."""

    def __post_init__(self):
        if not self.servers:
            raise ValueError("RemotePolicy.servers: no server given (host:port of each)")
        for s in self.servers:
            host, _, port = str(s).rpartition(":")
            if not host or not port.isdigit():
                raise ValueError(f"RemotePolicy.servers: {s!r} is not host:port")
        self.in_flight = {s: 0 for s in self.servers}
        self._lock = threading.Lock()

    def pick(self) -> str:
        with self._lock:
            s = min(self.servers, key=lambda x: self.in_flight[x])
            self.in_flight[s] += 1
            return s

    def done(self, server: str) -> None:
        with self._lock:
            self.in_flight[server] -= 1


def remote_policy(servers: list[str], tokenizer_dir: str, *, served_model: str = "") -> RemotePolicy:
    """A `RemotePolicy` whose tokenizer is read from `tokenizer_dir` (the served model's directory or the kit's
    model name); `served_model` defaults to that directory, as vLLM names a model it serves."""
    from ..model import policy_tokenizer, resolve_model

    path = resolve_model(tokenizer_dir)
    return RemotePolicy(tokenizer=policy_tokenizer(path), servers=list(servers), served_model=served_model or str(path))


def token_id(token: str) -> int:
    """The id in one of vLLM's `return_tokens_as_token_ids` tokens ("token_id:1234")."""
    prefix, _, n = token.partition(":")
    if prefix != "token_id" or not n.lstrip("-").isdigit():
        raise ValueError(f"a streamed token {token!r} is not 'token_id:N' (the server ignored "
                         "return_tokens_as_token_ids: a vLLM older than the kit expects?)")
    return int(n)


class RemoteGenerator:
    """The continuous generators' interface over remote completions servers (see the module docstring): one
    thread per request in flight reads its stream and hands finished replies to `poll`."""

    def __init__(self, policy: RemotePolicy, *, max_new_tokens: int, temperature: float = 0.6, top_p: float = 1.0,
                 stop_ids: list[int] | None = None, stop_pattern=None, seed: int = 0, **_ignored):
        self.policy = policy
        self._replies = Replies(policy.tokenizer, stop_ids or [policy.tokenizer.eos_token_id], stop_pattern)
        self._params = {"model": policy.served_model, "max_tokens": max_new_tokens, "temperature": temperature,
                        "top_p": top_p, "stop_token_ids": self._replies.stop_ids, "logprobs": 0,
                        "return_tokens_as_token_ids": True, "skip_special_tokens": False, "stream": True}
        self.seed = seed
        self._submitted = 0
        self._out: queue.Queue = queue.Queue()
        self._cancelled: set[str] = set()
        self._lock = threading.Lock()

    def request_seed(self, n: int) -> int:
        """The seed of this generator's n-th request (`types.request_seed`)."""
        return request_seed(self.seed, n)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        with self._lock:
            self._cancelled.update(self._replies.live)
        self._replies.live.clear()
        return False

    @property
    def busy(self) -> int:
        return len(self._replies.live)

    def submit(self, key, prompt_ids: list[int]) -> None:
        rid = self._replies.new(key)
        body = {**self._params, "prompt": list(prompt_ids), "seed": self.request_seed(self._submitted)}
        self._submitted += 1
        threading.Thread(target=self._request, args=(rid, body), daemon=True, name=f"remote-{rid}").start()

    def poll(self, timeout: float = 0.05):
        """Yield `(key, Generation)` for each reply finished since the last call; wait up to `timeout` for one.
        A request that failed raises here, naming the server and its answer."""
        try:
            items = [self._out.get(timeout=timeout)]
        except queue.Empty:
            return
        while True:
            try:
                items.append(self._out.get_nowait())
            except queue.Empty:
                break
        for item in items:
            if isinstance(item, Exception):
                raise item
            rid, toks, lps, finished = item
            done = self._replies.update(rid, toks, lps, finished, self._cancel)
            if done is not None:
                yield done

    def _cancel(self, rid: str) -> None:
        with self._lock:
            self._cancelled.add(rid)

    def _stopped(self, rid: str) -> bool:
        with self._lock:
            return rid in self._cancelled

    def _request(self, rid: str, body: dict) -> None:
        server = self.policy.pick()
        host, _, port = server.rpartition(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=self.policy.timeout)
        toks: list[int] = []
        lps: list[float] = []
        last = None  # the finished reply (or the failure), handed out once the server is released
        try:
            conn.request("POST", "/v1/completions", json.dumps(body), {"Content-Type": "application/json"})
            resp = conn.getresponse()
            if resp.status != 200:
                raise RuntimeError(f"{server} /v1/completions: HTTP {resp.status}: {resp.read()[:500]!r}")
            for line in resp:  # server-sent events: "data: {...}" lines, then "data: [DONE]"
                if self._stopped(rid):
                    return  # the stop pattern matched: closing the stream aborts the request on the server
                line = line.strip()
                if not line.startswith(b"data:"):
                    continue
                data = line[5:].strip()
                if data == b"[DONE]":
                    break
                choice = json.loads(data)["choices"][0]
                got = choice.get("logprobs") or {}
                toks += [token_id(t) for t in got.get("tokens") or []]
                lps += [float(x) for x in got.get("token_logprobs") or []]
                if choice.get("finish_reason") == "stop" and (not toks or toks[-1] not in self._replies.stop_ids):
                    # a stream that leaves the stop token out: put back, so the ids end as every other
                    # generator's do (its log-probability is not sent: 0.0)
                    why = choice.get("stop_reason")
                    toks.append(why if isinstance(why, int) else self._replies.stop_ids[0])
                    lps.append(0.0)
                if choice.get("finish_reason") is not None:
                    last = (rid, list(toks), list(lps), True)
                elif self._replies.pattern is not None:  # a partial reply matters only to the stop pattern
                    self._out.put((rid, list(toks), list(lps), False))
            if last is None:  # a stream that ended without a finish reason: the reply as it stands, finished
                last = (rid, list(toks), list(lps), True)
        except Exception as e:
            if not self._stopped(rid):
                last = RuntimeError(f"remote generation on {server} failed: {type(e).__name__}: {e}")
        finally:
            conn.close()
            self.policy.done(server)
        if last is not None:  # after the release: a caller that has the reply sees the server's count without it
            self._out.put(last)


__all__ = ["Generation", "RemoteGenerator", "RemotePolicy", "remote_policy", "token_id"]
