"""Self-rewrite's SFT on verl's SFT trainer, on the kit's own examples: `KitSFTDataset`, the dataset class verl's
SFT trainer builds when its config names it (`data.custom_cls.path=scale_up/sft_data.py`,
`data.custom_cls.name=KitSFTDataset`, `data.train_files=RUN/rsr-N/dataset.jsonl`).

verl's default SFT dataset re-renders chat messages into tokens; the kit trains on the ids it stored (the
model's own action tokens verbatim, everything else from the chat template) with the loss on the action tokens
only (`rsi_lite.rsr.clean.Example`: `input_ids`, `loss_mask`). This class hands those to verl unchanged: the
same convention as the kit's `masked_nll` (the mask marks the tokens to predict; verl's `sft_loss` shifts it
by one to meet the log-probabilities). Like the kit's `train_sft`, an example longer than `max_length` or
without a masked token is left out (counted in `dropped`), never truncated.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
from torch.utils.data import Dataset


def read_examples(paths) -> list[dict]:
    """The kit's examples (one JSON object a line: `Example.to_dict()`) from one path or a list of them."""
    if isinstance(paths, (str, Path)):
        paths = [paths]
    rows = []
    for p in paths:
        with open(p) as f:
            for n, line in enumerate(f, 1):
                if line.strip():
                    try:
                        rows.append(json.loads(line))
                    except json.JSONDecodeError as e:
                        raise ValueError(f"{p}:{n}: not a JSON example ({e})") from None
    return rows


class KitSFTDataset(Dataset):
    """The signature verl's `create_sft_dataset` calls a custom dataset class with."""

    def __init__(self, parquet_files, tokenizer, config, processor=None, max_samples: int = -1):
        config = config or {}
        self.pad_mode = config.get("pad_mode", "no_padding")
        if self.pad_mode not in ("right", "no_padding"):
            raise ValueError(f"pad_mode {self.pad_mode!r}: 'right' or 'no_padding'")
        self.max_length = int(config.get("max_length", 1024))
        self.pad_id = tokenizer.pad_token_id if tokenizer is not None and tokenizer.pad_token_id is not None else 0
        rows = read_examples(parquet_files)
        for r in rows:
            if len(r["input_ids"]) != len(r["loss_mask"]):
                raise ValueError(f"example of {r.get('task')}: {len(r['input_ids'])} ids, {len(r['loss_mask'])} mask")
        kept = [r for r in rows if len(r["input_ids"]) <= self.max_length and sum(r["loss_mask"])]
        self.dropped = len(rows) - len(kept)
        self.examples = kept[:max_samples] if max_samples and max_samples > 0 else kept

    def __len__(self) -> int:
        return len(self.examples)

    def __getitem__(self, i: int) -> dict:
        e = self.examples[i]
        ids = torch.tensor(e["input_ids"], dtype=torch.long)
        mask = torch.tensor(e["loss_mask"], dtype=torch.long)
        pos = torch.arange(len(ids), dtype=torch.long)
        if self.pad_mode == "no_padding":
            return {"input_ids": ids, "position_ids": pos, "loss_mask": mask}
        pad = self.max_length - len(ids)
        return {"input_ids": torch.cat([ids, torch.full((pad,), self.pad_id, dtype=torch.long)]),
                "attention_mask": torch.cat([torch.ones(len(ids), dtype=torch.long), torch.zeros(pad, dtype=torch.long)]),
                "position_ids": torch.cat([pos, torch.zeros(pad, dtype=torch.long)]),
                "loss_mask": torch.cat([mask, torch.zeros(pad, dtype=torch.long)])}
