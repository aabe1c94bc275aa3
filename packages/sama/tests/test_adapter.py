import numpy as np
import pytest

from sama import (
    ModelResponse,
    NoisyOracle,
    NullModel,
    OracleModel,
    VideoChatModel,
    erode,
    evaluate,
    make_synthetic_bench,
)

BENCH = make_synthetic_bench(n_videos=12, n_frames=8, size=48, seed=5)


@pytest.fixture(scope="module")
def reports():
    out = {}
    for track in ("G", "C"):
        out["oracle", track] = evaluate(
            OracleModel(BENCH), BENCH, track, text_sim="jaccard", java=False
        )
        out["null", track] = evaluate(NullModel(), BENCH, track, text_sim="jaccard", java=False)
        for k, rate in enumerate((0.1, 0.3, 0.5), 1):
            model = NoisyOracle(BENCH, mask_erosion=k, word_drop=rate, seed=0)
            out[k, track] = evaluate(model, BENCH, track, text_sim="jaccard", java=False)
    return out


def test_reference_models_follow_the_protocol():
    assert isinstance(OracleModel(BENCH), VideoChatModel)
    assert isinstance(NullModel(), VideoChatModel)


def test_oracle_is_perfect(reports):
    g = reports["oracle", "G"].overall
    for key in ("mIoU", "recall", "Bleu_1", "Bleu_4", "ROUGE_L"):
        assert g[key] == pytest.approx(1.0, abs=1e-6), key
    c = reports["oracle", "C"].overall
    assert c["Bleu_4"] == pytest.approx(1.0, abs=1e-6) and c["ROUGE_L"] == pytest.approx(1.0)
    assert "mIoU" not in c
    assert g["METEOR"] is None and g["SPICE"] is None  # java=False


def test_null_scores_zero_on_masks(reports):
    g = reports["null", "G"].overall
    assert g["mIoU"] == 0.0 and g["recall"] == 0.0


def test_noisy_oracle_degrades_monotonically(reports):
    for track, keys in (("G", ("mIoU", "Bleu_4", "CIDEr", "ROUGE_L")), ("C", ("Bleu_4", "CIDEr"))):
        for key in keys:
            vals = [reports["oracle", track].overall[key]]
            vals += [reports[k, track].overall[key] for k in (1, 2, 3)]
            assert vals[0] > vals[1] > vals[2] > vals[3], (track, key, vals)


def test_word_drop_is_nested():
    rec = BENCH[0]
    turn = next(t for t in rec.turns if "[SEG]" in t.answer)
    texts = [
        NoisyOracle(BENCH, 0, r, seed=3)
        .respond(rec.frames, [], turn.question, turn.regions)
        .text.split()
        for r in (0.0, 0.3, 0.6, 1.0)
    ]
    for hi, lo in zip(texts[1:], texts[:-1], strict=True):
        assert set(hi) <= set(lo)
    assert "[SEG]" in texts[-1] and texts[0] == turn.answer.split()


def test_erode_hand_example():
    m = np.zeros((1, 5, 5), bool)
    m[0, 1:4, 1:4] = True
    out = erode(m, 1)
    assert out.sum() == 1 and out[0, 2, 2]
    assert not erode(m, 2).any()


def test_filtered_turns_are_counted_with_reasons(reports):
    rep = reports["oracle", "G"]
    n_invalid = sum(
        t.question.count("<mask>") != len(t.regions) or t.answer.count("[SEG]") != len(t.valid_gt)
        for r in BENCH
        for t in r.turns
    )
    assert rep.counts["filtered_turns"] == n_invalid == len(rep.filtered)
    assert rep.counts["turns"] == sum(len(r.turns) for r in BENCH)
    assert rep.counts["scored_turns"] == rep.counts["turns"] - n_invalid
    assert set(rep.per_subset) <= {"MeViS", "LV-VIS", "Ref-YouTube-VOS", "VidSTG"}
    assert rep.table()[-1]["subset"] == "overall"


def test_history_modes_and_clair_hook():
    seen = []

    class Recorder:
        def respond(self, frames, history, question, regions):
            seen.append(len(history))
            return ModelResponse("the answer", [])

    evaluate(Recorder(), BENCH[:2], "C", text_sim="jaccard", java=False, history="model")
    assert seen[0] == 0
    rep = evaluate(
        OracleModel(BENCH),
        BENCH[:3],
        "C",
        text_sim="jaccard",
        java=False,
        clair=lambda cand, ref: (float(cand == ref), "same"),
    )
    assert rep.overall["CLAIR"] == 1.0


def test_bad_model_output_and_track_are_refused():
    class WrongShape:
        def respond(self, frames, history, question, regions):
            return ModelResponse("x", [np.zeros((1, 2, 2), bool)])

    with pytest.raises(ValueError, match="'model'"):
        evaluate(WrongShape(), BENCH[:1], "G", text_sim="jaccard", java=False)
    with pytest.raises(ValueError, match="'track'"):
        evaluate(NullModel(), BENCH[:1], "X")
    with pytest.raises(TypeError, match="'masks'"):
        ModelResponse("x", [np.zeros((1, 2, 2), np.uint8)])
