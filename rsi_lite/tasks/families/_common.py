"""Shared vocabulary and helpers for the family generators.

Generators draw every name and value from a seeded `random.Random`, so one seed gives
one task, byte for byte, on any machine.
"""

from __future__ import annotations

import io
import random
import tarfile

WORDS = (
    "apple amber anchor arrow atlas badge basil beacon birch bloom border breeze cable "
    "candle canyon carbon cedar cherry cipher cloud cobalt comet copper coral cotton "
    "crystal dawn delta desert dune echo ember falcon fern field flint forest frost "
    "galaxy garden garnet glacier granite harbor hazel horizon indigo iris island ivory "
    "jade jasmine juniper kettle lagoon lantern lemon linen lotus lunar maple marble "
    "meadow meteor mint mirror moss nebula nickel north oak ocean olive onyx orbit "
    "orchid pebble pepper pine planet plum polar prism quartz quill radar raven reef "
    "ridge river robin saffron sage salt sapphire shadow silver sky slate solar spark "
    "spruce stone storm summit sunset tide timber topaz tulip tundra valley velvet "
    "violet walnut willow winter zephyr"
).split()

NAMES = (
    "alice bob carol dave erin frank grace heidi ivan judy karl liam mallory nina "
    "oscar peggy quinn rupert sybil trent uma victor wendy xena yusuf zoe"
).split()

CITIES = "berlin cairo dakar delhi lima lisbon madrid nairobi osaka oslo paris quito rome seoul sydney tokyo".split()


class TaskRandom(random.Random):
    """A generator's seeded stream that can also make the task's shadow twin.

    A shadow has the original's instruction and different hidden data: file contents, values and names the
    instruction does not state. Generators draw such data through `hidden(rng, draw)`. The main stream always
    advances exactly as in the original, so every stated value (file names, words, numbers in the instruction)
    comes out the same; in a shadow (`shadow=True`), `hidden` returns `draw` applied to a second stream seeded
    from the first. An answer computed from the files passes a shadow too; one copied from the original's
    expected output does not (`verify.shadow`)."""

    def __init__(self, seed, shadow: bool = False):
        super().__init__(seed)
        self.twin = random.Random(f"{seed}#shadow") if shadow else None


def hidden(rng: random.Random, draw):
    """`draw(rng)`: data the instruction does not state (see `TaskRandom`). The original's value unless `rng`
    is a shadow's stream, which gets `draw` of its twin stream instead (the main stream still advances)."""
    return shadowed(rng, draw(rng), draw)


def shadowed(rng: random.Random, value, redraw):
    """`value` (drawn from the main stream as the original draws it), or in a shadow `redraw(twin stream)`:
    for hidden data a stated value was drawn from (the twin keeps what the instruction states, e.g. a word the
    lines must contain)."""
    twin = getattr(rng, "twin", None)
    return redraw(twin) if twin is not None else value


class Paths:
    """Prefixes every workspace path, so a generator's files can live in a subfolder of a composite task."""

    def __init__(self, prefix: str = ""):
        self.prefix = prefix

    def __call__(self, rel: str) -> str:
        return f"{self.prefix}{rel}"



def app(rel: str) -> str:
    """The absolute path the agent sees for a workspace-relative path."""
    return f"/app/{rel}"


def words(rng: random.Random, n: int, pool=WORDS) -> list[str]:
    return rng.sample(pool, n)


def fname(rng: random.Random, ext: str, n_words: int = 2) -> str:
    return "_".join(words(rng, n_words)) + ext


def phrase(rng: random.Random, n: int = 3) -> str:
    return " ".join(words(rng, n))


def text_block(rng: random.Random, n_lines: int, words_per_line=(2, 6)) -> list[str]:
    return [" ".join(rng.choices(WORDS, k=rng.randint(*words_per_line))) for _ in range(n_lines)]


def targz(files: dict[str, str | bytes], modes: dict[str, int] | None = None) -> bytes:
    """A deterministic .tar.gz (fixed mtimes and owners), so checked-in archives never churn."""
    import gzip

    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        dirs = sorted({"/".join(p.split("/")[:i]) for p in files for i in range(1, p.count("/") + 1)})
        for d in dirs:
            info = tarfile.TarInfo(d)
            info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, 0
            tar.addfile(info)
        for path in sorted(files):
            data = files[path].encode() if isinstance(files[path], str) else files[path]
            info = tarfile.TarInfo(path)
            info.size, info.mtime = len(data), 0
            info.mode = (modes or {}).get(path, 0o644)
            tar.addfile(info, io.BytesIO(data))
    return gzip.compress(raw.getvalue(), mtime=0)


def nl(lines: list[str]) -> str:
    """Lines as file text: each ends with a newline, and no lines is the empty file."""
    return "".join(line + "\n" for line in lines)
