import math
from collections import Counter

import pytest

from sama import CaptionScorer, caption_scores, python_tokenize
from sama.captions import java_available


def _ngrams(words, n):
    return Counter(tuple(words[i : i + n]) for i in range(len(words) - n + 1))


def cider_d_reference(refs, hyps, sigma=6.0):
    """CIDEr-D written from its definition (Vedantam et al. 2015, as in the COCO toolkit): TF-IDF
    vectors of 1..4-grams, IDF over the references of this set, clipped cosine, Gaussian length
    penalty on the bigram counts, mean over n, x10; the corpus score is the mean over pairs."""
    docs = [[r.split()] for r in refs]
    log_n = math.log(len(docs))
    df = Counter(
        g for doc in docs for g in {g for ref in doc for n in range(1, 5) for g in _ngrams(ref, n)}
    )

    def vec(words):
        v = [{}, {}, {}, {}]
        for n in range(1, 5):
            for g, tf in _ngrams(words, n).items():
                v[n - 1][g] = tf * (log_n - math.log(max(1.0, df[g])))
        norms = [math.sqrt(sum(x * x for x in d.values())) for d in v]
        return v, norms, sum(_ngrams(words, 2).values())

    scores = []
    for doc, hyp in zip(docs, hyps, strict=True):
        vh, nh, lh = vec(hyp.split())
        total = [0.0] * 4
        for ref in doc:
            vr, nr, lr = vec(ref)
            for n in range(4):
                val = sum(min(x, vr[n].get(g, 0.0)) * vr[n].get(g, 0.0) for g, x in vh[n].items())
                if nh[n] and nr[n]:
                    val /= nh[n] * nr[n]
                total[n] += val * math.exp(-((lh - lr) ** 2) / (2 * sigma**2))
        scores.append(10.0 * sum(total) / 4 / len(doc))
    return sum(scores) / len(scores)


REFS = [
    "a red circle is moving left",
    "the blue square stays still in the corner",
    "two objects move apart",
    "a small green diamond is growing",
    "the white circle bounces",
]
HYPS = [
    "a red circle moves left",
    "the blue square is still",
    "two objects move together",
    "a green diamond grows",
    "the white circle is bouncing up and down",
]


def test_identical_captions_score_one():
    out = caption_scores(
        ["the red circle is moving left quickly"],
        ["the red circle is moving left quickly"],
        java=False,
    )
    assert out["Bleu_4"] == pytest.approx(1.0, abs=1e-6)
    assert out["ROUGE_L"] == pytest.approx(1.0, abs=1e-12)
    assert out["CIDEr"] == 0.0  # one turn: every n-gram has IDF log(1/1) = 0 (per-video CIDEr-D)


def test_cider_d_matches_its_definition_on_five_pairs():
    out = caption_scores(REFS, HYPS, java=False)
    assert out["CIDEr"] == pytest.approx(cider_d_reference(REFS, HYPS), rel=1e-9)
    assert 0 < out["Bleu_4"] < out["Bleu_1"] < 1


def test_meteor_and_spice_are_none_without_java():
    out = CaptionScorer(java=False).score(REFS, HYPS)
    assert out["METEOR"] is None and out["SPICE"] is None
    empty = CaptionScorer(java=False).score(["", "a"], ["x", ""])  # every pair dropped
    assert empty["Bleu_1"] == 0.0 and empty["METEOR"] is None


def test_empty_turns_are_dropped():
    kept = caption_scores(REFS[:2], HYPS[:2], java=False)
    padded = caption_scores([*REFS[:2], "", "a cat"], [*HYPS[:2], "a dog", ""], java=False)
    assert padded == kept


def test_python_tokenizer_follows_ptb():
    # expected strings: the PTB tokenizer's output through pycocoevalcap (lower-cased,
    # clitics split, punctuation list removed, brackets kept as -lrb-/-rrb-)
    assert python_tokenize("A man's dog (brown) doesn't run -- fast, really... ok.") == (
        "a man 's dog -lrb- brown -rrb- does n't run fast really ok"
    )
    assert python_tokenize("The RED circle; moving-left!") == "the red circle moving-left"


@pytest.mark.slow  # starts METEOR 1.5 (about 20-30 s of JVM start-up on a loaded machine)
@pytest.mark.skipif(not java_available(), reason="METEOR needs Java")
def test_meteor_runs_with_java():
    scorer = CaptionScorer(java=True)
    try:
        out = scorer.score(REFS, HYPS)
        assert scorer.tokenizer == "ptb"
        assert 0.0 < out["METEOR"] < 1.0
        assert out["CIDEr"] == pytest.approx(caption_scores(REFS, HYPS, java=False)["CIDEr"])
    finally:
        scorer.close()
