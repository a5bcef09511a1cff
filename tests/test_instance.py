"""tspcl.instance: TSPLIB distances by hand, tour length, tour validation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tspcl.errors import DataError
from tspcl.instance import MAX_COORD_DISTANCE, Instance, coordinate_problem


def pair(weight_type, a, b):
    inst = Instance(name="p", kind="TSP", weight_type=weight_type,
                    coords=np.array([a, b], dtype=float))
    d = int(inst.dist(0, 1))
    assert int(inst.dist(1, 0)) == d
    return d


@pytest.mark.parametrize("weight_type, a, b, expected", [
    ("EUC_2D", (0, 0), (3, 4), 5),
    ("EUC_2D", (0, 0), (0.5, 0), 1),            # nint rounds .5 up
    ("EUC_2D", (0, 0), (2.5, 0), 3),
    ("EUC_2D", (0, 0), (1, 1), 1),              # 1.414 -> 1
    ("EUC_2D", (-1.5, 2), (1, -1), 4),          # sqrt(15.25) = 3.905 -> 4
    ("CEIL_2D", (0, 0), (1, 1), 2),             # 1.414 -> 2
    ("CEIL_2D", (0, 0), (3, 4), 5),             # exact stays
    ("CEIL_2D", (0, 0), (0.1, 0), 1),
    ("ATT", (0, 0), (33, 0), 11),               # r = sqrt(108.9) = 10.44, t = 10 < r -> 11
    ("ATT", (0, 0), (31, 0), 10),               # r = sqrt(96.1) = 9.80, t = 10 >= r -> 10
    ("ATT", (0, 0), (30, 10), 10),              # r = 10 exactly
    ("ATT", (6734, 1453), (2233, 10), 1495),    # att48 cities 1 and 2
    ("MAN_2D", (0, 0), (1.2, 2.3), 4),          # 3.5 -> 4
    ("MAN_2D", (1, 1), (4, 5), 7),
    ("MAX_2D", (0, 0), (1.2, 2.5), 3),          # max(nint 1.2, nint 2.5) = max(1, 3)
    ("MAX_2D", (0, 0), (-1.4, 0.2), 1),
    ("EUC_3D", (0, 0, 0), (1, 2, 2), 3),
    ("EUC_3D", (0, 0, 0), (1, 1, 1), 2),        # 1.732 -> 2
    ("MAN_3D", (0, 0, 0), (1, 2, 2.4), 5),      # 5.4 -> 5
    ("MAN_3D", (1, 1, 1), (0, 0, 0), 3),
    ("MAX_3D", (0, 0, 0), (1.5, 0.2, -0.4), 2),  # nint 1.5 = 2
    ("MAX_3D", (0, 0, 0), (1, 2, 3.4), 3),
    ("GEO", (16.47, 96.10), (16.47, 94.44), 153),   # burma14 cities 1 and 2
    ("GEO", (38.24, 20.42), (39.57, 26.15), 509),   # ulysses16 cities 1 and 2
])
def test_distance_by_hand(weight_type, a, b, expected):
    assert pair(weight_type, a, b) == expected


def _tsplib_geo(a, b):
    """The TSPLIB95 reference code for GEO, scalar, as printed in the TSPLIB document."""
    def rad(x):
        deg = int(x)                      # (int) x: truncation toward zero
        minutes = x - deg
        return 3.141592 * (deg + 5.0 * minutes / 3.0) / 180.0
    lat_i, lon_i, lat_j, lon_j = rad(a[0]), rad(a[1]), rad(b[0]), rad(b[1])
    q1 = math.cos(lon_i - lon_j)
    q2 = math.cos(lat_i - lat_j)
    q3 = math.cos(lat_i + lat_j)
    return int(6378.388 * math.acos(0.5 * ((1.0 + q1) * q2 - (1.0 - q1) * q3)) + 1.0)


def _tsplib_att(a, b):
    xd, yd = a[0] - b[0], a[1] - b[1]
    r = math.sqrt((xd * xd + yd * yd) / 10.0)
    t = int(r + 0.5)
    return t + 1 if t < r else t


def test_geo_and_att_match_the_reference_code():
    rng = np.random.default_rng(5)
    pts = np.round(rng.uniform(-89.59, 89.59, (60, 2)), 2)       # DDD.MM, negative too
    inst = Instance(name="g", kind="TSP", weight_type="GEO", coords=pts)
    att_pts = np.round(rng.uniform(0, 10000, (60, 2)))
    att = Instance(name="a", kind="TSP", weight_type="ATT", coords=att_pts)
    for i in range(60):
        for j in range(60):
            if i != j:
                assert int(inst.dist(i, j)) == _tsplib_geo(pts[i], pts[j])
            assert int(att.dist(i, j)) == _tsplib_att(att_pts[i], att_pts[j])


def test_full_matrix_and_dist_row_agree_with_dist():
    rng = np.random.default_rng(2)
    inst = Instance(name="r", kind="TSP", weight_type="EUC_2D",
                    coords=rng.uniform(0, 1000, (12, 2)))
    m = inst.full_matrix()
    assert m.dtype == np.int64 and m.shape == (12, 12)
    assert np.array_equal(m, m.T) and not np.diagonal(m).any()
    for i in range(12):
        assert np.array_equal(inst.dist_row(i), m[i])
        for j in range(12):
            assert int(inst.dist(i, j)) == m[i, j]


def test_explicit_atsp_distance_is_directed():
    m = np.array([[0, 1, 9], [5, 0, 2], [3, 7, 0]])
    inst = Instance(name="a", kind="ATSP", weight_type="EXPLICIT", matrix=m,
                    edge_weight_format="FULL_MATRIX")
    assert inst.matrix.dtype == np.int32 and not inst.symmetric and not inst.has_coords
    assert int(inst.dist(0, 1)) == 1 and int(inst.dist(1, 0)) == 5
    assert inst.tour_length([0, 1, 2]) == 1 + 2 + 3
    assert inst.tour_length([0, 2, 1]) == 9 + 7 + 5
    assert inst.metric_code == 9


SQUARE = np.array([[0, 0], [0, 3], [4, 3], [4, 0]], dtype=float)


def test_tour_length():
    inst = Instance(name="sq", kind="TSP", weight_type="EUC_2D", coords=SQUARE)
    assert inst.tour_length([0, 1, 2, 3]) == 14
    assert inst.tour_length(np.array([2, 3, 0, 1])) == 14
    assert inst.tour_length([0, 2, 1, 3]) == 5 + 4 + 5 + 4
    assert isinstance(inst.tour_length([0, 1, 2, 3]), int)


@pytest.mark.parametrize("tour, message", [
    ([0, 1, 2], "tour has 3 cities, the problem has 4"),
    ([0, 1, 2, 3, 0], "tour has 5 cities, the problem has 4"),
    ([0, 1, 1, 3], "city 2 is visited 2 times"),
    ([0, 1, 2, 4], "city 5 is not in 1..4"),
    ([0, 1, 2, -1], "city 0 is not in 1..4"),
    ([0.0, 1.0, 2.0, 3.0], "tour entries are not integers"),
    ([[0, 1], [2, 3]], "tour has 4 cities, the problem has 4"),
])
def test_tour_problem_messages(tour, message):
    inst = Instance(name="sq", kind="TSP", weight_type="EUC_2D", coords=SQUARE)
    assert inst.tour_problem(tour) == message
    with pytest.raises(ValueError, match=message.split(",")[0]):
        inst.tour_length(tour)


def test_valid_tour_has_no_problem():
    inst = Instance(name="sq", kind="TSP", weight_type="EUC_2D", coords=SQUARE)
    assert inst.tour_problem(np.array([3, 1, 0, 2], dtype=np.int32)) is None


def test_coordinates_whose_distances_overflow_int32_are_refused():
    with pytest.raises(DataError, match="32-bit"):
        Instance(name="big", kind="TSP", weight_type="EUC_2D",
                 coords=np.array([[0.0, 0.0], [3e9, 0.0]]), source="big.tsp")


AXIS_METRICS = ["EUC_2D", "CEIL_2D", "MAN_2D", "MAX_2D", "EUC_3D", "MAN_3D", "MAX_3D"]


def _two_cities(weight_type, far, source="<memory>"):
    d = 3 if weight_type.endswith("3D") else 2
    coords = np.zeros((2, d))
    coords[1, :len(far)] = far
    return Instance(name="b", kind="TSP", weight_type=weight_type, coords=coords,
                    source=source)


@pytest.mark.parametrize("weight_type", AXIS_METRICS)
def test_largest_distance_is_accepted_and_one_more_refused(weight_type):
    inst = _two_cities(weight_type, [MAX_COORD_DISTANCE])
    assert int(inst.dist(0, 1)) == MAX_COORD_DISTANCE
    with pytest.raises(DataError, match=f"{weight_type} distances up to 1.07374e\\+09"):
        _two_cities(weight_type, [MAX_COORD_DISTANCE + 1])


@pytest.mark.parametrize("weight_type, far, refused", [
    ("EUC_2D", [8e8, 8e8], True),           # each axis fits, the diagonal does not
    ("CEIL_2D", [8e8, 8e8], True),
    ("MAN_2D", [6e8, 6e8], True),
    ("MAX_2D", [6e8, 6e8], False),
    ("EUC_3D", [7e8, 7e8, 7e8], True),
    ("MAN_3D", [4e8, 4e8, 4e8], True),
    ("MAX_3D", [1e9, 1e9, 1e9], False),
    ("ATT", [3.3e9, 0], False),             # sqrt(x^2 / 10) = 1.04e9
    ("ATT", [3.5e9, 0], True),              # 1.107e9
    ("EUC_2D", [1e19, 0], True),            # inf as an int64 was negative: passed
    ("EUC_2D", [1e200, 1e200], True),       # the squares overflow to inf
    ("MAN_2D", [1.7e308, 1.7e308], True),   # the sum overflows to inf
])
def test_distance_bound_of_every_metric(weight_type, far, refused):
    if refused:
        with pytest.raises(DataError, match="32-bit"):
            _two_cities(weight_type, far)
    else:
        inst = _two_cities(weight_type, far)
        assert 0 < int(inst.dist(0, 1)) <= MAX_COORD_DISTANCE


def test_spread_out_coordinates_are_refused_by_their_spans():
    """The bound comes from the spans of all cities, not from one pair."""
    coords = np.array([[0.0, 0.0], [1e9, 0.0], [0.0, 1e9], [5e8, 5e8]])
    with pytest.raises(DataError, match="span 1e\\+09"):
        Instance(name="s", kind="TSP", weight_type="EUC_2D", coords=coords)
    assert coordinate_problem("EUC_2D", coords)[0] in (1, 2)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("weight_type", AXIS_METRICS + ["ATT", "GEO"])
def test_non_finite_coordinates_are_refused(weight_type, bad):
    d = 3 if weight_type.endswith("3D") else 2
    coords = np.zeros((3, d))
    coords[2, d - 1] = bad
    with pytest.raises(DataError, match="city 3: coordinates .* are not finite"):
        Instance(name="n", kind="TSP", weight_type=weight_type, coords=coords,
                 source="n.tsp")


def test_geo_needs_finite_radians_only():
    with pytest.raises(DataError, match="not finite numbers in radians"):
        _two_cities("GEO", [1e308, 0])
    inst = _two_cities("GEO", [1e300, 0])               # meaningless, but exact
    assert 0 < int(inst.dist(0, 1)) <= 20040


@pytest.mark.parametrize("matrix, words", [
    (np.array([[0, 2**31], [2**31, 0]]), "32 bits"),
    (np.array([[0, -(2**31) - 1], [1, 0]]), "32 bits"),
    (np.array([[0.0, 0.5], [0.5, 0.0]]), "integers"),
    (np.array([[0.0, np.nan], [1.0, 0.0]]), "integers"),
    (np.array([["a", "b"], ["c", "d"]]), "integers"),
])
def test_matrix_weights_are_checked_not_cast(matrix, words):
    with pytest.raises(DataError, match=words):
        Instance(name="m", kind="ATSP", weight_type="EXPLICIT", matrix=matrix)


def test_int32_extremes_are_kept():
    m = np.array([[0, 2**31 - 1], [-(2**31), 0]], dtype=np.int64)
    inst = Instance(name="m", kind="ATSP", weight_type="EXPLICIT", matrix=m)
    assert inst.matrix.dtype == np.int32 and np.array_equal(inst.matrix, m)
    assert inst.tour_length([0, 1]) == -1


def test_instance_needs_exactly_one_of_coords_and_matrix():
    with pytest.raises(ValueError):
        Instance(name="x", kind="TSP", weight_type="EUC_2D")
    with pytest.raises(ValueError):
        Instance(name="x", kind="TSP", weight_type="EUC_2D", coords=SQUARE,
                 matrix=np.zeros((4, 4)))


def test_geo_device_coords_are_radians_and_planar_coords_are_raw():
    inst = Instance(name="g", kind="TSP", weight_type="GEO",
                    coords=np.array([[16.30, -96.10], [0.0, 0.0]]))
    lat = 3.141592 * (16 + 5.0 * 0.30 / 3.0) / 180.0
    lon = 3.141592 * (-96 + 5.0 * -0.10 / 3.0) / 180.0
    assert np.allclose(inst.device_coords[0], [lat, lon], rtol=0, atol=1e-12)
    assert np.array_equal(inst.planar_coords, inst.coords)
    explicit = Instance(name="e", kind="TSP", weight_type="EXPLICIT",
                        matrix=np.zeros((2, 2)), display=np.array([[1.0, 2.0], [3.0, 4.0]]))
    assert explicit.device_coords is None
    assert explicit.planar_coords.tolist() == [[1, 2], [3, 4]]


@pytest.mark.parametrize("weight_type", AXIS_METRICS + ["ATT", "GEO"])
def test_tour_length_is_the_sum_of_its_edges_distances(weight_type):
    """The tour's length (one gather of the visited rows) is the sum of dist over its
    edges, the closing one included, for every coordinate metric."""
    rng = np.random.default_rng(7)
    coords = rng.uniform(-80, 80, (200, 3 if weight_type.endswith("3D") else 2))
    inst = Instance(name="r", kind="TSP", weight_type=weight_type, coords=coords)
    tour = rng.permutation(200)
    edges = sum(int(inst.dist(int(a), int(b))) for a, b in zip(tour, np.roll(tour, -1)))
    assert inst.tour_length(tour) == edges
