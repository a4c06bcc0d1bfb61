"""experiments/program_fingerprints.py: a fingerprint is the lowered program's, stable
across calls and different for a different program; the comparison names what changed.
(The full set is lowered by hand around a refactor, not here: 35 programs, ~20 s.)"""

import jax.numpy as jnp
from experiment_scripts import load_script

pf = load_script("program_fingerprints")


def test_a_fingerprint_is_the_programs():
    x = jnp.ones((3,), jnp.float32)
    assert pf.fingerprint(lambda a: a * 2, (x,)) == pf.fingerprint(lambda b: b * 2, (x,))
    assert pf.fingerprint(lambda a: a * 2, (x,)) != pf.fingerprint(lambda a: a * 3, (x,))
    assert len(pf.fingerprint(lambda a: a, (x,))) == 16


def test_compare_names_the_programs_that_changed(tmp_path, capsys):
    table, same = pf.compare({"a": "1", "b": "2"}, {"a": "1", "b": "3", "c": "4"})
    assert not same
    assert "| a | 1 | 1 | yes |" in table and "| b | 2 | 3 | **no** |" in table
    assert "| c | - | 4 | **no** |" in table
    before, after = tmp_path / "before.json", tmp_path / "after.json"
    before.write_text('{"a": "1"}')
    after.write_text('{"a": "1"}')
    assert pf.main(["--compare", str(before), str(after)]) == 0
    assert "all 1 programs unchanged" in capsys.readouterr().out
