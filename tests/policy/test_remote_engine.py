"""Remote generation (`rsi_lite.policy.gen.remote_engine`): the kit's episodes with the replies decoded by servers
of vLLM's completions API. Against a canned server: the stream read token by token, a stop token the stream left
out put back, a server's error named, requests spread over servers. Against the kit's own server
(`scale_up.kit_server serve`, the bundled model) on a mini task: the episodes equal the kit's local ones, and
two samples of one prompt get seeds and replies of their own.

Run: pytest tests/policy/test_remote_engine.py
"""

import json
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from types import SimpleNamespace

import pytest

from rsi_lite.policy.gen.remote_engine import RemoteGenerator, RemotePolicy, token_id

from ..conftest import REPO

EOS = 2


class _Tok:
    eos_token_id = EOS

    def decode(self, ids, skip_special_tokens=False):
        return "".join("`" if t == 96 else "x" for t in ids)


def _canned(replies: dict, seen: list):
    """A server that streams, for a request whose prompt's first id is P, the tokens `replies[P]` (one a chunk,
    the last with finish reason 'stop' and without the stop token, as a stream may leave it out), or answers
    HTTP 500 for P == 0."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_POST(self):
            req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append((self.server.server_address[1], req))
            time.sleep(0.3)  # requests overlap, as a model's replies do: the least-loaded choice then spreads them
            toks = replies.get(req["prompt"][0])
            if toks is None:
                self.send_response(500)
                self.end_headers()
                self.wfile.write(b"engine dead")
                return
            self.send_response(200)
            self.end_headers()
            for i, t in enumerate(toks):
                last = i == len(toks) - 1
                c = {"choices": [{"logprobs": {"tokens": [f"token_id:{t}"], "token_logprobs": [-0.5]},
                                  "finish_reason": "stop" if last else None, "stop_reason": None}]}
                self.wfile.write(b"data: " + json.dumps(c).encode() + b"\n\n")
            self.wfile.write(b"data: [DONE]\n\n")

    httpd = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


def _drain(gen, n, timeout=30.0):
    out, t0 = {}, time.monotonic()
    while len(out) < n:
        assert time.monotonic() - t0 < timeout, "replies did not come"
        for key, g in gen.poll(timeout=0.1):
            out[key] = g
    return out


def test_the_stream_is_read_token_by_token_and_requests_are_spread_over_the_servers():
    seen = []
    servers = [_canned({5: [11, 12, 13]}, seen), _canned({5: [11, 12, 13]}, seen)]
    try:
        policy = RemotePolicy(_Tok(), [f"127.0.0.1:{s.server_address[1]}" for s in servers], "actor")
        with RemoteGenerator(policy, max_new_tokens=8, temperature=1.0, seed=3) as gen:
            for k in range(4):
                gen.submit(k, [5, 6])
            got = _drain(gen, 4)
        assert {k: g.token_ids for k, g in got.items()} == {k: [11, 12, 13, EOS] for k in range(4)}  # EOS put back
        assert all(g.logprobs == [-0.5, -0.5, -0.5, 0.0] and g.finish_reason == "stop" for g in got.values())
        reqs = [r for _, r in seen]
        assert {r["model"] for r in reqs} == {"actor"} and all(r["return_tokens_as_token_ids"] for r in reqs)
        assert sorted(r["seed"] for r in reqs) == [3 * 2**20 + n for n in range(4)]  # a seed of its own each
        assert len({port for port, _ in seen}) == 2  # both servers served
        assert policy.in_flight == dict.fromkeys(policy.servers, 0)
    finally:
        for s in servers:
            s.shutdown()


def test_a_failed_request_is_named_with_its_server_and_bad_servers_are_refused():
    seen = []
    s = _canned({}, seen)
    try:
        policy = RemotePolicy(_Tok(), [f"127.0.0.1:{s.server_address[1]}"], "actor")
        with RemoteGenerator(policy, max_new_tokens=4) as gen:
            gen.submit("k", [0])
            with pytest.raises(RuntimeError, match=r"127\.0\.0\.1:\d+ .*HTTP 500.*engine dead"):
                _drain(gen, 1)
    finally:
        s.shutdown()
    with pytest.raises(ValueError, match="not host:port"):
        RemotePolicy(_Tok(), ["localhost"], "actor")
    with pytest.raises(ValueError, match="no server"):
        RemotePolicy(_Tok(), [], "actor")
    with pytest.raises(ValueError, match="token_id:N"):
        token_id("hello")


def test_a_local_policy_cannot_ask_for_remote_generation():
    from rsi_lite.policy.gen.dispatch import resolve_backend

    local = SimpleNamespace(model=None)
    with pytest.raises(ValueError, match="needs a RemotePolicy"):
        resolve_backend(local, "remote")
    remote = RemotePolicy(_Tok(), ["127.0.0.1:1"], "actor")
    assert resolve_backend(remote, "auto") == "remote"
    with pytest.raises(ValueError, match="served remotely"):
        resolve_backend(remote, "native")


# ---------------------------------------------------------------- against the kit's own server, real episodes

TASKS = [REPO / "tasks_mini" / "core" / name for name in ("core-000-file_ops-easy", "core-005-text_processing-easy")]


@pytest.fixture(scope="module")
def kit_server(tmp_path_factory):
    from rsi_lite.policy.model import prepare_model

    model = str(prepare_model())
    where = tmp_path_factory.mktemp("server")
    port_file, log = where / "port", open(where / "server.log", "w")
    proc = subprocess.Popen([sys.executable, "-m", "scale_up.kit_server", "serve", "--model", model,
                             "--port-file", str(port_file)], cwd=REPO, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 300
        while not port_file.exists():
            if proc.poll() is not None:
                pytest.fail(f"the kit server exited: {(where / 'server.log').read_text()[-2000:]}")
            assert time.monotonic() < deadline, "the kit server did not start in 300 s"
            time.sleep(0.5)
        yield model, f"127.0.0.1:{port_file.read_text()}"
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()


def test_remote_episodes_equal_the_kits_own(kit_server, bwrap_ok):
    from rsi_lite.policy.gen.remote_engine import remote_policy
    from rsi_lite.policy.model import PolicyConfig, load_policy
    from rsi_lite.rollout.engine import RolloutConfig, run_episodes
    from rsi_lite.tasks.task import load_task

    model, server = kit_server
    jobs = [(load_task(t), 0) for t in TASKS]
    cfg = dict(harness="plain", max_turns=2, max_new_tokens=40, temperature=0.0, batch_size=1, open_episodes=1)
    local = run_episodes(load_policy(PolicyConfig(model=model, quantization="full")), jobs,
                         RolloutConfig(**cfg, generation_backend="transformers"))
    remote = run_episodes(remote_policy([server], model), jobs, RolloutConfig(**cfg))
    for a, b in zip(local, remote, strict=True):
        assert b.sampler["backend"] == "remote"
        assert a.token_ids == b.token_ids and a.action_mask == b.action_mask and a.turn_spans == b.turn_spans
        assert a.logprobs == pytest.approx(b.logprobs, abs=1e-4)
        assert a.finish_reason == b.finish_reason and a.verifier["strict"] == b.verifier["strict"]


def test_two_samples_of_one_prompt_get_seeds_and_replies_of_their_own(kit_server):
    from rsi_lite.policy.gen.remote_engine import remote_policy

    model, server = kit_server
    policy = remote_policy([server], model)
    prompt = policy.tokenizer.encode("A Unix command that lists files:")
    with RemoteGenerator(policy, max_new_tokens=24, temperature=1.0, seed=0) as gen:
        gen.submit("a", prompt)
        gen.submit("b", prompt)
        got = _drain(gen, 2, timeout=300)
    assert got["a"].token_ids != got["b"].token_ids
