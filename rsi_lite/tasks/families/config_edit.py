"""Config editing: change, add and uncomment keys in key=value, INI and JSON files."""

from __future__ import annotations

import json
import random

from ..spec import Check, TaskSpec
from ._common import WORDS, Paths, app, nl, shadowed

FAMILY = "config_edit"

KEYS = "port host workers timeout log_level cache_size retries mode region user max_conn backup".split()


def _value(rng: random.Random, key: str):
    if key in ("port",):
        return rng.randint(1024, 9999)
    if key in ("workers", "timeout", "cache_size", "retries", "max_conn"):
        return rng.randint(1, 512)
    return rng.choice(WORDS)


def _kv_file(rng, keys) -> tuple[dict, str]:
    conf = {k: _value(rng, k) for k in keys}
    return conf, nl([f"# settings for {rng.choice(WORDS)}"] + [f"{k} = {v}" for k, v in conf.items()])


PARSE = """def conf(rel):
    out = {}
    for line in lines(rel):
        if line.strip() and not line.lstrip().startswith('#'):
            k, v = line.split('=', 1)
            out.setdefault(k.strip(), []).append(v.strip())
    return out
"""


def generate(rng: random.Random, difficulty: str, p: Paths = Paths()) -> TaskSpec:
    name = p(rng.choice(["app.conf", "server.conf", "service.cfg", "settings.ini"]))
    if difficulty in ("easy", "medium"):
        keys = rng.sample(KEYS, rng.randint(4, 6))
        conf, text = _kv_file(rng, keys)
        edits = {k: _value(rng, k) for k in rng.sample(keys, 1 if difficulty == "easy" else 2)}
        for k in edits:
            while str(edits[k]) == str(conf[k]):
                edits[k] = _value(rng, k)
        new_key = None
        if difficulty == "medium":
            new_key = rng.choice([k for k in KEYS if k not in keys])
            edits[new_key] = _value(rng, new_key)
        # the settings' current values: not stated (a shadow's file has other ones)
        conf, text = shadowed(rng, (conf, text), lambda r: _kv_file(r, keys))
        asks = [f"set {k} to {v}" if k != new_key else f"add a new key {k} with the value {v}" for k, v in edits.items()]
        instr = (
            f"Edit the config file {app(name)}: {', then '.join(asks)}. "
            "Keep the 'key = value' format and leave the other settings unchanged."
        )
        checks = []
        sed = []
        for k, v in edits.items():
            checks.append(Check(f"{k}_set", PARSE + f"assert conf({name!r}).get({k!r}) == [{str(v)!r}]"))
            if k == new_key:
                sed.append(f"echo '{k} = {v}' >> {name}")
            else:
                sed.append(f"sed -i 's/^{k} = .*/{k} = {v}/' {name}")
        unchanged = {k: [str(v)] for k, v in conf.items() if k not in edits}
        checks.append(Check("others_unchanged", PARSE + f"c = conf({name!r})\nassert {{k: c.get(k) for k in {sorted(unchanged)!r}}} == {unchanged!r}"))
        checks.append(Check("no_junk_lines", f"assert all(l.startswith('#') or ' = ' in l for l in lines({name!r}) if l.strip())"))
        return TaskSpec(FAMILY, difficulty, instr, {name: text}, checks, "\n".join(sed))
    # hard: INI sections (same key in two sections) or nested JSON
    if rng.random() < 0.5:
        name = p(name.rsplit("/", 1)[-1].rsplit(".", 1)[0] + ".ini")
        sections = rng.sample(["database", "server", "cache", "auth", "queue"], 3)
        key = rng.choice(["port", "timeout", "host"])
        vals = {s: _value(rng, key) for s in sections}
        target = rng.choice(sections)
        new = _value(rng, key)
        while str(new) == str(vals[target]):
            new = _value(rng, key)
        flags = [rng.choice(["true", "false"]) for _ in sections]
        # the sections' current values and flags: not stated
        vals, flags = shadowed(rng, (vals, flags), lambda r: ({s: _value(r, key) for s in sections},
                                                              [r.choice(["true", "false"]) for _ in sections]))
        body = []
        for s, flag in zip(sections, flags):
            body += [f"[{s}]", f"{key} = {vals[s]}", f"enabled = {flag}", ""]
        text = nl(body[:-1])
        instr = f"In the INI file {app(name)}, change {key} to {new} in the [{target}] section only. Every other section must stay as it is."
        read_ini = "import configparser\ncp = configparser.ConfigParser()\ncp.read_string(read(%r))\n" % name
        checks = [
            Check("still_parses", read_ini + f"assert cp.sections() == {sections!r}"),
            Check("target_changed", read_ini + f"assert cp[{target!r}][{key!r}] == {str(new)!r}"),
            Check("other_sections_unchanged", read_ini + "\n".join(f"assert cp[{s!r}][{key!r}] == {str(vals[s])!r}" for s in sections if s != target)),
            Check("enabled_flags_kept", read_ini + f"assert all('enabled' in cp[s] for s in {sections!r})"),
        ]
        sol = f"sed -i '/^\\[{target}\\]/,/^\\[/ s/^{key} = .*/{key} = {new}/' {name}"
        return TaskSpec(FAMILY, difficulty, instr, {name: text}, checks, sol)
    name = p("settings.json")
    data = {"service": {"name": rng.choice(WORDS), "port": _value(rng, "port")},
            "limits": {"workers": _value(rng, "workers"), "timeout": _value(rng, "timeout")},
            "features": rng.sample(WORDS, 3)}
    feature = rng.choice([w for w in WORDS if w not in data["features"]])
    new_workers = data["limits"]["workers"] + rng.randint(1, 9)
    # the rest of the file: not stated (a shadow's has other values and features, never the one to append)
    data = shadowed(rng, data, lambda r: {
        "service": {"name": r.choice(WORDS), "port": _value(r, "port")},
        "limits": {"workers": _value(r, "workers"), "timeout": _value(r, "timeout")},
        "features": r.sample([w for w in WORDS if w != feature], 3)})
    want = json.loads(json.dumps(data))
    want["limits"]["workers"] = new_workers
    want["features"].append(feature)
    instr = (
        f"Update the JSON config {app(name)}: set limits.workers to {new_workers} (a number) and append "
        f"\"{feature}\" to the features list. Keep it valid JSON and keep every other value."
    )
    checks = [
        Check("valid_json", f"json.loads(read({name!r}))"),
        Check("workers_set", f"assert json.loads(read({name!r}))['limits']['workers'] == {new_workers}"),
        Check("feature_appended", f"assert json.loads(read({name!r}))['features'] == {want['features']!r}"),
        Check("rest_unchanged", f"d = json.loads(read({name!r}))\nassert d['service'] == {want['service']!r} and d['limits']['timeout'] == {want['limits']['timeout']}"),
    ]
    sol = (
        f"python3 -c \"import json; d=json.load(open('{name}')); d['limits']['workers']={new_workers}; "
        f"d['features'].append('{feature}'); json.dump(d, open('{name}','w'), indent=2)\""
    )
    return TaskSpec(FAMILY, difficulty, instr, {name: json.dumps(data, indent=2) + "\n"}, checks, sol)
