from paperkit.errors import PARAM_ERROR_PATTERN, Described, param_error


def test_wording_matches_the_documented_sentence():
    exc = param_error("chunk_size", "zero_sum_attention", "a power of 2", 48)
    assert isinstance(exc, ValueError)
    assert str(exc) == (
        "The 'chunk_size' parameter of zero_sum_attention must be a power of 2. Got 48 instead."
    )
    match = PARAM_ERROR_PATTERN.match(str(exc))
    assert match["param"] == "chunk_size" and match["owner"] == "zero_sum_attention"


def test_type_errors_and_described_values():
    exc = param_error(
        "x", "f", "a 3-D tensor", Described("a tensor of shape (2, 3)"), cls=TypeError
    )
    assert isinstance(exc, TypeError)
    assert str(exc).endswith("Got a tensor of shape (2, 3) instead.")
    assert "Got 'abc' instead." in str(param_error("x", "f", "an int", "abc"))
