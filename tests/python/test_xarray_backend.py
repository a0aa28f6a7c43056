"""xr.open_dataset(path, engine="zarrkit") against engine="zarr" on datasets xarray wrote
(Zarr v2 and v3, consolidated or not, with groups): the same variables, coordinates,
attributes and values, lazily indexed."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

xr = pytest.importorskip("xarray")
pytest.importorskip("zarr")

from zarrkit.xarray_backend import ZarrkitBackendEntrypoint  # noqa: E402

ENGINE = ZarrkitBackendEntrypoint

# engine="zarr" on stores without consolidated metadata, and zarr-python on v3's consolidated
# metadata, warn; the warnings are theirs.
pytestmark = [
    pytest.mark.filterwarnings("ignore:Failed to open Zarr store with consolidated metadata"),
    pytest.mark.filterwarnings("ignore:Consolidated metadata is currently not part"),
]


def dataset() -> xr.Dataset:
    rng = np.random.default_rng(3)
    temperature = rng.standard_normal((6, 20, 30)).astype("f4")
    temperature[0, 0, :5] = np.nan
    counts = rng.integers(0, 1000, (20, 30)).astype("i4")
    packed = np.round(rng.uniform(270, 300, (6, 20)), 2)
    ds = xr.Dataset(
        {
            "temperature": (("time", "y", "x"), temperature, {"units": "K", "long_name": "air temperature"}),
            "counts": (("y", "x"), counts, {"note": "no fill value"}),
            "packed": (("time", "y"), packed),
            "station": (("y",), np.array([f"s{i}" for i in range(20)], dtype=object)),
        },
        coords={
            "time": pd.date_range("2026-01-01", periods=6, freq="D"),
            "y": np.arange(20) * 0.5,
            "x": np.linspace(-10, 10, 30),
        },
        attrs={"title": "a test dataset", "version": 3},
    )
    ds["packed"].encoding.update({"dtype": "int16", "scale_factor": 0.01, "add_offset": 285.0, "_FillValue": -9999})
    ds["temperature"].encoding.update({"chunks": (2, 10, 15)})
    return ds


@pytest.fixture(params=[(2, True), (2, False), (3, True), (3, False)], ids=["v2-consolidated", "v2", "v3-consolidated", "v3"])
def written(request, tmp_path):
    zarr_format, consolidated = request.param
    path = tmp_path / "data.zarr"
    ds = dataset()
    ds.to_zarr(path, zarr_format=zarr_format, consolidated=consolidated)
    return path, ds


def test_open_dataset_equals_the_zarr_engine(written):
    path, _ = written
    ours = xr.open_dataset(path, engine=ENGINE)
    theirs = xr.open_dataset(path, engine="zarr")
    xr.testing.assert_identical(ours, theirs)
    assert set(ours.data_vars) == {"temperature", "counts", "packed", "station"}
    assert ours["temperature"].encoding["chunks"] == (2, 10, 15)
    assert ours["temperature"].encoding["preferred_chunks"] == {"time": 2, "y": 10, "x": 15}


def test_without_cf_decoding_equals_the_zarr_engine(written):
    path, _ = written
    ours = xr.open_dataset(path, engine=ENGINE, mask_and_scale=False, decode_times=False)
    theirs = xr.open_dataset(path, engine="zarr", mask_and_scale=False, decode_times=False)
    xr.testing.assert_identical(ours, theirs)
    assert ours["packed"].dtype == np.int16


def test_values_are_read_lazily_by_every_kind_of_selection(written):
    path, ds = written
    ours = xr.open_dataset(path, engine=ENGINE)
    theirs = xr.open_dataset(path, engine="zarr")
    assert not ours["temperature"].variable._in_memory
    selections = [
        dict(time=1),
        dict(time=slice(1, 5, 2), x=slice(3, 20)),
        dict(y=[0, 4, 19], x=[1, 2, 29]),  # orthogonal
        dict(y=xr.DataArray([0, 4, 19], dims="p"), x=xr.DataArray([1, 2, 29], dims="p")),  # vectorized
    ]
    for sel in selections:
        xr.testing.assert_identical(ours["temperature"].isel(sel).load(), theirs["temperature"].isel(sel).load())
        xr.testing.assert_identical(ours["packed"].isel({k: v for k, v in sel.items() if k != "x"}).load(),
                                    theirs["packed"].isel({k: v for k, v in sel.items() if k != "x"}).load())
    np.testing.assert_array_equal(ours["counts"].values, ds["counts"].values)


def test_chunks_give_dask_variables(written):
    pytest.importorskip("dask")
    path, _ = written
    ours = xr.open_dataset(path, engine=ENGINE, chunks={})
    assert ours["temperature"].chunks == ((2, 2, 2), (10, 10), (15, 15))
    xr.testing.assert_identical(ours.load(), xr.open_dataset(path, engine="zarr").load())


def test_groups_and_datatree(tmp_path):
    path = tmp_path / "tree.zarr"
    root = xr.Dataset({"a": (("x",), np.arange(4.0))}, attrs={"level": "root"})
    child = xr.Dataset({"b": (("y",), np.arange(3, dtype="i8"))}, attrs={"level": "child"})
    grandchild = xr.Dataset({"c": (("z",), np.ones(2, dtype="f4"))})
    tree = xr.DataTree.from_dict({"/": root, "/child": child, "/child/grandchild": grandchild})
    tree.to_zarr(path, zarr_format=3)
    xr.testing.assert_identical(xr.open_dataset(path, engine=ENGINE, group="child"),
                                xr.open_dataset(path, engine="zarr", group="child"))
    ours, theirs = xr.open_datatree(path, engine=ENGINE), xr.open_datatree(path, engine="zarr")
    xr.testing.assert_identical(ours, theirs)
    sub_ours = xr.open_datatree(path, engine=ENGINE, group="child")
    xr.testing.assert_identical(sub_ours, xr.open_datatree(path, engine="zarr", group="child"))


def test_an_array_without_dimension_names_is_a_clear_error(tmp_path):
    import zarrkit

    path = tmp_path / "plain.zarr"
    group = zarrkit.open_group(str(path), mode="w")
    group.create_array("nameless", shape=(3,), dtype="f4")
    with pytest.raises(KeyError, match="nameless"):
        xr.open_dataset(path, engine=ENGINE)


def test_the_engine_is_registered_by_name():
    from importlib.metadata import entry_points

    names = {e.name: e.value for e in entry_points(group="xarray.backends")}
    if "zarrkit" not in names:
        pytest.skip("the package's metadata predates the entry point (reinstall the package)")
    assert names["zarrkit"] == "zarrkit.xarray_backend:ZarrkitBackendEntrypoint"
    assert "zarrkit" in xr.backends.list_engines()


gpu = pytest.mark.skipif(
    not __import__("zarrkit").config.gpu_available(),
    reason="no usable GPU for zarrkit here: the GPU variables of the xarray backend are tested on the GPU machine",
)


def _device_dataset(tmp_path, zarr_format):
    path = tmp_path / "data.zarr"
    ds = dataset().drop_vars("station")
    ds.to_zarr(path, zarr_format=zarr_format, consolidated=True)
    return path, ds


def _assert_device_equal(got, expected, name):
    import cupy

    assert isinstance(got, cupy.ndarray), name
    assert got.dtype == expected.dtype, name
    np.testing.assert_allclose(cupy.asnumpy(got), expected, rtol=1e-6, err_msg=name)


@gpu
@pytest.mark.parametrize("zarr_format", [2, 3])
def test_under_enable_gpu_variables_load_as_cupy(tmp_path, zarr_format):
    import zarrkit

    pytest.importorskip("cupy")
    path, _ = _device_dataset(tmp_path, zarr_format)
    expected = xr.open_dataset(path, engine="zarr").load()
    with zarrkit.config.enable_gpu():
        ds = xr.open_dataset(path, engine=ENGINE)
    # Read after the scope ended: the dataset keeps the memory it was opened with.
    loaded = ds.load()
    for name in ("temperature", "counts", "packed"):
        _assert_device_equal(loaded[name].data, expected[name].values, name)
        assert loaded[name].attrs == expected[name].attrs, name
    # Dimension coordinates are pandas indexes, on the host.
    assert isinstance(loaded["x"].data, np.ndarray)
    np.testing.assert_array_equal(loaded["time"].values, expected["time"].values)

    for selection in ({"time": 1}, {"time": [0, 3], "x": slice(2, 20, 3)}):
        got = ds["temperature"].isel(selection)
        _assert_device_equal(got.data, expected["temperature"].isel(selection).values, str(selection))
    points = {"y": xr.DataArray([1, 5, 7], dims="p"), "x": xr.DataArray([0, 9, 29], dims="p")}
    got = ds["counts"].isel(points)
    _assert_device_equal(got.data, expected["counts"].isel(points).values, "points")


@gpu
def test_under_enable_gpu_chunks_give_dask_variables_of_cupy_blocks(tmp_path):
    import zarrkit

    cupy = pytest.importorskip("cupy")
    pytest.importorskip("dask", reason="Dask is not installed: GPU_CHUNKS makes Dask arrays")
    from zarrkit.xarray_backend import GPU_CHUNKS
    path, _ = _device_dataset(tmp_path, 3)
    expected = xr.open_dataset(path, engine="zarr").load()
    with zarrkit.config.enable_gpu():
        ds = xr.open_dataset(path, engine=ENGINE, chunks={}, chunked_array_type=GPU_CHUNKS)
    temperature = ds["temperature"].data
    assert temperature.chunks == ((2,) * 3, (10,) * 2, (15,) * 2)
    block = temperature.blocks[1, 0, 1].compute()
    _assert_device_equal(block, expected["temperature"].values[2:4, :10, 15:], "block")
    assert isinstance(temperature._meta, cupy.ndarray)
    total = ds["counts"].sum().compute().data
    assert isinstance(total, cupy.ndarray)
    assert int(total.get()) == int(expected["counts"].sum())
    mean = ds["temperature"].mean(dim="time", skipna=True).compute()
    assert isinstance(mean.data, cupy.ndarray)
    np.testing.assert_allclose(cupy.asnumpy(mean.data), expected["temperature"].mean(dim="time").values,
                               rtol=1e-6, atol=1e-6)  # float32 sums in another order


@pytest.mark.parametrize("zarr_format", [2, 3])
def test_device_decoding_equals_xarrays_cf_decoding(tmp_path, zarr_format):
    # The masking and scaling done on the device for enable_gpu() datasets, run here on
    # NumPy blocks, against xarray's own decoding of the same variables.
    import zarrkit
    from zarrkit import _xarray_device
    from zarrkit.xarray_backend import ZarrkitDataStore, _dimensions_and_attributes

    ds = dataset().drop_vars("station")
    ds["packed"].values[2, 3] = np.nan
    ds["with_missing"] = (("y",), np.arange(20, dtype="f4"))
    ds["with_missing"].encoding.update({"dtype": "int16", "_FillValue": -1, "missing_value": -1})
    ds.to_zarr(tmp_path / "data.zarr", zarr_format=zarr_format, consolidated=True)
    expected = xr.open_dataset(tmp_path / "data.zarr", engine="zarr").load()
    group = zarrkit.open_group(tmp_path / "data.zarr", mode="r")
    store = ZarrkitDataStore(group)
    decoded_any = False
    for name, array in group.arrays():
        if name in ("time", "y", "x"):
            continue
        raw = store.open_store_variable(name, array)  # host variable, CF attributes still on it
        decoding = _xarray_device.device_decoding(raw.dims, array.dtype, dict(raw.attrs), True)
        assert decoding is not None, name
        got = decoding.apply(array[...])
        assert got.dtype == expected[name].dtype, name
        np.testing.assert_array_equal(got, expected[name].values, err_msg=name)
        assert "_FillValue" not in decoding.attrs and "scale_factor" not in decoding.attrs
        decoded_any |= bool(decoding.fill_values) or decoding.scale_factor is not None
    assert decoded_any
    # Times stay on the host.
    assert _xarray_device.device_decoding(("time",), np.dtype("i8"), {"units": "days since 2026-01-01"}, True) is None
