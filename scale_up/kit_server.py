"""The kit's own generation engine as a separate process, in the kit's environment, for the CPU checks of the
verl agent loop (`scale_up.agent_loop`): verl's environment pins another transformers than the kit's engine
runs on, so the engine stays in its own process and the agent loop reaches it over HTTP through
`scale_up.agent_loop.KitServerClient`, which has the `generate` of verl's `LLMServerClient`.

    python -m scale_up.kit_server serve --model DIR --port-file F        # POST /generate, /v1/completions; GET /health
    python -m scale_up.kit_server episode --model DIR --task T --seed S --out F [RolloutConfig fields as JSON]

`serve`: each request is {"prompt_ids": [...], "sampling_params": {...}} as verl's agent loop sends them
(temperature, top_p, max_tokens, seed, stop_token_ids); the reply is verl's `TokenOutput` as JSON (token_ids,
log_probs, stop_reason). `POST /v1/completions` is the subset of vLLM's OpenAI-compatible completions API that
`rsi_lite.policy.gen.remote_engine` sends verl's rollout replicas on GPUs (the prompt as token ids, a seed per
request, `logprobs: 0`, `return_tokens_as_token_ids`, streamed or not), so the kit's remote generation is tested
on the CPU against the wire format it meets there. Replies come from the kit's transformers engine (`policy.gen.dispatch.make_generator`),
one request at a time. A sampled request gets a generator seeded with its own seed; greedy requests share one
generator for the server's life, as the episodes of one `run_episodes` call share one.

`episode`: the same episode through the kit's own rollout engine (`rsi_lite.rollout.engine.run_episodes`), its
trajectory written as JSON: the reference the CPU test compares the agent loop's output with.

On GPUs none of this runs: verl's vLLM servers serve the agent loop.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path


def _policy(model: str):
    """The model with every weight as loaded (no adapter), in the precision `scale_up.loading` gives the `serve` job:
    float32 on the CPU (the kit's own episodes, which the CPU test compares with, load the same), bf16 on CUDA."""
    from rsi_lite.policy.model import PolicyConfig, load_policy

    from .loading import choose_loading, this_machine

    here = this_machine()
    how = choose_loading("serve", cuda=here["cuda"], vllm=here["vllm"])
    return load_policy(PolicyConfig(model=model, quantization="full", dtype=how.dtype))


class Engine:
    """The kit's generators behind one `generate(prompt_ids, sampling_params)` call."""

    def __init__(self, policy, context_budget: int):
        self.policy, self.context_budget = policy, context_budget
        self._shared: dict = {}

    def _generator(self, sp: dict):
        from rsi_lite.policy.gen.dispatch import make_generator

        return make_generator(self.policy, "transformers", max_new_tokens=int(sp["max_tokens"]),
                              temperature=float(sp.get("temperature", 1.0)), top_p=float(sp.get("top_p", 1.0)),
                              stop_ids=list(sp.get("stop_token_ids") or []) or None, seed=int(sp.get("seed") or 0),
                              max_concurrent=1, context_budget=self.context_budget)

    def generate(self, prompt_ids: list[int], sp: dict) -> dict:
        greedy = float(sp.get("temperature", 1.0)) == 0.0
        if greedy:
            key = json.dumps({k: v for k, v in sorted(sp.items()) if k != "seed"})
            if key not in self._shared:
                self._shared[key] = self._generator(sp).__enter__()
            return self._one(self._shared[key], prompt_ids)
        with self._generator(sp) as gen:
            return self._one(gen, prompt_ids)

    @staticmethod
    def _one(gen, prompt_ids: list[int]) -> dict:
        gen.submit("r", list(prompt_ids))
        while True:
            for _, g in gen.poll(timeout=0.05):
                return {"token_ids": list(g.token_ids), "log_probs": list(g.logprobs),
                        "stop_reason": "completed", "extra_fields": {"finish_reason": g.finish_reason}}

    def close(self) -> None:
        for gen in self._shared.values():
            gen.__exit__(None, None, None)


def completion_params(req: dict) -> dict:
    """A /v1/completions request's sampling settings as `Engine.generate` takes them; a field the kit's server
    cannot honour is refused by name (a silent difference would make the CPU test pass where a GPU run differs)."""
    if not isinstance(req.get("prompt"), list) or not all(isinstance(t, int) for t in req["prompt"]):
        raise ValueError("/v1/completions: field 'prompt' must be a list of token ids")
    if req.get("logprobs") not in (0, None) or req.get("n", 1) != 1 or req.get("stop"):
        raise ValueError("/v1/completions: only logprobs 0, n 1 and no stop strings are served here")
    if not req.get("return_tokens_as_token_ids"):
        raise ValueError("/v1/completions: field 'return_tokens_as_token_ids' must be true (the kit reads ids)")
    return {"max_tokens": int(req.get("max_tokens", 16)), "temperature": float(req.get("temperature", 1.0)),
            "top_p": float(req.get("top_p", 1.0)), "seed": int(req.get("seed") or 0),
            "stop_token_ids": list(req.get("stop_token_ids") or [])}


def completion_chunks(out: dict, model: str) -> list[dict]:
    """One reply (`Engine.generate`'s) as the stream of chunks vLLM sends: one token each, the last one with the
    finish reason ('stop' for a stop token, which stays in the ids as vLLM keeps it, else 'length')."""
    toks, lps = out["token_ids"], out["log_probs"]
    why = "stop" if out["extra_fields"]["finish_reason"] == "stop" else "length"
    chunks = []
    for i, (t, lp) in enumerate(zip(toks, lps, strict=True)):
        last = i == len(toks) - 1
        chunks.append({"object": "text_completion", "model": model, "choices": [{
            "index": 0, "text": "", "logprobs": {"tokens": [f"token_id:{t}"], "token_logprobs": [lp]},
            "finish_reason": why if last else None, "stop_reason": t if last and why == "stop" else None}]})
    if not chunks:
        chunks.append({"object": "text_completion", "model": model, "choices": [{
            "index": 0, "text": "", "logprobs": {"tokens": [], "token_logprobs": []}, "finish_reason": why,
            "stop_reason": None}]})
    return chunks


def serve(args) -> None:
    engine = Engine(_policy(args.model), args.context_budget)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a):  # quiet
            pass

        def _send(self, code: int, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            self._send(200 if self.path == "/health" else 404, {"ok": self.path == "/health"})

        def do_POST(self):
            if self.path not in ("/generate", "/v1/completions"):
                return self._send(404, {"error": self.path})
            req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            try:
                if self.path == "/generate":
                    return self._send(200, engine.generate(req["prompt_ids"], req["sampling_params"]))
                out = engine.generate(req["prompt"], completion_params(req))
            except Exception as e:  # the client raises it with the reason
                return self._send(500, {"error": f"{type(e).__name__}: {e}"})
            chunks = completion_chunks(out, req.get("model", ""))
            if not req.get("stream"):
                return self._send(200, chunks[-1] | {"choices": [{**chunks[-1]["choices"][0], "logprobs": {
                    "tokens": [f"token_id:{t}" for t in out["token_ids"]], "token_logprobs": out["log_probs"]}}]})
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()  # HTTP/1.0: the stream ends when the connection closes
            for c in chunks:
                self.wfile.write(b"data: " + json.dumps(c).encode() + b"\n\n")
            self.wfile.write(b"data: [DONE]\n\n")

    class Server(HTTPServer):
        request_queue_size = 256  # one request is served at a time; the others wait connected, not refused

    httpd = Server(("127.0.0.1", args.port), Handler)
    if args.port_file:
        tmp = Path(args.port_file + ".tmp")
        tmp.write_text(str(httpd.server_address[1]))
        os.replace(tmp, args.port_file)
    try:
        httpd.serve_forever()
    finally:
        engine.close()


def episode(args) -> None:
    from rsi_lite.rollout.engine import RolloutConfig, run_episodes
    from rsi_lite.tasks.task import load_task

    cfg = RolloutConfig(**json.loads(args.rollout))
    traj = run_episodes(_policy(args.model), [(load_task(args.task), args.seed)], cfg)[0]
    Path(args.out).write_text(traj.to_json())


def main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="python -m scale_up.kit_server")
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--model", required=True)
    s.add_argument("--port", type=int, default=0)
    s.add_argument("--port-file", default="")
    s.add_argument("--context-budget", type=int, default=2048)
    e = sub.add_parser("episode")
    e.add_argument("--model", required=True)
    e.add_argument("--task", required=True)
    e.add_argument("--seed", type=int, default=0)
    e.add_argument("--out", required=True)
    e.add_argument("--rollout", default="{}", help="RolloutConfig fields as a JSON object")
    args = p.parse_args(argv)
    {"serve": serve, "episode": episode}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
