"""One rule for sizes the scenario cannot run (2**62 tokens, a sequence the ring does not divide):
one scenario raises ringsim.InputError with the reason and the keyword, as the command line exits
2; a sweep keeps going and shows the point as a skipped row with its reason (status, note); a
malformed size (negative) raises in both."""
import re
import subprocess

import pytest

import ringsim
from support import CLI

IMPOSSIBLE = [(1 << 62, "seq"), (65537, "seq")]


@pytest.mark.parametrize("seq, keyword", IMPOSSIBLE)
def test_one_scenario_that_cannot_run_raises_as_the_cli_refuses_it(seq, keyword):
    for call in (lambda: ringsim.predict(mesh=(1, 8), seq=seq, layouts=["zigzag"]),
                 lambda: ringsim.predict(mesh=(1, 8), seq=seq),  # every row of the comparison
                 lambda: ringsim.workload(mesh=(1, 8), seq=seq),
                 lambda: ringsim.simulate(mesh=(1, 8), seq=seq)):
        with pytest.raises(ringsim.InputError) as e:
            call()
        assert "keyword '%s'" % keyword in str(e.value) and e.value.reason in str(e.value)
    done = subprocess.run([CLI, "predict", "--mesh", "1x8", "--seq", str(seq), "--layout", "zigzag"],
                          capture_output=True, text=True)
    assert done.returncode == 2


@pytest.mark.parametrize("seq, keyword", IMPOSSIBLE)
def test_a_sweep_skips_the_point_with_its_reason(seq, keyword):
    frame = ringsim.sweep({"mesh": "1x8", "n_seq": [65536, seq], "layout": "zigzag"})
    assert list(frame.status) == ["ok", "skipped"]
    assert frame.note[1] and frame.step_s.isna()[1]


def test_a_negative_size_raises_in_both():
    with pytest.raises(ringsim.InputError, match="keyword 'seq'"):
        ringsim.predict(seq=-65536)
    with pytest.raises(ringsim.InputError, match=re.escape("keyword 'n_seq[1]'")):
        ringsim.sweep({"n_seq": [65536, -65536]})
