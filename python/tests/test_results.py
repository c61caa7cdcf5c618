"""Results as Python objects: they pickle and copy (so multiprocessing and joblib can carry
them), and dir() lists their fields."""
import copy
import multiprocessing
import pickle

import pytest

import ringsim


@pytest.fixture(scope="module")
def rows():
    # One row that runs and one skipped (Ulysses over 16 devices, 8 KV heads).
    return ringsim.predict(hardware="h100-sxm", model="llama3-8b", mesh=(1, 16), seq=65536, layouts=["zigzag"],
                           cp=["ring", "ulysses"])


def same(a, b):
    return type(a) is type(b) and a.to_dict() == b.to_dict() and a.csv == b.csv and a.why == b.why


def test_results_pickle_and_copy(rows):
    assert rows[0].ok and not rows[1].ok
    for r in rows:
        for twin in (copy.copy(r), copy.deepcopy(r), pickle.loads(pickle.dumps(r)),
                     pickle.loads(pickle.dumps(r, protocol=0))):
            assert same(twin, r)
            assert twin.step_s == r.step_s if r.ok else twin.note == r.note
    assert ringsim.results_frame(pickle.loads(pickle.dumps(rows))).equals(ringsim.results_frame(rows))


def test_plans_pickle_with_their_answer():
    answer = ringsim.plan(devices=8, top=2)
    twin = pickle.loads(pickle.dumps(answer))
    assert isinstance(twin, ringsim.PlanAnswer) and all(isinstance(p, ringsim.Plan) for p in twin)
    assert [p.to_dict() for p in twin] == [p.to_dict() for p in answer]
    assert twin.searched == answer.searched and twin.best_per_strategy[0].to_dict() == answer.best_per_strategy[0].to_dict()
    assert copy.deepcopy(answer)[0].rank == answer[0].rank


def _predict_in_a_worker(seq):
    return ringsim.predict(mesh=(1, 4), seq=seq, layouts=["striped"])


def test_a_worker_process_returns_results():
    with multiprocessing.get_context("fork").Pool(1) as pool:
        # A bounded wait: a result that cannot be carried must fail the test, not hang it.
        (got,) = pool.map_async(_predict_in_a_worker, [16384]).get(timeout=120)
    assert same(got[0], _predict_in_a_worker(16384)[0])


def test_dir_lists_the_fields(rows):
    names = dir(rows[0])
    for field in ("step_s", "tokens_per_s", "mfu", "memory_bytes", "fits_memory", "why", "csv", "ok", "interval",
                  "to_dict", "speedup_vs_first"):
        assert field in names
    assert set(rows[0].to_dict()) <= set(names)
    with pytest.raises(AttributeError, match="no field 'no_such_field'"):
        rows[0].no_such_field
