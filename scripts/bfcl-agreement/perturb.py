#!/usr/bin/env python3
"""Candidates graded by BFCL's own checker, for measuring how often Harness Watch's `bfcl` grader agrees.

Usage: python3 perturb.py <berkeley-function-call-leaderboard folder> <out.jsonl> [--seed N]

For every AST, irrelevance and relevance row of BFCL v4 it writes the ground truth as a model would
send it through function calling (names with "." as "_", Java/JavaScript values as source strings)
and systematic perturbations of it, each with the verdict of BFCL's `ast_checker` (or of its
relevance rule). Each call is written as a model's function call reaches a harness: a name and its
`arguments` as JSON text (Python's json.dumps, so a float stays `5.0`), the form the tool-bridge
receives. This script is not part of the test suite; it needs a BFCL checkout, nothing else.
"""
import copy
import json
import random
import sys
import types
from pathlib import Path

root = Path(sys.argv[1]).resolve()
out_path = Path(sys.argv[2])
seed = int(sys.argv[sys.argv.index("--seed") + 1]) if "--seed" in sys.argv else 7
rng = random.Random(seed)
sys.path.insert(0, str(root))

# BFCL's checker only asks the model configuration whether "." becomes "_" in names: answer yes
# (every function-calling API the field uses does), without importing the model handlers.
stub = types.ModuleType("bfcl_eval.constants.model_config")
stub.MODEL_CONFIG_MAPPING = types.SimpleNamespace()


class _Cfg(dict):
    def __getitem__(self, k):
        return types.SimpleNamespace(underscore_to_dot=True)


stub.MODEL_CONFIG_MAPPING = _Cfg()
sys.modules["bfcl_eval.constants.model_config"] = stub
from bfcl_eval.constants.enums import Language  # noqa: E402
from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker  # noqa: E402

data = root / "bfcl_eval" / "data"


def rows(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def under(name):
    return name.replace(".", "_")


def first(allowed):
    for a in allowed:
        if a != "" and a is not None:
            return a
    return None


def plain(v):
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            if isinstance(x, list):
                f = first(x)
                if f is not None:
                    out[k] = plain(f)
            else:
                out[k] = x
        return out
    if isinstance(v, list):
        return [plain(x) for x in v]
    return v


def java_lit(v, t, items):
    if isinstance(v, str) and t not in ("Array", "ArrayList", "HashMap"):
        return v
    if t == "boolean":
        return "true" if v else "false"
    if t == "long":
        return f"{v}L"
    if t == "float":
        return f"{v}f"
    if t in ("Array", "ArrayList", "HashMap") and not isinstance(v, (list, dict)):
        return json.dumps(v)
    if t == "Array" and isinstance(v, list):
        inner = ", ".join(str(x) if not isinstance(x, bool) else str(x).lower() for x in v)
        return "new %s[]{%s}" % ("String" if items == "String" else "int", inner)
    if t == "ArrayList" and isinstance(v, list):
        inner = ", ".join(json.dumps(x) if isinstance(x, str) else str(x) for x in v)
        return f"new ArrayList<>(Arrays.asList({inner}))"
    if t == "HashMap" and isinstance(v, dict):
        puts = " ".join(
            f'put("{k}", {json.dumps(x) if isinstance(x, str) else str(x).lower() if isinstance(x, bool) else x});'
            for k, x in v.items()
        )
        return "new HashMap<String, Object>() {{ %s }}" % puts
    return json.dumps(v) if not isinstance(v, (int, float)) else str(v)


def js_lit(v, t, items):
    if t == "Boolean":
        return "true" if v is True else "false" if v is False else str(v)
    if t == "Bigint":
        return f"{v}n"
    if t == "array" and isinstance(v, list):
        return "[" + ", ".join(f"'{x}'" if isinstance(x, str) else json.dumps(x) for x in v) + "]"
    if t == "dict" and isinstance(v, dict):
        return "{" + ", ".join(f"{k}: " + (f"'{x}'" if isinstance(x, str) else json.dumps(x)) for k, x in v.items()) + "}"
    return v if isinstance(v, str) else json.dumps(v)


def render(value, decl, lang):
    t = decl.get("type")
    items = (decl.get("items") or {}).get("type")
    if lang == "java":
        return java_lit(value, t, items)
    if lang == "javascript":
        return js_lit(value, t, items)
    return value


def ground_call(fn_decl, params, lang, pick=0):
    props = fn_decl["parameters"].get("properties", {})
    args = {}
    for p, allowed in params.items():
        vals = [a for a in allowed if a != "" and a is not None]
        if not vals:
            continue
        v = plain(vals[min(pick, len(vals) - 1)])
        args[p] = render(v, props.get(p, {}), lang)
    return args


def mutate_string(s):
    return rng.choice([s.upper(), s.replace(" ", ""), s + ".", " ".join(s), s + "x", s[::-1], "'" + s + "'", s.title()])


def perturb_value(v):
    if isinstance(v, bool):
        return rng.choice([not v, str(v).lower(), int(v)])
    if isinstance(v, int):
        return rng.choice([float(v), v + 1, v + 0.5, str(v), -v if v else 1])
    if isinstance(v, float):
        return rng.choice([int(v) if v == int(v) else round(v), v * 2, str(v), v + 0.1])
    if isinstance(v, str):
        return mutate_string(v) if v else "x"
    if isinstance(v, list):
        return rng.choice([v[::-1], v[:-1], v + v[:1], [str(x) for x in v], []])
    if isinstance(v, dict):
        if not v:
            return {"k": 1}
        k = rng.choice(list(v))
        w = dict(v)
        w[k] = perturb_value(w[k])
        return rng.choice([w, {**v, "extra": 1}, {kk: vv for kk, vv in v.items() if kk != k}])
    return "x"


def candidates(entry, truth, lang):
    funcs = {f["name"]: f for f in entry["function"]}
    calls = []
    for c in truth:
        name, params = next(iter(c.items()))
        calls.append((name, params))
    base = [{under(n): ground_call(funcs[n], p, lang)} for n, p in calls]
    out = [("ground_truth", base)]
    alt = [{under(n): ground_call(funcs[n], p, lang, pick=1)} for n, p in calls]
    if alt != base:
        out.append(("second_allowed", alt))
    for i, (n, p) in enumerate(calls):
        args = base[i][under(n)]
        for k in list(args):
            v = args[k]
            for kind, nv in (("perturb", perturb_value(v)), ("perturb", perturb_value(v))):
                c = copy.deepcopy(base)
                c[i][under(n)][k] = nv
                out.append((f"{kind}:{k}", c))
            c = copy.deepcopy(base)
            del c[i][under(n)][k]
            out.append((f"drop:{k}", c))
            if isinstance(v, str) and lang == "python":
                c = copy.deepcopy(base)
                c[i][under(n)][k] = v.lower().replace(",", "").replace("-", " ")
                out.append((f"standardize:{k}", c))
        for k, vals in p.items():
            if k not in args and "" in vals:
                decl = funcs[n]["parameters"].get("properties", {}).get(k, {})
                if "default" in decl:
                    c = copy.deepcopy(base)
                    c[i][under(n)][k] = render(decl["default"], decl, lang) if lang != "python" else decl["default"]
                    out.append((f"default:{k}", c))
        c = copy.deepcopy(base)
        c[i][under(n)]["unexpected_param"] = "x"
        out.append(("extra_param", c))
        others = [f for f in funcs if f != n]
        if others:
            c = copy.deepcopy(base)
            c[i] = {under(others[0]): c[i][under(n)]}
            out.append(("wrong_function", c))
    if len(base) > 1:
        out.append(("reordered", list(reversed(base))))
        out.append(("one_missing", base[:-1]))
    out.append(("duplicated", base + base[:1]))
    out.append(("no_call", []))
    return out


def as_sent(calls):
    """Calls as a model sends them: [{"name": ..., "arguments": "<JSON text>"}]."""
    out = []
    for c in calls:
        name, args = next(iter(c.items()))
        out.append({"name": name, "arguments": json.dumps(args)})
    return out


def language(cat):
    if cat == "simple_java":
        return Language.JAVA, "java"
    if cat == "simple_javascript":
        return Language.JAVASCRIPT, "javascript"
    return Language.PYTHON, "python"


n = 0
with open(out_path, "w") as out:
    for path in sorted(data.glob("BFCL_v4_*.json")):
        cat = path.stem.replace("BFCL_v4_", "")
        if cat.startswith(("multi_turn", "memory", "web_search", "format_sensitivity")):
            continue
        entries = rows(path)
        if "relevance" in cat:
            for e in entries:
                if not e.get("function"):
                    continue
                f = e["function"][0]
                req = f["parameters"].get("required", [])
                call = [{under(f["name"]): {k: "x" for k in req}}]
                for kind, cand in (("no_call", []), ("one_call", call)):
                    ok = (len(cand) == 0) if "irrelevance" in cat else (len(cand) > 0)
                    out.write(json.dumps({"id": e["id"], "category": cat, "kind": kind, "calls": as_sent(cand), "bfcl": ok}) + "\n")
                    n += 1
            continue
        answers = {a["id"]: a for a in rows(data / "possible_answer" / path.name)}
        lang_enum, lang = language(cat)
        for e in entries:
            a = answers.get(e["id"])
            if not a:
                continue
            for kind, cand in candidates(e, a["ground_truth"], lang):
                try:
                    r = ast_checker(
                        copy.deepcopy(e["function"]), copy.deepcopy(cand), a["ground_truth"], lang_enum, cat, "gpt-4o-2024-11-20-FC"
                    )
                    ok = bool(r["valid"])
                except Exception as ex:  # BFCL's checker raises on some inputs: a failed check
                    ok = False
                out.write(json.dumps({"id": e["id"], "category": cat, "kind": kind, "calls": as_sent(cand), "bfcl": ok}) + "\n")
                n += 1
print(f"{n} candidates written to {out_path}", file=sys.stderr)
