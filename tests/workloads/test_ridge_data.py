"""Ridge data sets: Zhou and Hua's Algorithm 1 generator, the CSV loader and scaled diabetes."""

from __future__ import annotations

import numpy as np
import pytest

from cryptoffload.errors import ConfigError
from cryptoffload.workloads.ridge_data import (
    algorithm1_y_bound,
    generate,
    iter_generated,
    load_csv,
    load_diabetes_scaled,
)


def test_generate_shapes_bounds_and_model():
    data = generate(2000, 7, seed=3)
    assert data.X.shape == (2000, 7) and data.y.shape == (2000,)
    assert data.x_bound == 1.0 and data.y_bound == algorithm1_y_bound(7) == 13.0
    assert np.abs(data.X).max() <= 1.0
    assert np.abs(data.y).max() <= data.y_bound
    assert np.abs(data.beta).max() <= 1.0
    e = data.y - data.X @ data.beta
    assert np.abs(e).max() <= 6.0 + 1e-12
    assert 0.9 < e.std() < 1.1  # N(0, 1) noise
    assert -0.1 < data.X.mean() < 0.1 and 0.3 < data.X.var() < 0.37  # uniform [-1, 1): var 1/3


def test_generate_is_seeded_and_prefix_stable():
    a, b, c = generate(500, 4, seed=1), generate(500, 4, seed=1), generate(500, 4, seed=2)
    assert np.array_equal(a.X, b.X) and np.array_equal(a.y, b.y)
    assert not np.array_equal(a.X, c.X)
    short = generate(123, 4, seed=1)
    assert np.array_equal(short.X, a.X[:123]) and np.array_equal(short.y, a.y[:123])


def test_chunked_generation_equals_whole():
    whole = generate(1000, 5, seed=9)
    parts = list(iter_generated(1000, 5, seed=9, chunk=128))
    assert len(parts) == 8
    assert np.array_equal(np.concatenate([p[0] for p in parts]), whole.X)
    assert np.array_equal(np.concatenate([p[1] for p in parts]), whole.y)


def test_noise_clip_is_a_parameter():
    data = generate(3000, 2, seed=0, noise_clip=0.5)
    assert np.abs(data.y - data.X @ data.beta).max() <= 0.5 + 1e-12
    assert data.y_bound == 2.5


@pytest.mark.parametrize("args", [(0, 3), (10, 0), (2.5, 3), (True, 3)])
def test_generate_refuses_bad_sizes(args):
    with pytest.raises(ConfigError):
        generate(*args)


def test_csv_with_header_and_named_target(tmp_path):
    f = tmp_path / "d.csv"
    f.write_text("a,target,b\n0.5,3,-1\n-0.25,-2,0.75\n\n")
    data = load_csv(f, y_column="target")
    assert data.X.tolist() == [[0.5, -1.0], [-0.25, 0.75]]
    assert data.y.tolist() == [3.0, -2.0]
    assert data.feature_names == ("a", "b")
    assert data.x_bound == 1.0 and data.y_bound == 3.0


def test_csv_without_header_last_column_is_y(tmp_path):
    f = tmp_path / "d.csv"
    f.write_text("1,2,3\n4,5,6\n")
    data = load_csv(f)
    assert data.X.tolist() == [[1, 2], [4, 5]] and data.y.tolist() == [3, 6]
    assert data.feature_names == ()
    forced = load_csv(f, header=True)
    assert forced.X.tolist() == [[4, 5]] and forced.feature_names == ("1", "2")
    assert load_csv(f, y_column=0).y.tolist() == [1, 4]


def test_csv_declared_bounds(tmp_path):
    f = tmp_path / "d.csv"
    f.write_text("x1,x2,y\n0.5,-0.9,10\n0.2,0.1,-20\n")
    data = load_csv(f, x_bound=1.0, y_bound=32.0)
    assert (data.x_bound, data.y_bound) == (1.0, 32.0)
    with pytest.raises(ConfigError, match=r"line 2, column 2: \|x\| = 0.9 exceeds the declared x_bound 0.5"):
        load_csv(f, x_bound=0.5)
    with pytest.raises(ConfigError, match=r"line 3, column 3: \|y\| = 20.0 exceeds"):
        load_csv(f, y_bound=15)


@pytest.mark.parametrize("text, message", [
    ("a,b,y\n1,2,3\n4,5\n", r"line 3: expected 3 columns, got 2"),
    ("a,b,y\n1,2,3\n4,oops,6\n", r"line 3, column 2: 'oops' is not a decimal number"),
    ("1,2,3\n4,nan,6\n", r"line 2, column 2: 'nan' is not a decimal number"),
    ("1,2,3\n4,inf,6\n", r"'inf' is not a decimal number"),
    # issue 32: the one grammar (float() reads each of these) and a ceiling on |value|
    ("1,2,3\n4,1_000,6\n", r"line 2, column 2: '1_000' is not a decimal number"),
    ("1,2,3\n4,\u0661\u0662,6\n", r"line 2, column 2: '\u0661\u0662' is not a decimal number"),
    ("1,2,3\n4,5,1e300\n", r"line 2, column 3: '1e300' is outside \+-1e\+09"),
    ("", r"no records"),
    ("\n\n", r"no records"),
    ("a,b,y\n", r"a header but no records"),
    ("5\n6\n", r"at least one feature and a target"),
])
def test_csv_bad_input_names_the_line(tmp_path, text, message):
    f = tmp_path / "bad.csv"
    f.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=message):
        load_csv(f)


def test_csv_bad_options(tmp_path):
    f = tmp_path / "d.csv"
    f.write_text("1,2,3\n")
    with pytest.raises(ConfigError, match="no header"):
        load_csv(f, y_column="y")
    with pytest.raises(ConfigError, match="out of range"):
        load_csv(f, y_column=3)
    g = tmp_path / "h.csv"
    g.write_text("a,y\n1,2\n")
    with pytest.raises(ConfigError, match="no column named 'z'"):
        load_csv(g, y_column="z")
    with pytest.raises(ConfigError, match="cannot read"):
        load_csv(tmp_path / "missing.csv")


def test_diabetes_scaled():
    data = load_diabetes_scaled()
    assert data.X.shape == (442, 10)
    assert np.abs(data.X).max() == 1.0
    assert np.allclose(np.abs(data.X).max(axis=0), 1.0)
    assert data.y_bound == 346.0 and data.y.min() == 25.0
    assert data.feature_names[:3] == ("age", "sex", "bmi")
