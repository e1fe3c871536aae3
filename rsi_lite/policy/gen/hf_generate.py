"""Batched generation that records the token ids and the log-probability of every sampled token.

The log-probabilities are those of the distribution the tokens were actually drawn from.
Temperature and top-p are applied by our own processor list, in that order, followed by a
recorder that reads the final scores of each step (the next step tells it which token was
chosen); transformers is asked for plain sampling, so it adds no warper of its own and the
order does not depend on its version. So with
sampling, `logprobs[t] = log p_T,top-p(token_t | prefix)`; with greedy decoding (temperature
0) they are the plain softmax of the logits. Nothing of size [batch, steps, vocab] is kept.

Pitfall: PPO's ratio compares these with the training forward pass, which sees the logits
at temperature 1; a sampling temperature other than 1 makes the two distributions differ.
"""

from __future__ import annotations

from .types import Generation


class _LogprobRecorder:
    """A logits processor: remembers each step's log-softmax, gathers the chosen token one step later."""

    def __init__(self):
        self.prev = None
        self.steps: list = []

    def __call__(self, input_ids, scores):
        import torch

        if self.prev is not None:
            self.steps.append(self.prev.gather(1, input_ids[:, -1:]).squeeze(1))
        self.prev = torch.log_softmax(scores.float(), dim=-1)
        return scores

    def finish(self, last_tokens):
        if self.prev is not None:
            self.steps.append(self.prev.gather(1, last_tokens[:, None]).squeeze(1))
            self.prev = None


class StopOnPattern:
    """A stopping criterion: a row stops once its generated text matches `pattern` (e.g. a closed code block)."""

    def __init__(self, tokenizer, pattern, prompt_width: int, rows: int):
        self.tok, self.pattern, self.width = tokenizer, pattern, prompt_width
        self.stopped_at: list[int | None] = [None] * rows
        """Generated length at which each row matched (its later tokens are padding)."""

    def __call__(self, input_ids, scores, **kw):
        import torch

        gen = input_ids[:, self.width:]
        for i in range(gen.shape[0]):
            if self.stopped_at[i] is None and self.pattern.search(self.tok.decode(gen[i], skip_special_tokens=True)):
                self.stopped_at[i] = gen.shape[1]
        return torch.tensor([s is not None for s in self.stopped_at], device=input_ids.device)


def generate_batch(model, tokenizer, prompts: list[list[int]], *, max_new_tokens: int = 256,
                   temperature: float = 0.6, top_p: float = 1.0, stop_ids: list[int] | None = None,
                   stop_pattern=None, seed: int | None = None) -> list[Generation]:
    """Generate one completion per prompt (token id lists of any lengths) in one batched call.

    `stop_pattern` (a compiled regex) ends a row as soon as its text matches, e.g. once a
    fenced code block is closed; such a row's finish_reason is 'pattern'.
    """
    import torch
    from transformers import LogitsProcessorList, TemperatureLogitsWarper, TopPLogitsWarper

    if not prompts:
        return []
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    stop = list(stop_ids) if stop_ids else [tokenizer.eos_token_id]
    width = max(len(p) for p in prompts)
    ids = torch.full((len(prompts), width), pad, dtype=torch.long)
    mask = torch.zeros((len(prompts), width), dtype=torch.long)
    for i, p in enumerate(prompts):  # left padding: every prompt ends at the same column
        ids[i, width - len(p):] = torch.tensor(p, dtype=torch.long)
        mask[i, width - len(p):] = 1
    if seed is not None:
        torch.manual_seed(seed)
    rec = _LogprobRecorder()
    sample = temperature > 0
    procs = []
    if sample and temperature != 1.0:
        procs.append(TemperatureLogitsWarper(temperature))
    if sample and top_p < 1.0:
        procs.append(TopPLogitsWarper(top_p))
    pattern_stop = StopOnPattern(tokenizer, stop_pattern, width, len(prompts)) if stop_pattern is not None else None
    extra = {}
    if pattern_stop:
        from transformers import StoppingCriteriaList

        extra["stopping_criteria"] = StoppingCriteriaList([pattern_stop])
    kwargs = dict(**extra, do_sample=sample, max_new_tokens=max_new_tokens, eos_token_id=stop, pad_token_id=pad,
                  logits_processor=LogitsProcessorList([*procs, rec]), return_dict_in_generate=True,
                  temperature=1.0 if sample else None, top_p=1.0 if sample else None, top_k=0 if sample else None)
    device = next(model.parameters()).device
    with torch.no_grad():
        out = model.generate(input_ids=ids.to(device), attention_mask=mask.to(device), **kwargs)
    new = out.sequences[:, width:].cpu()
    rec.finish(out.sequences[:, -1])
    lps = torch.stack(rec.steps, dim=1).cpu() if rec.steps else torch.zeros((len(prompts), 0))
    gens = []
    for i in range(len(prompts)):
        limit = pattern_stop.stopped_at[i] if pattern_stop else None
        toks, lp, reason = [], [], "length"
        for t in range(new.shape[1] if limit is None else min(limit, new.shape[1])):
            tok = int(new[i, t])
            toks.append(tok)
            lp.append(float(lps[i, t]))
            if tok in stop:
                reason = "stop"
                break
        if reason == "length" and limit is not None and len(toks) == limit:
            reason = "pattern"
        gens.append(Generation(toks, lp, reason))
    return gens
