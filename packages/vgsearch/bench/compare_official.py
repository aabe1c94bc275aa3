"""Run the released VG-Search code (``hmarkc/VG-Search``, ``src/sal/search/beam_search.py``)
and :func:`vgsearch.vg_search` on the same stand-in generator, PRM and random stream, and compare
their completions, chosen answers and verifier calls.

The released search needs vLLM and a PRM; here they are replaced by adapters around
:class:`vgsearch.NoisyStepGenerator` and :class:`vgsearch.NoisyPRM` (``vllm``, ``tqdm`` and the
``sal`` configuration modules are stubbed; the released ``beam_search.py`` and
``search/utils.py`` run unmodified from a checkout). Usage::

    uv run python packages/vgsearch/bench/compare_official.py PATH/TO/VG-Search
"""

from __future__ import annotations

import importlib.util
import math
import sys
import time
import types
from pathlib import Path
from typing import Any

import numpy as np

from vgsearch import ChainArithmetic, NoisyPRM, NoisyStepGenerator, SearchConfig, vg_search

SEP = "\n\n"


def _stub_modules(root: Path) -> Any:
    """Install the stubs and load the released ``sal.search.beam_search`` from ``root``."""

    class SamplingParams:
        def __init__(self, **kwargs: Any) -> None:
            self.stop = None
            self.__dict__.update(kwargs)

    vllm = types.ModuleType("vllm")
    vllm.LLM, vllm.SamplingParams = object, SamplingParams
    tqdm = types.ModuleType("tqdm")
    tqdm.tqdm = lambda it, **_: it
    sal = types.ModuleType("sal")
    sal.__path__ = []
    search = types.ModuleType("sal.search")
    search.__path__ = [str(root / "src/sal/search")]
    config = types.ModuleType("sal.config")
    config.Config = object
    models = types.ModuleType("sal.models.reward_models")
    models.PRM = object
    score = types.ModuleType("sal.utils.score")
    agg = {"min": min, "prod": math.prod, "last": lambda s: s[-1]}
    score.aggregate_scores = lambda s, strategy: agg[strategy](s)
    for name, mod in {
        "vllm": vllm,
        "tqdm": tqdm,
        "sal": sal,
        "sal.search": search,
        "sal.config": config,
        "sal.models": types.ModuleType("sal.models"),
        "sal.models.reward_models": models,
        "sal.utils": types.ModuleType("sal.utils"),
        "sal.utils.score": score,
    }.items():
        sys.modules[name] = mod
    for name in ("utils", "beam_search"):
        spec = importlib.util.spec_from_file_location(
            f"sal.search.{name}", root / f"src/sal/search/{name}.py"
        )
        module = importlib.util.module_from_spec(spec)
        sys.modules[f"sal.search.{name}"] = module
        spec.loader.exec_module(module)
    return sys.modules["sal.search.beam_search"]


def _text(steps) -> str:
    return "".join(s.text + ("" if s.is_final else SEP) for s in steps)


class FakeLLM:
    """vLLM's ``generate`` and tokenizer, answering from the stand-in generator; a response
    text maps back to its steps through ``registry``."""

    def __init__(self, problem, gen, rng) -> None:
        self.problem, self.gen, self.rng = problem, gen, rng
        self.registry: dict[str, list] = {"": []}
        self.chat_template = None

    def get_tokenizer(self):
        return self

    def apply_chat_template(self, convs, **_: Any) -> list[str]:
        return [c[-1]["content"] if c[-1]["role"] == "assistant" else "" for c in convs]

    def generate(self, prompts, params, use_tqdm=False):
        prefixes = [self.registry[p] for p in prompts]
        todo = [i for i, pre in enumerate(prefixes) if not (pre and pre[-1].is_final)]
        new = self.gen.step(
            [self.problem] * len(todo),
            [prefixes[i] for i in todo],
            self.rng,
            to_end=params.stop is None,
        )
        outs = [("", None)] * len(prompts)  # a finished text: nothing more, EOS
        for i, step in zip(todo, new, strict=True):
            text = step.text + ("" if step.is_final else SEP)
            self.registry[prompts[i] + text] = prefixes[i] + [step]
            outs[i] = (text, None if step.is_final else SEP)
        return [
            types.SimpleNamespace(outputs=[types.SimpleNamespace(text=t, stop_reason=r)])
            for t, r in outs
        ]


class FakePRM:
    """The released PRM interface: ``score(prompts, [[text]])`` -> per prompt, per completion,
    the per-step scores; counts the prefixes scored."""

    def __init__(self, problem, prm, llm) -> None:
        self.problem, self.prm, self.llm, self.calls = problem, prm, llm, 0

    def score(self, prompts, completions):
        out = []
        for comps in completions:
            self.calls += len(comps)
            out.append([self.prm.score([self.problem], [self.llm.registry[c]])[0] for c in comps])
        return out


def compare(module, problem, n, m, g, iterations, seed) -> dict[str, Any]:
    gen, prm = NoisyStepGenerator(), NoisyPRM("strong")
    llm = FakeLLM(problem, gen, np.random.default_rng(seed))
    fprm = FakePRM(problem, prm, llm)
    config = types.SimpleNamespace(
        temperature=0.8,
        max_tokens=2048,
        top_p=1.0,
        n=n,
        num_iterations=iterations,
        g=g,
        system_prompt="",
        custom_chat_template=None,
        lookahead=0,
        agg_strategy="last",
        beam_width=m,
        filter_duplicates=False,
        sort_completed=False,
    )
    t0 = time.perf_counter()
    beams = module._beam_search(["prompt"], config, llm, fprm)
    t_official = time.perf_counter() - t0
    theirs = [b.current_text for b in beams]
    their_pick = theirs[int(np.argmax([b.all_scores[-1] for b in beams]))]
    cfg = SearchConfig(n=n, m=m, g=g, iterations=iterations)
    t0 = time.perf_counter()
    res = vg_search(problem, gen, prm, cfg, np.random.default_rng(seed))
    t_ours = time.perf_counter() - t0
    ours = [_text(c) for c in res.completions]
    our_pick = ours[int(np.argmax([s[-1] for s in res.scores]))]
    return {
        "same completions": theirs == ours,
        "same answer": their_pick == our_pick,
        "same calls": fprm.calls == res.n_verifier_calls,
        "max score diff": max(
            abs(a - b)
            for x, y in zip(beams, res.scores, strict=True)
            for a, b in zip(x.all_scores, y, strict=True)
        ),
        "t_official": t_official,
        "t_ours": t_ours,
    }


def main(root: str) -> None:
    module = _stub_modules(Path(root))
    rows = []
    cases = [(n, m) for n, m in ((4, 4), (16, 4), (8, 2), (64, 4))]
    for level in range(1, 6):
        for seed in range(4):
            problem = ChainArithmetic(level, seed=seed)
            for n, m in cases:
                for g in (1, 2, 3, 4, 13):
                    for iterations in (40, {1: 12, 2: 6, 3: 4, 4: 3}.get(g, 2)):
                        rows.append(compare(module, problem, n, m, g, iterations, seed))
    keys = ("same completions", "same answer", "same calls")
    print(
        f"{len(rows)} searches (levels 1-5 x 4 seeds x (n, m) in {cases} x g in 1,2,3,4,13 x "
        "iterations 40 and the released example's 12/6/4/3)"
    )
    for k in keys:
        print(f"{k}: {sum(r[k] for r in rows)}/{len(rows)}")
    print(f"max |score difference|: {max(r['max score diff'] for r in rows):.3g}")
    print(
        f"time: released {sum(r['t_official'] for r in rows):.2f} s, "
        f"vgsearch {sum(r['t_ours'] for r in rows):.2f} s"
    )


if __name__ == "__main__":
    main(sys.argv[1])
