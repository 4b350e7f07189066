"""The comparison behind the corpus test: what matches, what does not."""

from __future__ import annotations

from program_outputs import mask_times, mismatches, numbers_match


def test_numbers_match_to_a_relative_1e_4() -> None:
    assert numbers_match("1.0000", "1.0000")
    assert numbers_match("12345.6", "12346.5")  # 7.3e-5 apart
    assert not numbers_match("12345.6", "12347.6")  # 1.6e-4 apart
    assert numbers_match("nan", "nan") and not numbers_match("nan", "1.0")
    assert not numbers_match("inf", "-inf")


def test_one_unit_in_the_last_printed_digit_of_a_float() -> None:
    assert numbers_match("0.0442", "0.0443")
    assert not numbers_match("0.0442", "0.0444")
    assert numbers_match("1.2345e-05", "1.2346e-05")
    assert not numbers_match("0.0442", "0.04430")  # printed differently: no allowance
    assert not numbers_match("1.", "2.")  # torch's integral floats are exact
    assert not numbers_match("1234", "1235")  # integers are exact


def test_absolute_tolerance_only_when_given() -> None:
    assert not numbers_match("-6.7e-10", "-1.7e-10")
    assert numbers_match("-6.7e-10", "-1.7e-10", atol=1e-8)


def test_lines_text_addresses_and_timing() -> None:
    torch_out = "<AddBackward0 object at 0x7f00aa>\nepoch 1 took 3.2 s\nloss 0.5\n"
    other_run = "<AddBackward0 object at 0x55bb>\nepoch 1 took 9.9 s\nloss 0.5\n"
    assert mismatches(torch_out, other_run) == []
    assert mismatches(torch_out, torch_out.replace("loss", "Loss"))
    assert mismatches(torch_out, torch_out + "extra\n")
    assert mismatches("a 1 2\n", "a 1\n")
    assert mask_times("Second call 2") == "Second call 2"
    assert mask_times("epoch 1 took 3.2 s") == "epoch 1 took <time> s"


def test_a_time_is_masked_and_the_rest_of_its_line_compared() -> None:
    book = "epoch 1, loss 2.3026, train acc 0.100, test acc 0.100, time 4.1 sec\n"
    assert mismatches(book, book.replace("4.1 sec", "17.8 sec")) == []
    assert mismatches(book, book.replace("2.3026", "2.4026"))
    assert mismatches("8512.3 examples/sec on cpu\n", "912.0 examples/sec on cpu\n") == []
    assert mismatches("12 ms/step, 35 it/s\n", "1 ms/step, 3 it/s\n") == []


def test_column_padding_may_differ_only_with_the_digits() -> None:
    # NumPy pads an array's columns to its widest number: other digits, other spaces
    assert not mismatches("[[ 4.994912   1.284085]]\n", "[[ 4.9949126  1.2840852]]\n")
    # the same digits: the spaces must be the same too
    assert mismatches("[[ 4.994912   1.284085]]\n", "[[ 4.994912  1.284085]]\n")
    # other digits do not excuse other text
    assert mismatches("[[ 4.994912   1.284085]]\n", "[( 4.9949126  1.2840852]]\n")


def test_lines_not_compared_must_still_be_there() -> None:
    want = "a\n1e+36\nb\n"
    assert not mismatches(want, "a\n0.\nb\n", skip=frozenset({2}))
    assert mismatches(want, "a\n0.\nc\n", skip=frozenset({2}))
    assert mismatches(want, "a\nb\n", skip=frozenset({2}))
